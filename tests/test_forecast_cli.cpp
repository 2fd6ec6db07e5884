// Forecasting with sequence runs (`predict` and `eval --data` on new history) and `predict --id`:
// a forecast from the history that ends right before a stored test window's target is that
// window's stored prediction, bitwise; series key, last time and ID columns are carried through;
// unknown series and too short a history are refused with their names and counts.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>

#include "backend/device_choice.h"
#include "cli_test_util.h"
#include "eval_test_util.h"
#include "io/prediction_file.h"
#include "io/run_file.h"
#include "python_test_util.h"

using namespace tn;
using namespace evaltest;

namespace {

// One LSTM per ticker (group_by), windows of 8 with horizon 2 and stride 3, per-series statistics.
const char* const kGroupYaml =
    "name: fc-own\nseed: 4\nswarm: {size: 3}\nmodel:\n  layers:\n    - {type: lstm, units: 5}\n"
    "    - {type: dense, units: 1}\nloss: mse\noptimizer: {type: adam, lr: 0.01}\n"
    "data:\n  source: {type: random_walk, series: 3, length: 120, seed: 7}\n"
    "  split: {train: 0.7, val: 0.1, test: 0.2}\n  per_member: {group_by: ticker}\n"
    "  normalize: standard\n  normalize_per_member: true\n"
    "  sequence: {window: 8, horizon: 2, stride: 3, target: close, time: date}\n"
    "train: {epochs: 2, batch_size: 16}\n";

// An ensemble of dense members bootstrapped from one series.
const char* const kEnsembleYaml =
    "name: fc-ens\nseed: 2\nswarm: {size: 4}\nmodel:\n  layers:\n    - {type: dense, units: 8, activation: tanh}\n"
    "    - {type: dense, units: 1}\nloss: mse\noptimizer: {type: adam, lr: 0.01}\n"
    "data:\n  source: {type: random_walk, series: 1, length: 150, seed: 3}\n"
    "  split: {train: 0.7, val: 0.1, test: 0.2}\n  per_member: bootstrap\n  normalize: standard\n"
    "  sequence: {window: 6, horizon: 1, target: close, time: date}\n"
    "train: {epochs: 2, batch_size: 32}\n";

struct Table {
  std::string header;
  std::vector<std::string> lines;  // data rows; table row r is lines[r]
};

Table generated_table(const std::string& name, const std::string& yaml) {
  DataGenerateOptions o;
  o.config_path = write_file(name + ".yaml", yaml).string();
  o.out = scratch(name + ".csv").string();
  o.force = true;
  o.verbosity = Verbosity::Quiet;
  REQUIRE(run_data_generate(o) == kExitOk);
  const std::string text = slurp(o.out);
  Table t;
  for (std::size_t start = 0, end; (end = text.find('\n', start)) != std::string::npos; start = end + 1)
    (t.header.empty() ? t.header : t.lines.emplace_back()) = text.substr(start, end - start);
  return t;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  for (std::size_t start = 0, end; (end = text.find('\n', start)) != std::string::npos; start = end + 1)
    lines.push_back(text.substr(start, end - start));
  return lines;
}

PredictOptions predict_opts(const fs::path& run, const fs::path& input) {
  PredictOptions o;
  o.run_path = run.string();
  o.input = input.string();
  o.verbosity = Verbosity::Quiet;
  return o;
}

// On the CPU the same window through the same kernels gives the same bits as training's stored
// test prediction (each sample's output does not depend on the others in its batch); on a GPU
// (device auto picks it for training and predict), within 1e-5 relative.
void check_same_output(float forecast, float stored) {
  static const bool on_cpu = list_gpus().empty();
  if (on_cpu) CHECK(std::memcmp(&forecast, &stored, sizeof(float)) == 0);
  else CHECK(forecast == doctest::Approx(stored).epsilon(1e-5));
}

// For each series (member), its last stored test window: the index of that sample in
// /predictions/test and the table row of its target.
std::map<int, int> last_test_window(const Predictions& test) {
  std::map<int, int> last;
  for (std::size_t i = 0; i < test.member.size(); ++i) last[test.member[i]] = static_cast<int>(i);
  return last;
}

}  // namespace

TEST_CASE("forecast: the history before a stored test window's target forecasts its stored prediction, bitwise") {
  const Table table = generated_table("fc-own", kGroupYaml);
  const fs::path run = train_run("fc-own", kGroupYaml);
  const RunFile r = read_run_file(run.string());
  const Predictions* test = r.find_predictions("test");
  REQUIRE(test != nullptr);
  REQUIRE(test->per_group.data.size() == test->member.size());
  const DataSplit& split = *std::find_if(r.splits.begin(), r.splits.end(), [](const DataSplit& s) { return s.name == "test"; });
  const std::map<int, int> last = last_test_window(*test);
  REQUIRE(last.size() == 3);

  // Each series' rows up to the last test window's last input (its target row − horizon 2), in
  // reverse order (the time column sorts them), with an extra column `note` naming each row.
  std::string csv = "note," + table.header + "\n";
  std::map<std::string, std::string> last_date, last_note;
  for (const auto& [member, i] : last) {
    const int target_row = split.rows[i];
    const std::string ticker = r.members.group_names[member];
    for (int row = target_row - 2; row >= 0 && tn::test::csv_cells(table.lines[row])[1] == ticker; --row) {
      csv += fmt::format("n{},{}\n", row, table.lines[row]);
      if (!last_date.count(ticker)) {
        last_date[ticker] = tn::test::csv_cells(table.lines[row])[0];
        last_note[ticker] = fmt::format("n{}", row);
      }
    }
  }
  const fs::path history = write_file("fc-history.csv", csv);

  PredictOptions o = predict_opts(run, history);
  o.ids = {"note"};
  o.out = scratch("fc-own-pred.h5").string();
  o.force = true;
  REQUIRE(run_predict(o) == kExitOk);
  const PredictionFile p = read_prediction_file(*o.out);
  CHECK(p.horizon == 2);
  CHECK(p.combine == "own");
  CHECK(p.series_column == "ticker");
  CHECK(p.time_column == "date");
  REQUIRE(p.series == std::vector<std::string>{"S000", "S001", "S002"});
  REQUIRE(p.forecast_normalized.data.size() == 3);
  REQUIRE(p.ids.size() == 1);
  for (int g = 0; g < 3; ++g) {
    const int i = last.at(g);
    CHECK(p.member[g] == g);
    check_same_output(p.forecast_normalized.data[g], test->per_group.data[i]);
    CHECK(p.forecast.data[g] == doctest::Approx(test->per_group_original.data[i]).epsilon(1e-6));
    CHECK(p.forecast.data[g] == p.forecast_normalized.data[g] * r.normalization.target_std.data[g] +
                                    r.normalization.target_mean.data[g]);
    CHECK(p.last_time[g] == last_date[p.series[g]]);
    CHECK(p.ids[0][g] == last_note[p.series[g]]);
  }

  // The CSV: one line per series with key, last time, ID, horizon, member and forecasts.
  o.out = scratch("fc-own-pred.csv").string();
  REQUIRE(run_predict(o) == kExitOk);
  const std::vector<std::string> lines = lines_of(slurp(*o.out));
  REQUIRE(lines.size() == 4);
  CHECK(lines[0] == "ticker,last_date,note,horizon,member,forecast,forecast_normalized");
  for (int g = 0; g < 3; ++g) {
    const std::vector<std::string> c = tn::test::csv_cells(lines[g + 1]);
    REQUIRE(c.size() == 7);
    CHECK(c[0] == p.series[g]);
    CHECK(c[1] == p.last_time[g]);
    CHECK(c[2] == p.ids[0][g]);
    CHECK(c[3] == "2");
    CHECK(c[4] == std::to_string(g));
    CHECK(std::stof(c[5]) == p.forecast.data[g]);
    CHECK(std::stof(c[6]) == p.forecast_normalized.data[g]);
  }

  const std::string py = test::python_with_h5py();
  REQUIRE_MESSAGE(!py.empty(), "no Python with h5py");
  const std::string out = test::run_command(
      py + " -c \"import h5py; f = h5py.File('" + scratch("fc-own-pred.h5").string() +
      "', 'r'); print(int(f.attrs['horizon']), f.attrs['series_column'], [s.decode() for s in f['series'][...]], "
      "[s.decode() for s in f['id/note'][...]], f['forecast'].shape, f['forecast_normalized'].shape, "
      "f['member'][...].tolist(), f['last_time'][0].decode())\" 2>&1");
  CHECK(out == fmt::format("2 ticker ['S000', 'S001', 'S002'] ['{}', '{}', '{}'] (3,) (3,) [0, 1, 2] {}\n",
                           p.ids[0][0], p.ids[0][1], p.ids[0][2], p.last_time[0]));
}

TEST_CASE("forecast: an ensemble run forecasts with every member, their mean and spread") {
  const Table table = generated_table("fc-ens", kEnsembleYaml);
  const fs::path run = train_run("fc-ens", kEnsembleYaml);
  const RunFile r = read_run_file(run.string());
  const Predictions* test = r.find_predictions("test");
  REQUIRE(test != nullptr);
  const DataSplit& split = *std::find_if(r.splits.begin(), r.splits.end(), [](const DataSplit& s) { return s.name == "test"; });
  const int N = static_cast<int>(split.rows.size()), i = N - 1;
  std::string csv = table.header + "\n";
  for (int row = 0; row < split.rows[i]; ++row) csv += table.lines[row] + "\n";  // horizon 1
  PredictOptions o = predict_opts(run, write_file("fc-ens-history.csv", csv));
  o.out = scratch("fc-ens-pred.h5").string();
  o.force = true;
  REQUIRE(run_predict(o) == kExitOk);
  const PredictionFile p = read_prediction_file(*o.out);
  CHECK(p.combine == "mean");
  CHECK(p.series_column.empty());
  REQUIRE(p.members_normalized.shape == std::vector<std::uint64_t>{4, 1, 1});
  REQUIRE(p.members.shape == std::vector<std::uint64_t>{4, 1, 1});
  double mean = 0, var = 0;
  for (int s = 0; s < 4; ++s) {
    check_same_output(p.members_normalized.data[s], test->members.data[static_cast<std::size_t>(s) * N + i]);
    mean += p.members.data[s] / 4;
  }
  for (int s = 0; s < 4; ++s) var += (p.members.data[s] - mean) * (p.members.data[s] - mean) / 4;
  CHECK(p.forecast.data[0] == doctest::Approx(mean).epsilon(1e-6));
  CHECK(p.ensemble_std.data[0] == doctest::Approx(std::sqrt(var)).epsilon(1e-5));
  CHECK(p.last_time == std::vector<std::string>{tn::test::csv_cells(table.lines[split.rows[i] - 1])[0]});

  o.out.reset();
  std::string text;
  int rc = -1;
  text = capture(1, [&] { rc = run_predict(o); });
  CHECK(rc == kExitOk);
  const std::vector<std::string> lines = lines_of(text);
  REQUIRE(lines.size() == 2);
  CHECK(lines[0] == "last_date,horizon,forecast,std,member_0,member_1,member_2,member_3");
  CHECK(tn::test::csv_cells(lines[1])[1] == "1");
}

TEST_CASE("eval --data on a sequence run: each series scored by its own member, as on the test split") {
  const Table table = generated_table("fc-own", kGroupYaml);
  const fs::path run = train_run("fc-own-eval", kGroupYaml);
  // Each series' test range alone (its last round(0.2·120) = 24 points): cut from its start with
  // the run's window, horizon and stride, its windows are exactly the test split's.
  std::string csv = table.header + "\n";
  for (int g = 0; g < 3; ++g)
    for (int k = 96; k < 120; ++k) csv += table.lines[g * 120 + k] + "\n";
  EvalOptions own = eval_opts(run);
  own.json = true;
  EvalOptions data = own;
  data.data = write_file("fc-test-range.csv", csv).string();
  std::string a, b;
  int rc = -1;
  a = capture(1, [&] { rc = run_eval(own); });
  REQUIRE(rc == kExitOk);
  b = capture(1, [&] { rc = run_eval(data); });
  REQUIRE(rc == kExitOk);
  const nlohmann::json ja = nlohmann::json::parse(a), jb = nlohmann::json::parse(b);
  CHECK(jb["n_samples"] == ja["n_samples"]);
  CHECK(jb["members"] == ja["members"]);
  CHECK(jb["pooled"] == ja["pooled"]);
  CHECK(jb["original_units"] == ja["original_units"]);
}

TEST_CASE("forecast and eval --data: unknown series and too short a history exit 2 naming them") {
  const Table table = generated_table("fc-own", kGroupYaml);
  const fs::path run = train_run("fc-own-errors", kGroupYaml);
  // S001 renamed to ZZZ; S002 with 5 of its rows (the window is 8).
  std::string unknown = table.header + "\n", short_history = table.header + "\n";
  for (int row = 0; row < 360; ++row) {
    std::string line = table.lines[row];
    const std::string ticker = tn::test::csv_cells(line)[1];
    if (ticker == "S001") line.replace(line.find("S001"), 4, "ZZZ");
    unknown += line + "\n";
    if (ticker != "S002" || row >= 355) short_history += table.lines[row] + "\n";
  }
  auto [rc, err] = exit_and_stderr([&] { return run_predict(predict_opts(run, write_file("fc-unknown.csv", unknown))); });
  CHECK(rc == kExitUsage);
  CHECK(err.find("series the run has no member for: 'ZZZ'") != std::string::npos);
  std::tie(rc, err) = exit_and_stderr([&] { return run_predict(predict_opts(run, write_file("fc-short.csv", short_history))); });
  CHECK(rc == kExitUsage);
  CHECK(err.find("series 'S002' has 5 rows, but a forecast needs 8 (data.sequence.window 8)") != std::string::npos);
  EvalOptions e = eval_opts(run);
  e.data = scratch("fc-short.csv").string();
  std::tie(rc, err) = exit_and_stderr([&] { return run_eval(e); });
  CHECK(rc == kExitUsage);
  CHECK(err.find("series 'S002' has 5 rows, but one window with its target needs 10 (data.sequence.window 8 + horizon 2)") !=
        std::string::npos);
  PredictOptions o = predict_opts(run, scratch("fc-short.csv"));
  o.ids = {"region"};
  std::tie(rc, err) = exit_and_stderr([&] { return run_predict(o); });
  CHECK(rc == kExitUsage);
  CHECK(err.find("--id: column 'region' is not in the header") != std::string::npos);
}

TEST_CASE("predict --id carries a column through on a feature-vector run") {
  const fs::path csv = write_file("id-train.csv", [] {
    std::string t = "name,x,y\n";
    for (int i = 0; i < 40; ++i) t += fmt::format("item {},{},{}\n", i, i * 0.1, i * 0.2 + 1);
    return t;
  }());
  const fs::path run = train_run(
      "id-reg", "name: id-reg\nseed: 1\nswarm: {size: 2}\nmodel: {layers: [{type: dense, units: 4, activation: tanh}, {units: 1}]}\n"
                "loss: mse\noptimizer: {type: adam, lr: 0.01}\ndata:\n  source: {type: csv, path: " + csv.string() +
                ", features: [x], target: y}\n  split: {train: 1.0, val: 0.0, test: 0.0}\ntrain: {epochs: 2, batch_size: 8}\n");
  const fs::path input = write_file("id-input.csv", "x,name\n0.5,\"first, one\"\n1.5,second\n");
  PredictOptions o = predict_opts(run, input);
  o.ids = {"name"};
  o.out = scratch("id-pred.csv").string();
  o.force = true;
  REQUIRE(run_predict(o) == kExitOk);
  const std::vector<std::string> lines = lines_of(slurp(*o.out));
  REQUIRE(lines.size() == 3);
  CHECK(lines[0] == "row,name,prediction,std,member_0,member_1");
  CHECK(lines[1].rfind("0,\"first, one\",", 0) == 0);
  CHECK(lines[2].rfind("1,second,", 0) == 0);
  o.out = scratch("id-pred.h5").string();
  REQUIRE(run_predict(o) == kExitOk);
  const PredictionFile p = read_prediction_file(*o.out);
  CHECK(p.id_columns == std::vector<std::string>{"name"});
  CHECK(p.ids == std::vector<std::vector<std::string>>{{"first, one", "second"}});
  CHECK(p.horizon == 0);
  const std::string py = test::python_with_h5py();
  REQUIRE_MESSAGE(!py.empty(), "no Python with h5py");
  CHECK(test::run_command(py + " -c \"import h5py; f = h5py.File('" + *o.out +
                          "', 'r'); print([s.decode() for s in f['id/name'][...]], f['members'].shape)\" 2>&1") ==
        "['first, one', 'second'] (2, 2, 1)\n");
}
