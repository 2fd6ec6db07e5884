// Every file we write reads back whole with h5py, not only with our own reader: the run file
// of every shipped config (with fewer epochs and members), the forecast files of the sequence
// configs, and the run file of a source with 9000 features (string datasets of more than 8192
// entries once held the writer's pointers).
#include <doctest/doctest.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "cli_test_util.h"
#include "eval_test_util.h"
#include "python_test_util.h"

using namespace evaltest;

TEST_CASE("h5py reads every dataset of the run file of every shipped config and of a 9000-feature source") {
  const std::string python = tn::test::python_with_h5py();
  if (python.empty()) {
    MESSAGE("SKIPPED: no python3 with h5py (scripts/install-deps.sh installs python3-h5py)");
    return;
  }
  // Fewer epochs and members; the sequence configs keep more than 13 series (over 8192 split times).
  const std::map<std::string, std::vector<std::string>> reduced = {
      {"fashion-mnist-ensemble", {"swarm.size=2", "train.epochs=1", "train.batch_size=128"}},
      {"fashion-mnist-quick", {"swarm.size=2", "train.batch_size=128"}},
      {"iris", {"train.epochs=3"}},
      {"random-walk", {"train.epochs=1"}},
      {"spirals", {"train.epochs=3"}},
      {"spirals-large", {"swarm.size=4", "train.epochs=1"}},
      {"spirals-small", {"swarm.size=4", "train.epochs=2"}},
      {"spirals-halving", {"train.epochs=5", "search.rungs=[2, 3]"}},
      {"spirals-pbt", {"train.epochs=5", "search.every_epochs=2"}},
      {"spirals-widths", {"swarm.size=21", "train.epochs=2"}},
      {"stocks-lstm", {"swarm.size=20", "data.source.series=20", "train.epochs=1"}}};
  std::vector<std::string> files;
  for (const auto& [name, path] : tn::test::shipped_configs(reduced)) {
    const fs::path run = tn::test::train_quietly(name, path, reduced.at(name), scratch("every-" + name + ".h5"));
    files.push_back(run.string());
    if (name != "random-walk" && name != "stocks-lstm") continue;
    // The sequence runs' forecast files, from their own series as new history.
    tn::DataGenerateOptions g;
    g.config_path = path.string();
    g.set = reduced.at(name);
    g.out = scratch("every-" + name + ".csv").string();
    g.force = true;
    g.verbosity = tn::Verbosity::Quiet;
    REQUIRE(tn::run_data_generate(g) == tn::kExitOk);
    tn::PredictOptions p;
    p.run_path = run.string();
    p.input = g.out;
    p.ids = {"close"};
    p.out = scratch("every-" + name + "-forecast.h5").string();
    p.force = true;
    p.verbosity = tn::Verbosity::Quiet;
    REQUIRE_MESSAGE(tn::run_predict(p) == tn::kExitOk, name);
    files.push_back(*p.out);
  }
  // A CSV source with 9000 feature columns.
  std::string csv = "label";
  for (int j = 0; j < 9000; ++j) {
    csv += ",f";
    csv += std::to_string(j);
  }
  csv += "\n";
  for (int i = 0; i < 12; ++i) {
    const char label = i % 2 ? '1' : '0';
    csv += label;
    for (int j = 0; j < 9000; ++j) {
      csv += ',';
      csv += j == 0 ? label : '0';
    }
    csv += "\n";
  }
  const fs::path wide = write_file("wide.csv", csv);
  files.push_back(train_run("wide", "name: wide\nswarm: {size: 2}\nmodel:\n  layers:\n    - {type: dense, units: 2}\n"
                                    "loss: cross_entropy\ndata:\n  source: {type: csv, path: " + wide.string() +
                                    ", target: label}\n  split: {train: 0.5, val: 0.0, test: 0.5}\n  normalize: none\n"
                                    "train: {epochs: 1, batch_size: 4}\n").string());
  const std::string out = tn::test::read_all_with_h5py(python, files);
  MESSAGE(out);
  for (const std::string& f : files) CHECK_MESSAGE(out.find(" " + f + "\n") != std::string::npos, f << ": " << out);
  CHECK(out.find("Error") == std::string::npos);
}
