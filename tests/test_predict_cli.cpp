// `turbanet predict` called as a function, and the uncertainty of a bootstrapped spirals
// swarm: higher predictive entropy near the class boundary than far from it.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <numeric>

#include "config/config.h"
#include "data/prepare.h"
#include "cli_test_util.h"
#include "eval_test_util.h"
#include "io/prediction_file.h"
#include "io/run_file.h"

using namespace tn;
using namespace evaltest;

namespace {

// Spirals re-encoded as a CSV with named classes and features on very different scales, so
// the stored standardization matters.
fs::path scaled_spirals_csv() {
  SourceConfig src;
  src.n = 160;
  const Dataset d = make_spirals(src);
  std::string csv = "a,cls,b\n";
  for (int i = 0; i < d.n; ++i)
    csv += fmt::format("{:.9g},{},{:.9g}\n", 100 * d.X[2 * i] + 50, d.y[i] > 0 ? "right" : "left", 0.01 * d.X[2 * i + 1]);
  return write_file("scaled.csv", csv);
}

std::string scaled_yaml(const fs::path& csv) {
  return "name: scaled\nseed: 5\nswarm: {size: 4}\nmodel:\n  layers:\n    - {type: dense, units: 16, activation: tanh}\n"
         "    - {type: dense, units: 2}\nloss: cross_entropy\noptimizer: {type: adam, lr: 0.02}\n"
         "data:\n  source: {type: csv, path: " + csv.string() + ", features: [a, b], target: cls}\n"
         "  split: {train: 0.75, test: 0.25, seed: 2}\n  per_member: bootstrap\n  normalize: standard\n"
         "train: {epochs: 30, batch_size: 32}\n";
}

PredictOptions predict_opts(const fs::path& run, const fs::path& input) {
  PredictOptions o;
  o.run_path = run.string();
  o.input = input.string();
  o.verbosity = Verbosity::Quiet;
  return o;
}

}  // namespace

TEST_CASE("predict: raw inputs are preprocessed with the stored statistics, by column name") {
  const fs::path csv = scaled_spirals_csv();
  const fs::path run = train_run("scaled", scaled_yaml(csv));
  const RunFile r = read_run_file(run.string());
  const Predictions* test = r.find_predictions("test");
  REQUIRE(test != nullptr);
  // The raw test rows, columns reordered and without the target.
  const Config cfg = parse_config(r.config_yaml, "run");
  const Dataset raw = load_dataset(cfg.data, true);
  const PreparedData d = prepare_data(raw, cfg.data);
  std::string input = "b,a\n";
  for (int row : d.test.rows)
    input += fmt::format("{:.9g},{:.9g}\n", raw.X[2 * row + 1], raw.X[2 * row]);
  const fs::path in = write_file("raw-test.csv", input);

  PredictOptions o = predict_opts(run, in);
  o.out = scratch("pred.h5").string();
  REQUIRE(run_predict(o) == kExitOk);
  const PredictionFile p = read_prediction_file(*o.out);
  CHECK(p.class_names == std::vector<std::string>{"left", "right"});
  CHECK(p.feature_names == std::vector<std::string>{"a", "b"});
  REQUIRE(p.members.shape == test->members.shape);
  for (std::size_t i = 0; i < p.members.data.size(); ++i)
    CHECK(p.members.data[i] == doctest::Approx(test->members.data[i]).epsilon(1e-5));
  const int N = d.test.n;
  REQUIRE(p.ensemble.shape == std::vector<std::uint64_t>{static_cast<std::uint64_t>(N), 2});
  for (int i = 0; i < N; ++i) {
    double mean = 0;
    for (int s = 0; s < 4; ++s) mean += p.members.data[(s * N + i) * 2 + 1] / 4;
    CHECK(p.ensemble.data[2 * i + 1] == doctest::Approx(mean).epsilon(1e-6));
    CHECK(p.label[i] == (p.ensemble.data[2 * i + 1] > p.ensemble.data[2 * i] ? 1 : 0));
    CHECK(p.entropy.data[i] >= p.mutual_information.data[i]);
  }

  o.out = scratch("pred.csv").string();
  REQUIRE(run_predict(o) == kExitOk);
  const std::string text = slurp(*o.out);
  std::vector<std::string> lines;
  for (std::size_t start = 0, end; (end = text.find('\n', start)) != std::string::npos; start = end + 1)
    lines.push_back(text.substr(start, end - start));
  REQUIRE(lines.size() == static_cast<std::size_t>(N) + 1);
  CHECK(lines[0] == "row,prediction,p_left,p_right,entropy,mutual_information,disagreement,"
                    "member_0,member_1,member_2,member_3");
  for (int i = 0; i < N; ++i) {
    const std::vector<std::string> cells = tn::test::csv_cells(lines[i + 1]);
    REQUIRE(cells.size() == 11);
    CHECK(cells[1] == p.class_names[p.label[i]]);
    CHECK(std::stod(cells[2]) + std::stod(cells[3]) == doctest::Approx(1.0).epsilon(1e-5));
  }

  o.out.reset();  // CSV on stdout, and the training CSV is not needed
  fs::rename(csv, scratch("scaled-moved.csv"));
  int rc = -1;
  CHECK(capture(1, [&] { rc = run_predict(o); }) == text);
  CHECK(rc == kExitOk);
}

TEST_CASE("eval notices that the training data changed since the run") {
  const fs::path csv = scaled_spirals_csv();
  const fs::path run = train_run("changed", scaled_yaml(csv));
  std::string text = slurp(csv);
  text.replace(text.find('\n') + 1, 1, "9");  // the first sample's feature a
  std::ofstream(csv) << text;
  const auto [rc, err] = exit_and_stderr([&] { return run_eval(eval_opts(run)); });
  CHECK(rc == kExitUsage);
  CHECK_MESSAGE(err.find("normalization statistics of " + csv.string() + " differ from those stored") != std::string::npos, err);
}

TEST_CASE("predict: bad input exits 2 with a clear message") {
  const fs::path run = train_run("predict-bad", spirals_yaml(2, 3));
  PredictOptions o = predict_opts(run, write_file("points.csv", "x,y\n0.1,0.2\n"));
  std::string want;
  SUBCASE("a missing feature column") {
    o.input = write_file("no-y.csv", "x,z\n0.1,0.2\n").string();
    want = "column 'y' is not in the header";
  }
  SUBCASE("a value that is not a number") {
    o.input = write_file("text.csv", "x,y\n0.1,abc\n").string();
    want = "'abc' is not a number";
  }
  SUBCASE("an unsupported output") {
    o.out = scratch("p.txt").string();
    want = "must end in .csv or .h5";
  }
  SUBCASE("an unknown combination rule") {
    o.combine = "max";
    want = "unknown rule 'max'";
  }
  const auto [rc, err] = exit_and_stderr([&] { return run_predict(o); });
  CHECK(rc == kExitUsage);
  CHECK_MESSAGE(err.find(want) != std::string::npos, err);
}

TEST_CASE("a regression swarm: eval reports MSE of the mean, predict the mean and spread, vote is refused") {
  std::string csv = "x,t\n";
  for (int i = 0; i < 80; ++i) csv += fmt::format("{:.6g},{:.6g}\n", i / 40.0 - 1, std::sin(3.0 * (i / 40.0 - 1)));
  const fs::path data = write_file("sine.csv", csv);
  const fs::path run = train_run("sine", "seed: 1\nswarm: {size: 3}\nmodel:\n  layers:\n"
      "    - {type: dense, units: 8, activation: tanh}\n    - {type: dense, units: 1}\nloss: mse\n"
      "optimizer: {type: adam, lr: 0.02}\ndata:\n  source: {type: csv, path: " + data.string() +
      ", target: t}\n  split: {train: 0.75, test: 0.25}\ntrain: {epochs: 30, batch_size: 16}\n");
  int rc = -1;
  EvalOptions eo = eval_opts(run);
  eo.json = true;
  const std::string out = capture(1, [&] { rc = run_eval(eo); });
  REQUIRE(rc == kExitOk);
  const RunFile r = read_run_file(run.string());
  const Predictions* p = r.find_predictions("test");
  REQUIRE(p != nullptr);
  const int N = 20;
  double sq = 0;
  for (int i = 0; i < N; ++i) {
    double mean = 0;
    for (int s = 0; s < 3; ++s) mean += p->members.data[s * N + i] / 3.0;
    sq += (mean - p->targets.data[i]) * (mean - p->targets.data[i]);
  }
  const nlohmann::json j = nlohmann::json::parse(out);
  CHECK(j["combine"] == "mean");
  CHECK(j["metrics"].get<std::vector<std::string>>() == std::vector<std::string>{"mse", "rmse", "mae", "r2"});
  CHECK(j["ensemble"]["mse"].get<double>() == doctest::Approx(sq / N).epsilon(1e-5));
  CHECK(j["ensemble"]["rmse"].get<double>() == doctest::Approx(std::sqrt(sq / N)).epsilon(1e-5));

  eo.combine = "vote";
  const auto [vote_rc, err] = exit_and_stderr([&] { return run_eval(eo); });
  CHECK(vote_rc == kExitUsage);
  CHECK(err.find("--combine vote needs a classification run") != std::string::npos);

  PredictOptions po = predict_opts(run, write_file("sine-in.csv", "x\n0.5\n-0.25\n"));
  const std::string table = capture(1, [&] { rc = run_predict(po); });
  CHECK(rc == kExitOk);
  CHECK(table.rfind("row,prediction,std,member_0,member_1,member_2\n0,", 0) == 0);
  const std::vector<std::string> cells = tn::test::csv_cells(table.substr(table.find('\n') + 1, table.find('\n', table.find('\n') + 1) - table.find('\n') - 1));
  REQUIRE(cells.size() == 6);
  const double m0 = std::stod(cells[3]), m1 = std::stod(cells[4]), m2 = std::stod(cells[5]), mean = (m0 + m1 + m2) / 3;
  CHECK(std::stod(cells[1]) == doctest::Approx(mean).epsilon(1e-6));
  CHECK(std::stod(cells[2]) == doctest::Approx(std::sqrt(((m0 - mean) * (m0 - mean) + (m1 - mean) * (m1 - mean) +
                                                          (m2 - mean) * (m2 - mean)) / 3)).epsilon(1e-4));
}

TEST_CASE("a bootstrapped spirals swarm is more uncertain near the class boundary") {
  const fs::path run = train_run("boundary", spirals_yaml(16, 150));
  EvalOptions o = eval_opts(run);
  o.split = "all";
  o.save = "all";
  int rc = -1;
  capture(1, [&] { rc = run_eval(o); });
  REQUIRE(rc == kExitOk);
  const RunFile r = read_run_file(run.string());
  const EvalRecord* e = nullptr;
  for (const EvalRecord& x : r.evals) e = x.split == "all" ? &x : e;
  REQUIRE(e != nullptr);
  // The same samples in the same order (train, val, test) and each one's distance to the
  // nearest sample of the other class.
  const Config cfg = parse_config(r.config_yaml, "run");
  const PreparedData d = prepare_data(load_dataset(cfg.data, true), cfg.data);
  std::vector<float> X, y;
  for (const SplitData* s : {&d.train, &d.val, &d.test}) {
    X.insert(X.end(), s->X.begin(), s->X.end());
    y.insert(y.end(), s->y.begin(), s->y.end());
  }
  const int N = static_cast<int>(y.size());
  REQUIRE(e->entropy.data.size() == static_cast<std::size_t>(N));
  std::vector<double> gap(N, 1e9);
  for (int i = 0; i < N; ++i)
    for (int j = 0; j < N; ++j)
      if (y[i] != y[j]) gap[i] = std::min<double>(gap[i], std::hypot(X[2 * i] - X[2 * j], X[2 * i + 1] - X[2 * j + 1]));
  std::vector<int> order(N);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int a, int b) { return gap[a] < gap[b]; });
  const int q = N / 4;
  const auto mean_of = [&](const Array& a, int from, int to) {
    double sum = 0;
    for (int k = from; k < to; ++k) sum += a.data[order[k]];
    return sum / (to - from);
  };
  const double near = mean_of(e->entropy, 0, q), far = mean_of(e->entropy, N - q, N);
  MESSAGE("mean entropy near the boundary " << near << ", far from it " << far << "; mutual information "
          << mean_of(e->mutual_information, 0, q) << " vs " << mean_of(e->mutual_information, N - q, N));
  CHECK(near > 2 * far);
  CHECK(mean_of(e->mutual_information, 0, q) > mean_of(e->mutual_information, N - q, N));
}
