// Self-contained run files: eval and predict of a CSV run work from any working directory
// (relative data paths resolve where the run was trained), the binary reads the run file
// without changing it, and data that cannot be found is reported with where it was looked for
// and how to pass it.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>
#include <tuple>
#include <vector>

#include "cli_test_util.h"
#include "io/run_file.h"

namespace fs = std::filesystem;
using tn::test::run_binary_in;
using tn::test::scratch_path;
using tn::test::slurp;
using tn::test::write_text;

TEST_CASE("a CSV run evaluates and predicts from another directory, missing data says what was looked for") {
  const fs::path home = scratch_path("anywhere", "project"), elsewhere = scratch_path("anywhere", "elsewhere");
  fs::remove_all(home);
  fs::create_directories(home / "data");
  fs::create_directories(elsewhere);
  std::string csv = "a,b,label\n";
  for (int i = 0; i < 60; ++i)
    csv += std::to_string(i % 7 * 0.3) + "," + std::to_string(i % 5 * 0.2 - 0.5) + "," + (i % 7 > 3 ? "big" : "small") + "\n";
  write_text(home / "data" / "points.csv", csv);
  write_text(home / "points.yaml",
             "name: points\nswarm: {size: 3}\nmodel: {layers: [{units: 8, activation: tanh}, {units: 2}]}\n"
             "loss: cross_entropy\ndata:\n  source: {type: csv, path: data/points.csv, target: label}\n"
             "  split: {train: 0.75, test: 0.25}\n  normalize: standard\ntrain: {epochs: 3}\n");
  // Trained in the project directory with relative paths, as a user would.
  auto [rc, out] = run_binary_in(home, {"train", "points.yaml", "--out", "runs/points.h5", "-q"});
  REQUIRE_MESSAGE(rc == 0, out);
  const fs::path run = home / "runs" / "points.h5";
  CHECK(tn::read_run_file(run.string()).data.base_dir == home.string());
  const std::string before = slurp(run);

  std::tie(rc, out) = run_binary_in(elsewhere, {"eval", run.string(), "--json", "-q"});
  CHECK_MESSAGE(rc == 0, out);
  CHECK(out.find("\"split\": \"test\"") != std::string::npos);
  std::tie(rc, out) = run_binary_in(elsewhere, {"eval", run.string(), "--split", "all", "--combine", "vote", "-q"});
  CHECK_MESSAGE(rc == 0, out);
  std::tie(rc, out) = run_binary_in(elsewhere, {"predict", run.string(), "--input", (home / "data" / "points.csv").string(), "-q"});
  CHECK_MESSAGE(rc == 0, out);
  CHECK(out.rfind("row,prediction,p_big,p_small", 0) == 0);
  CHECK(slurp(run) == before);  // neither changed the run file
  CHECK(fs::directory_iterator(elsewhere) == fs::directory_iterator());  // nor wrote anything here

  // The data moved away: the message names the key, the places looked in and --data.
  fs::rename(home / "data", home / "moved");
  std::tie(rc, out) = run_binary_in(elsewhere, {"eval", run.string()});
  CHECK(rc == 2);
  for (const std::string& part : std::vector<std::string>{"data.source.path: file not found: 'data/points.csv'", "looked in '" + home.string() + "'",
                                 "the working directory", "relative to '" + home.string() + "' where the run was trained",
                                 "--data PATH"})
    CHECK_MESSAGE(out.find(part) != std::string::npos, part << "\n" << out);
  // ... and --data evaluates it where it is now.
  std::tie(rc, out) = run_binary_in(elsewhere, {"eval", run.string(), "--data", (home / "moved" / "points.csv").string(), "-q"});
  CHECK_MESSAGE(rc == 0, out);
  CHECK(slurp(run) == before);
  fs::remove_all(home);
}
