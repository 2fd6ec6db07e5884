// The README is a front page and the manual lives in docs/: every link between them resolves
// (the file exists, and a #anchor names a heading of that file, slugged as GitHub does), and
// the README stays a page (at most 250 lines).
#include <doctest/doctest.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

std::vector<std::string> lines_of(const fs::path& file) {
  std::ifstream in(file);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// GitHub's heading anchor: lower case, characters other than letters, digits, '-', '_' and
// spaces dropped (bytes >= 0x80 kept), spaces turned into '-'.
std::string slug(const std::string& heading) {
  std::string out;
  for (const unsigned char c : heading) {
    if (c >= 0x80 || std::isalnum(c) || c == '-' || c == '_') out += static_cast<char>(std::tolower(c));
    else if (c == ' ') out += '-';
  }
  return out;
}

// The anchors of a Markdown file's headings (outside fenced code), with GitHub's -1, -2, ...
// for repeated headings.
std::set<std::string> anchors_of(const fs::path& file) {
  std::set<std::string> anchors;
  bool fenced = false;
  const std::regex heading(R"(^#{1,6} (.*)$)");
  for (const std::string& line : lines_of(file)) {
    if (line.rfind("```", 0) == 0) fenced = !fenced;
    std::smatch m;
    if (fenced || !std::regex_match(line, m, heading)) continue;
    std::string a = slug(m[1]);
    for (int n = 1; anchors.count(a); ++n) a = slug(m[1]) + "-" + std::to_string(n);
    anchors.insert(a);
  }
  return anchors;
}

}  // namespace

TEST_CASE("docs: every link of README.md and docs/*.md resolves to a file and a heading") {
  const fs::path root(TURBANET_SOURCE_DIR);
  std::vector<fs::path> pages = {root / "README.md"};
  for (const auto& e : fs::directory_iterator(root / "docs"))
    if (e.path().extension() == ".md") pages.push_back(e.path());
  const std::regex link(R"(\]\(([^)\s]+)\))");
  int links = 0;
  for (const fs::path& page : pages) {
    const std::vector<std::string> lines = lines_of(page);
    bool fenced = false;
    for (std::size_t i = 0; i < lines.size(); ++i) {
      if (lines[i].rfind("```", 0) == 0) fenced = !fenced;
      if (fenced) continue;
      for (std::sregex_iterator it(lines[i].begin(), lines[i].end(), link), end; it != end; ++it) {
        const std::string target = (*it)[1];
        if (target.find("://") != std::string::npos || target.rfind("mailto:", 0) == 0) continue;
        ++links;
        const std::size_t hash = target.find('#');
        const std::string file_part = target.substr(0, hash);
        const fs::path file = file_part.empty() ? page : page.parent_path() / file_part;
        const std::string where = fs::relative(page, root).string() + ":" + std::to_string(i + 1) + ": " + target;
        if (!fs::exists(file)) {
          FAIL_CHECK(where << ": no such file");
          continue;
        }
        if (hash == std::string::npos) continue;
        CHECK_MESSAGE(file.extension() == ".md", where << ": an anchor into a file that is not Markdown");
        CHECK_MESSAGE(anchors_of(file).count(target.substr(hash + 1)), where << ": no such heading in " << file.filename());
      }
    }
  }
  MESSAGE(links << " links in " << pages.size() << " pages checked");
  CHECK(links > 50);
}

TEST_CASE("docs: the README is a front page of at most 250 lines") {
  const std::vector<std::string> lines = lines_of(fs::path(TURBANET_SOURCE_DIR) / "README.md");
  CHECK(lines.size() <= 250);
  CHECK(lines.size() > 20);
}
