// Sequence data end to end: `turbanet data generate` writes random_walk (and the other
// generators) as CSV that reads back to exactly the same prepared data; CSV tables with
// errors; training, the run file's sequence records, eval, and predict without its history file
// (forecasting itself: test_forecast_cli.cpp).
#include <doctest/doctest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli/commands/commands.h"
#include "config/config.h"
#include "data/prepare.h"
#include "data/sources.h"
#include "io/run_file.h"
#include "eval_test_util.h"
#include "source_test_util.h"

using namespace tn;
using tn::test::data_error;
namespace fs = std::filesystem;

namespace {

fs::path scratch() {
  const fs::path d = fs::temp_directory_path() / ("turbanet-seq-" + std::to_string(::getpid()));
  fs::create_directories(d);
  return d;
}

std::string read_text(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

const char* const kModel =
    "swarm: {size: 3}\nmodel: {layers: [{type: dense, units: 8, activation: tanh}, {units: 1}]}\n"
    "loss: mse\noptimizer: {type: adam, lr: 0.01}\ntrain: {epochs: 3, batch_size: 16}\n";

// The data keys after `source:` shared by the generator and the csv configs.
const char* const kRest =
    "  split: {train: 0.7, val: 0.1, test: 0.2}\n  per_member: {group_by: ticker}\n"
    "  normalize: standard\n  normalize_per_member: true\n"
    "  sequence: {window: 8, horizon: 2, stride: 3, target: close, time: date}\n";

void check_same(const SplitData& a, const SplitData& b) {
  CHECK(a.n == b.n);
  CHECK(a.X == b.X);
  CHECK(a.y == b.y);
  CHECK(a.rows == b.rows);
  CHECK(a.group == b.group);
  CHECK(a.time == b.time);
}

DataGenerateOptions generate_options(const fs::path& config, const fs::path& out) {
  DataGenerateOptions o;
  o.config_path = config.string();
  o.out = out.string();
  o.verbosity = Verbosity::Quiet;
  return o;
}

}  // namespace

TEST_CASE("data generate: random_walk CSV reads back to exactly the same prepared data") {
  const fs::path dir = scratch();
  const fs::path gen = dir / "gen.yaml", csv = dir / "walk.csv";
  std::ofstream(gen) << kModel << "data:\n  source: {type: random_walk, series: 3, length: 120, seed: 5}\n" << kRest;
  REQUIRE(run_data_generate(generate_options(gen, csv)) == kExitOk);
  const std::string text = read_text(csv);
  CHECK(text.rfind("date,ticker,close\n2020-01-01,S000,", 0) == 0);
  CHECK(std::count(text.begin(), text.end(), '\n') == 361);
  for (const auto& e : fs::directory_iterator(dir)) CHECK(e.path().filename().string().find(".tmp") == std::string::npos);

  const Config a = load_config(gen.string());
  const Config b = parse_config(
      std::string(kModel) + "data:\n  source: {type: csv, path: " + csv.string() + "}\n" + kRest, "csv.yaml");
  const PreparedData p = prepare_data(load_dataset(a.data, false), a.data);
  const PreparedData q = prepare_data(load_dataset(b.data, false), b.data);
  REQUIRE(p.train.n > 0);
  check_same(p.train, q.train);
  check_same(p.val, q.val);
  check_same(p.test, q.test);
  CHECK(p.mean == q.mean);
  CHECK(p.std == q.std);
  CHECK(p.target_mean == q.target_mean);
  CHECK(p.target_std == q.target_std);
  CHECK(p.group_names == q.group_names);

  // The file's rows shuffled: sorting by the date column gives the same windows.
  std::istringstream lines(text);
  std::string header, line;
  std::getline(lines, header);
  std::vector<std::string> rows;
  while (std::getline(lines, line)) rows.push_back(line);
  std::reverse(rows.begin(), rows.end());
  std::ofstream shuffled(dir / "reversed.csv");
  shuffled << header << "\n";
  for (const std::string& r : rows) shuffled << r << "\n";
  shuffled.close();
  const Config c = parse_config(std::string(kModel) + "data:\n  source: {type: csv, path: " + (dir / "reversed.csv").string() + "}\n" + kRest, "rev.yaml");
  const PreparedData r = prepare_data(load_dataset(c.data, false), c.data);
  CHECK(r.train.X == p.train.X);
  CHECK(r.test.y == p.test.y);
  CHECK(r.mean == p.mean);
  fs::remove_all(dir);
}

TEST_CASE("data generate: other generators, atomic replacement and errors") {
  const fs::path dir = scratch();
  const fs::path cfg = dir / "spirals.yaml", out = dir / "spirals.csv";
  std::ofstream(cfg) << "model: {layers: [{units: 2}]}\ndata: {source: {type: spirals, n: 40, seed: 3}}\n";
  std::ofstream(out) << "old contents\n";
  CHECK(run_data_generate(generate_options(cfg, out)) == kExitUsage);  // exists: needs --force
  CHECK(read_text(out) == "old contents\n");
  DataGenerateOptions replace = generate_options(cfg, out);
  replace.force = true;
  REQUIRE(run_data_generate(replace) == kExitOk);
  CHECK(read_text(out).rfind("x,y,label\n", 0) == 0);
  SourceConfig s;
  s.type = "spirals";
  s.n = 40;
  s.seed = 3;
  const Dataset want = make_spirals(s);
  s = {};
  s.type = "csv";
  s.path = out.string();
  s.target = "label";
  const Dataset got = load_csv(s, true);
  CHECK(got.X == want.X);
  CHECK(got.y == want.y);

  // A file source is not generated; the existing file is left alone.
  const fs::path csv_cfg = dir / "csv.yaml";
  std::ofstream(csv_cfg) << "model: {layers: [{units: 2}]}\ndata: {source: {type: csv, path: " << out.string()
                         << ", target: label}}\n";
  const std::string before = read_text(out);
  CHECK(run_data_generate(generate_options(csv_cfg, out)) == kExitUsage);
  CHECK(read_text(out) == before);
  CHECK(run_data_generate(generate_options(cfg, dir / "x.txt")) == kExitUsage);
  CHECK(run_data_generate(generate_options(dir / "missing.yaml", out)) == kExitUsage);
  CHECK(run_data_generate(generate_options(cfg, dir / "new-dir" / "x.csv")) == kExitOk);  // directories are made
  std::ofstream(dir / "plain") << "a file, not a directory";
  CHECK(run_data_generate(generate_options(cfg, dir / "plain" / "x.csv")) == kExitIo);
  fs::remove_all(dir);
}

TEST_CASE("sequence csv tables: positioned errors") {
  const fs::path dir = scratch();
  const auto load = [&](const std::string& text, const std::string& sequence, bool group = true) {
    std::ofstream(dir / "t.csv") << text;
    const Config c = parse_config(std::string(kModel) + "data:\n  source: {type: csv, path: " + (dir / "t.csv").string() +
                                      "}\n" + (group ? "  per_member: {group_by: ticker}\n" : "") +
                                      "  sequence: " + sequence + "\n",
                                  "t.yaml");
    return data_error([&] { prepare_data(load_dataset(c.data, false), c.data); });
  };
  const std::string f = (dir / "t.csv").string();
  CHECK(load("date,ticker,close\n1,A,1\n2,A,nan\n3,A,3\n", "{window: 1, target: close}")
            .find(f + ":3: column 'close': NaN is not allowed") != std::string::npos);
  CHECK(load("date,ticker,close\n1,A,1\n", "{window: 1, target: price}")
            .find(f + ":1: data.sequence.target: column 'price' is not in the header") != std::string::npos);
  CHECK(load("date,ticker,close\n1,A,1\n", "{window: 1, target: close, features: [close, volume]}")
            .find(f + ":1: data.sequence.features: column 'volume' is not in the header") != std::string::npos);
  CHECK(load("date,ticker,close\n1,A,1\n,A,2\n", "{window: 1, target: close, time: date}")
            .find(f + ":3: column 'date': the time (data.sequence.time) is empty") != std::string::npos);
  CHECK(load("date,ticker,close\n1,A,1\n2,B,1\n2,A,1\n1,A,3\n", "{window: 1, target: close, time: date}")
            .find(f + ":5: data.sequence.time: series 'A' has two rows at time '1' (lines 2 and 5)") != std::string::npos);
  CHECK(load("date,ticker,close\n1,A,1\n2,A,2\n3,B,1\n", "{window: 2, target: close}")
            .find("data.sequence: series 'A' of " + f + " has 2 time points, so its train range (split.train 1) "
                  "has 2; one window needs window + horizon = 3 points") != std::string::npos);
  // Without group_by the table is one series: 3 points hold one window of 2 + 1.
  CHECK(load("date,ticker,close\n1,A,1\n2,A,2\n3,B,1\n", "{window: 2, target: close}", false) == "<no error>");
  fs::remove_all(dir);
}

TEST_CASE("sequence training: run file records, eval on own splits, predict without history") {
  const fs::path dir = scratch();
  const fs::path cfg = dir / "walk.yaml", out = dir / "walk.h5";
  std::ofstream(cfg) << kModel << "data:\n  source: {type: random_walk, series: 3, length: 120, seed: 5}\n" << kRest;
  TrainOptions o;
  o.config_path = cfg.string();
  o.out = out.string();
  o.verbosity = Verbosity::Quiet;
  REQUIRE(run_train(o) == kExitOk);
  const RunFile r = read_run_file(out.string());
  CHECK(r.data.seq_len == 8);
  CHECK(r.data.step_features == 1);
  CHECK(r.data.target == "close");
  CHECK(r.data.feature_names == std::vector<std::string>{"close"});
  CHECK(r.normalization.mean.shape == std::vector<std::uint64_t>{3, 1});
  CHECK(r.normalization.target_mean.shape == std::vector<std::uint64_t>{3});
  CHECK(r.normalization.target_std.data.size() == 3);
  REQUIRE(!r.splits.empty());
  const DataSplit& train = r.splits.front();
  CHECK(train.X.shape.size() == 3);
  CHECK(train.X.shape[1] == 8);
  CHECK(train.time.size() == train.rows.size());
  CHECK(parse_config(r.config_yaml, "stored").data.sequence.window == 8);

  EvalOptions e;
  e.run_path = out.string();
  e.verbosity = Verbosity::Quiet;
  e.out = (dir / "eval.json").string();
  CHECK(run_eval(e) == kExitOk);
  PredictOptions p;
  p.run_path = out.string();
  p.input = (dir / "walk.csv").string();  // not written
  p.verbosity = Verbosity::Quiet;
  const auto [rc, err] = evaltest::exit_and_stderr([&] { return run_predict(p); });
  CHECK(rc == kExitUsage);
  CHECK(err.find("file not found: '" + p.input + "' (the new history to read") != std::string::npos);
  fs::remove_all(dir);
}
