// The source tree's layers point one way: a file under src/<layer>/ includes only its own
// layer and layers below it (docs/architecture.md). Reads the includes of every source file.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <string>

namespace fs = std::filesystem;

TEST_CASE("layers: no source file includes a layer above its own") {
  // Bottom to top; layers of the same rank (eval, io) do not include each other either.
  const std::map<std::string, int> rank = {{"math", 0}, {"util", 0}, {"swarm", 1}, {"backend", 2}, {"eval", 3},
                                           {"io", 3},   {"config", 4}, {"data", 5}, {"model", 6}, {"train", 7},
                                           {"run", 8},  {"export", 9}, {"cli", 10}};
  const fs::path src = fs::path(TURBANET_SOURCE_DIR) / "src";
  const std::regex include(R"(#include\s+"([a-z_]+)/)");
  int files = 0, includes = 0;
  for (const auto& e : fs::recursive_directory_iterator(src)) {
    if (!e.is_regular_file()) continue;
    const std::string layer = fs::relative(e.path(), src).begin()->string();
    REQUIRE_MESSAGE(rank.count(layer), "src/" << layer << "/ is not a known layer: add it to this test and docs/architecture.md");
    ++files;
    std::ifstream in(e.path());
    for (std::string line; std::getline(in, line);) {
      std::smatch m;
      if (!std::regex_search(line, m, include) || m[1] == layer || !rank.count(m[1])) continue;
      ++includes;
      CHECK_MESSAGE(rank.at(m[1]) < rank.at(layer),
                    fs::relative(e.path(), src).string() << " (" << layer << ") includes " << m[1] << "/: a layer at or above its own");
    }
  }
  MESSAGE(files << " files, " << includes << " includes across layers checked");
  CHECK(files > 100);
}

TEST_CASE("test names: every test case runs under ctest (no semicolon in a name)") {
  // doctest_discover_tests registers each case under its name in a CMake list: a ';' splits the
  // name in two, and each half runs no test case at all, which passes. Reads every test file.
  const std::regex test_case(R"rx(TEST_CASE\("((?:[^"\\]|\\.)*)"\))rx");
  int cases = 0;
  for (const auto& e : fs::directory_iterator(fs::path(TURBANET_SOURCE_DIR) / "tests")) {
    if (e.path().extension() != ".cpp") continue;
    std::ifstream in(e.path());
    for (std::string line; std::getline(in, line);) {
      std::smatch m;
      if (!std::regex_search(line, m, test_case)) continue;
      ++cases;
      CHECK_MESSAGE(m[1].str().find(';') == std::string::npos,
                    e.path().filename().string() << ": \"" << m[1].str() << "\" has a ';', which ctest splits into two "
                    "names that run nothing; use a comma");
    }
  }
  CHECK(cases > 300);
}
