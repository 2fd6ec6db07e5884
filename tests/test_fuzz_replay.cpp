// Every fuzz input kept in the repository, replayed through its harness (tests/fuzz/harnesses.h)
// in the ordinary suite: the seed corpus (tests/fuzz/corpus/<harness>/) and every input that
// once crashed a reader (tests/fuzz/regressions/<harness>/). Each must be read or rejected
// with a user error; scripts/fuzz.sh runs the same functions under libFuzzer.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include "fuzz/harnesses.h"

namespace fs = std::filesystem;

namespace {

// Inputs of open findings (a reader still fails on them), by path under tests/fuzz/, with
// what goes wrong. The replay skips them with a "KNOWN FINDING" message; the entry goes when
// the reader is fixed, and the input stays as a regression test.
const std::map<std::string, std::string> kKnownFindings = {
};

std::vector<fs::path> inputs_in(const fs::path& dir) {
  std::vector<fs::path> files;
  if (fs::is_directory(dir))
    for (const auto& e : fs::directory_iterator(dir))
      if (e.is_regular_file() && e.path().filename() != "README.md") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}

std::string bytes_of(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void replay(const std::string& name) {
  const auto& all = tn::fuzz::harnesses();
  const auto h = std::find_if(all.begin(), all.end(), [&](const auto& x) { return x.name == name; });
  REQUIRE(h != all.end());
  const fs::path root = fs::path(TURBANET_SOURCE_DIR) / "tests" / "fuzz";
  int corpus = 0;
  for (const char* kind : {"corpus", "regressions"}) {
    for (const fs::path& file : inputs_in(root / kind / name)) {
      const std::string rel = fs::relative(file, root).generic_string();
      if (const auto known = kKnownFindings.find(rel); known != kKnownFindings.end()) {
        MESSAGE("KNOWN FINDING: " << rel << ": " << known->second);
        continue;
      }
      INFO("input: tests/fuzz/" << rel);
      const std::string bytes = bytes_of(file);
      CHECK_NOTHROW(h->run(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()));
      corpus += std::string(kind) == "corpus";
    }
  }
  CHECK_MESSAGE(corpus > 0, "tests/fuzz/corpus/" << name << " holds no seed inputs");
}

}  // namespace

TEST_CASE("fuzz inputs replay: config") { replay("config"); }
TEST_CASE("fuzz inputs replay: csv") { replay("csv"); }
TEST_CASE("fuzz inputs replay: npy") { replay("npy"); }
TEST_CASE("fuzz inputs replay: idx") { replay("idx"); }
TEST_CASE("fuzz inputs replay: run_file") { replay("run_file"); }

TEST_CASE("fuzz inputs replay: every harness has a test case") {
  CHECK(tn::fuzz::harnesses().size() == 5);
}
