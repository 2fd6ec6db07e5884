// Categorical and boolean CSV features (one-hot, ordinal) and missing values (error, drop_rows,
// mean, median): hand-computed encodings fitted on the training split, the run file's
// /data/encoding, and predict applying it to new data exactly as training did.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "config/config.h"
#include "prepare_test_util.h"
#include "data/encode.h"
#include "data/prepare.h"
#include "eval_test_util.h"
#include "io/prediction_file.h"
#include "io/run_file.h"
#include "python_test_util.h"
#include "util/host_memory.h"

using namespace tn;
using namespace evaltest;

namespace {

const char* kShop =
    "size,color,fresh,y\n"
    "1,red,true,0\n"
    "2,blue,false,1\n"
    "3,green,true,0\n"
    "4,red,false,1\n";

DataConfig csv_data(const std::string& path, const std::string& extra_yaml = "") {
  return parse_config("model: {layers: [{units: 2}]}\ndata:\n  source: {type: csv, path: " + path +
                          ", target: y}\n" + extra_yaml,
                      "c.yaml")
      .data;
}

using test::error_of;
using test::prepared;

}  // namespace

TEST_CASE("text and boolean columns become one-hot inputs, categories sorted") {
  const PreparedData p = prepared(csv_data(write_file("shop.csv", kShop).string()));
  CHECK(p.features == 6);
  CHECK(p.feature_names ==
        std::vector<std::string>{"size", "color_blue", "color_green", "color_red", "fresh_false", "fresh_true"});
  CHECK(p.train.X == std::vector<float>{1, 0, 0, 1, 0, 1,  //
                                        2, 1, 0, 0, 1, 0,  //
                                        3, 0, 1, 0, 0, 1,  //
                                        4, 0, 0, 1, 1, 0});
  REQUIRE(p.encoding.columns.size() == 3);
  CHECK(p.encoding.columns[0].kind == Encoding::Numeric);
  CHECK(p.encoding.columns[1].categories == std::vector<std::string>{"blue", "green", "red"});
  CHECK(p.encoding.columns[2].kind == Encoding::OneHot);
}

TEST_CASE("ordinal encoding is the index among the sorted training categories") {
  const PreparedData p =
      prepared(csv_data(write_file("shop.csv", kShop).string(), "  features: {color: {encoding: ordinal}, fresh: ordinal}\n"));
  CHECK(p.feature_names == std::vector<std::string>{"size", "color", "fresh"});
  CHECK(p.train.X == std::vector<float>{1, 2, 1, 2, 0, 0, 3, 1, 1, 4, 2, 0});
}

TEST_CASE("categories are fitted on the training split, others are all zeros, with a warning") {
  // 6 rows; the test split (rows chosen by the split seed) may hold categories training never saw.
  const std::string csv = "c,y\na,0\nb,1\na,0\nb,1\nzz,0\nyy,1\n";
  const DataConfig d = csv_data(write_file("fit.csv", csv).string(), "  split: {train: 0.5, test: 0.5, seed: 3}\n");
  const PreparedData p = prepared(d);
  std::vector<std::string> seen;
  const Dataset raw = load_dataset(d, true);
  for (int r : p.train.rows) seen.push_back(raw.levels[0][static_cast<std::size_t>(raw.X[r])]);
  std::sort(seen.begin(), seen.end());
  seen.erase(std::unique(seen.begin(), seen.end()), seen.end());
  CHECK(p.encoding.columns[0].categories == seen);
  for (int i = 0; i < p.test.n; ++i) {
    const std::string v = raw.levels[0][static_cast<std::size_t>(raw.X[p.test.rows[i]])];
    const auto it = std::find(seen.begin(), seen.end(), v);
    for (std::size_t k = 0; k < seen.size(); ++k)
      CHECK(p.test.X[i * seen.size() + k] == (it != seen.end() && k == static_cast<std::size_t>(it - seen.begin()) ? 1.0f : 0.0f));
  }
  // An unseen category directly: all zeros (one-hot), -1 (ordinal).
  FeatureEncoding e;
  e.columns = {{"c", Encoding::OneHot, {"a", "b"}, NAN}, {"o", Encoding::Ordinal, {"a", "b"}, NAN}};
  Dataset nd;
  nd.n = 2;
  nd.features = 2;
  nd.origin = "new.csv";
  nd.feature_names = {"c", "o"};
  nd.encodings = {Encoding::OneHot, Encoding::Ordinal};
  nd.levels = {{"b", "q"}, {"q", "a"}};
  nd.X = {0, 0, 1, 1};  // row 0: c=b, o=q; row 1: c=q, o=a
  apply_encoding(e, nd);
  CHECK(nd.features == 3);
  CHECK(nd.X == std::vector<float>{0, 1, -1, 0, 0, 0});
}

TEST_CASE("one-hot width: an identifier-like column and encoded data beyond memory are refused before encoding") {
  // 3000 rows, each its own category (std::bad_alloc, exit 1, at 200,000 before; 2.5 GB at 20,000).
  std::string ids = "id,x,y\n";
  for (int i = 0; i < 3000; ++i) ids += fmt::format("k{},{},{}\n", i, i % 7, i % 2);
  const std::string path = write_file("ids.csv", ids).string();
  std::string msg = error_of(csv_data(path, "  split: {train: 0.8, test: 0.2}\n"));
  CHECK_MESSAGE(msg.find("ids.csv: column 'id' looks like an identifier: 2400 categories in 2400 training rows, so "
                         "most are seen once or twice") != std::string::npos, msg);
  CHECK_MESSAGE(msg.find("(its 2400 inputs would take an estimated 54.9 MiB); drop it with `data.drop: [id]` or give "
                         "it one input, the category's index: data.features: {id: ordinal}") != std::string::npos, msg);
  // What the message offers works: the column as its index, or left out.
  CHECK(error_of(csv_data(path, "  features: {id: {encoding: ordinal}}\n")).empty());
  const DataConfig only_x =
      parse_config("model: {layers: [{units: 2}]}\ndata: {source: {type: csv, path: " + path + ", target: y, features: [x]}}\n",
                   "c.yaml").data;
  CHECK(prepared(only_x).features == 1);
  // Categories that repeat are one-hot however many, and so are 20 or fewer whatever the rows.
  std::string few = "c,y\n";
  for (int i = 0; i < 1000; ++i) few += fmt::format("k{},{}\n", i % 100, i % 2);
  CHECK(prepared(csv_data(write_file("few.csv", few).string())).features == 100);
  std::string small = "c,y\n";
  for (int i = 0; i < 20; ++i) small += fmt::format("k{},{}\n", i, i % 2);
  CHECK(prepared(csv_data(write_file("small.csv", small).string())).features == 20);

  // Encoded data beyond the memory available (MemAvailable), from the training split or a run file's encoding.
  std::string wide = "c,y\n";
  for (int i = 0; i < 400; ++i) wide += fmt::format("k{},{}\n", i % 40, i % 2);
  const DataConfig d = csv_data(write_file("wide.csv", wide).string());
  override_available_memory(100000);
  msg = error_of(d);
  const Dataset raw = load_dataset(d, true);
  FeatureEncoding stored;
  stored.columns.push_back({"c", Encoding::OneHot, raw.levels[0], std::numeric_limits<float>::quiet_NaN()});
  Dataset copy = raw;
  CHECK_THROWS_WITH_AS(apply_encoding(stored, copy), doctest::Contains("column 'c' has 40 categories"), DataError);
  override_available_memory(128000);
  CHECK(error_of(d).empty());
  override_available_memory(std::nullopt);
  CHECK_MESSAGE(msg.find("wide.csv: column 'c' has 40 categories, one input each: the encoded data (400 rows of 40 "
                         "inputs, held twice while the splits are cut) need an estimated 125.0 KiB, more than the 97.7 "
                         "KiB available (MemAvailable); drop it with `data.drop: [c]`") != std::string::npos, msg);
}

TEST_CASE("missing values: error by default, naming file:line, drop_rows, mean, median") {
  const std::string csv = "a,c,y\n1,red,0\n,blue,1\n3,,0\n10,red,1\nNA,red,0\n";
  const std::string path = write_file("miss.csv", csv).string();
  const std::string msg = error_of(csv_data(path));
  CHECK_MESSAGE(msg.find("miss.csv:3: column 'a': the value is empty; fill it in or remove the row") != std::string::npos, msg);

  const PreparedData dropped = prepared(csv_data(path, "  missing: drop_rows\n"));
  CHECK(dropped.train.n == 2);
  CHECK(dropped.train.X == std::vector<float>{1, 1, 10, 1});  // a, color_red (only red is left)

  const PreparedData mean = prepared(csv_data(path, "  missing: mean\n"));
  // a: mean of 1, 3, 10 = 14/3; c: the most frequent category, red.
  CHECK(mean.feature_names == std::vector<std::string>{"a", "c_blue", "c_red"});
  const float m = static_cast<float>(14.0 / 3.0);
  CHECK(mean.train.X == std::vector<float>{1, 0, 1, m, 1, 0, 3, 0, 1, 10, 0, 1, m, 0, 1});
  const PreparedData median = prepared(csv_data(path, "  missing: median\n"));
  CHECK(median.train.X[3] == 3.0f);
  CHECK(median.encoding.columns[0].fill == 3.0f);
  CHECK(median.encoding.columns[1].fill == 1.0f);  // index of red

  // The first value of a numeric-looking column decides: "1,5" stays a number error, with a hint.
  const std::string bad = error_of(csv_data(write_file("mixed.csv", "a,y\n1,0\nred,1\n").string()));
  CHECK_MESSAGE(bad.find("mixed.csv:3: column 'a': 'red' is not a number") != std::string::npos, bad);
  CHECK_MESSAGE(bad.find("data.features: {a: {encoding: onehot}}") != std::string::npos, bad);
  const std::string num = error_of(csv_data(write_file("num.csv", "a,y\n1,0\n2,1\n").string(),
                                            "  features: {a: numeric}\n"));
  CHECK(num.empty());
  const std::string forced = error_of(csv_data(write_file("forced.csv", "a,y\nred,0\n2,1\n").string(),
                                               "  features: {a: numeric}\n"));
  CHECK_MESSAGE(forced.find("forced.csv:2: column 'a': 'red' is not a number") != std::string::npos, forced);
}

TEST_CASE("data.features and data.missing in the config") {
  const std::string path = write_file("shop.csv", kShop).string();
  const auto parse = [&](const std::string& extra) {
    return parse_config("model: {layers: [{units: 2}]}\ndata:\n  source: {type: csv, path: " + path +
                            ", target: y}\n" + extra,
                        "c.yaml");
  };
  const Config c = parse("  features: {color: {encoding: ordinal}}\n  missing: median\n");
  CHECK(c.data.encoding_of("color") == Encoding::Ordinal);
  CHECK(c.data.missing == Missing::Median);
  const Config back = parse_config(to_yaml(c), "again");
  CHECK(back.data.feature_settings == c.data.feature_settings);
  CHECK(back.data.missing == Missing::Median);
  CHECK_THROWS_WITH_AS(parse("  features: {color: {encoding: hot}}\n"), doctest::Contains("c.yaml:4"), ConfigError);
  CHECK_THROWS_WITH_AS(parse("  features: {y: onehot}\n"), doctest::Contains("target column"), ConfigError);
  CHECK_THROWS_WITH_AS(parse("  missing: zero\n"), doctest::Contains("data.missing"), ConfigError);
  CHECK_THROWS_WITH_AS(parse_config("model: {layers: [{units: 2}]}\ndata: {source: spirals, missing: mean}\n", "s.yaml"),
                       doctest::Contains("applies to CSV"), ConfigError);
  CHECK_THROWS_WITH_AS(prepared(parse("  features: {colour: onehot}\n").data),
                       doctest::Contains("did you mean 'color'?"), DataError);
}

TEST_CASE("the run file stores the encoding, and predict applies it to new data as training did") {
  std::string csv = "size,color,w,y\n";
  for (int i = 0; i < 60; ++i) {
    const char* color = i % 3 == 0 ? "red" : i % 3 == 1 ? "green" : "blue";
    csv += fmt::format("{},{},{},{}\n", i % 7, color, i % 5 == 0 ? "" : std::to_string(i % 4), i % 3 == 0 ? 1 : 0);
  }
  const fs::path data = write_file("enc-train.csv", csv);
  const fs::path run = train_run(
      "enc", "name: enc\nseed: 2\nswarm: {size: 3}\nmodel: {layers: [{units: 8, activation: tanh}, {units: 2}]}\n"
             "loss: cross_entropy\ndata:\n  source: {type: csv, path: " + data.string() + ", target: y}\n"
             "  split: {train: 0.75, test: 0.25, seed: 1}\n  missing: mean\n  normalize: standard\n"
             "train: {epochs: 3, batch_size: 16}\n");
  const RunFile r = read_run_file(run.string());
  REQUIRE(r.encoding.columns.size() == 3);
  CHECK(r.encoding.missing == "mean");
  CHECK(r.encoding.kinds == std::vector<std::string>{"numeric", "onehot", "numeric"});
  CHECK(r.encoding.categories == std::vector<std::string>{"blue", "green", "red"});
  CHECK(r.encoding.category_counts == std::vector<int>{0, 3, 0});
  CHECK(std::isnan(r.encoding.fill[1]) == false);  // color's fill: the most frequent category
  CHECK(r.data.feature_names == std::vector<std::string>{"size", "color_blue", "color_green", "color_red", "w"});
  const std::string py = test::python_with_h5py();
  if (!py.empty()) {
    const std::string out = test::run_command(
        py + " -c \"import h5py; f = h5py.File('" + run.string() + "', 'r'); g = f['data/encoding']; "
        "print([s.decode() for s in g['columns'][()]], [s.decode() for s in g['kinds'][()]], "
        "[s.decode() for s in g['categories'][()]], g['category_counts'][()].tolist(), g.attrs['missing'])\"");
    CHECK(out == "['size', 'color', 'w'] ['numeric', 'onehot', 'numeric'] ['blue', 'green', 'red'] [0, 3, 0] mean\n");
  }
  // The test rows as new data (columns reordered, no target), then a row with an unseen color
  // and a missing value: the test rows' predictions equal those stored at training.
  const Config cfg = parse_config(r.config_yaml, "run");
  const Dataset raw = load_dataset(cfg.data, true);
  const PreparedData d = prepare_data(raw, cfg.data);
  std::vector<std::string> lines;
  for (std::size_t start = 0, end; (end = csv.find('\n', start)) != std::string::npos; start = end + 1)
    lines.push_back(csv.substr(start, end - start));
  std::string input = "w,color,size\n";
  for (int row : d.test.rows) {
    const std::string& l = lines[static_cast<std::size_t>(row) + 1];
    const std::size_t c1 = l.find(','), c2 = l.find(',', c1 + 1), c3 = l.find(',', c2 + 1);
    input += l.substr(c2 + 1, c3 - c2 - 1) + "," + l.substr(c1 + 1, c2 - c1 - 1) + "," + l.substr(0, c1) + "\n";
  }
  input += "NA,purple,3\n";
  PredictOptions o;
  o.run_path = run.string();
  o.input = write_file("enc-new.csv", input).string();
  o.verbosity = Verbosity::Quiet;
  o.out = scratch("enc-pred.h5").string();
  const auto [rc, err] = exit_and_stderr([&] { return run_predict(o); });
  REQUIRE_MESSAGE(rc == kExitOk, err);
  CHECK_MESSAGE(err.find("column 'color': category 'purple' was not in the training split") != std::string::npos, err);
  const PredictionFile p = read_prediction_file(*o.out);
  const Predictions* test = r.find_predictions("test");
  REQUIRE(test != nullptr);
  const std::size_t N = static_cast<std::size_t>(d.test.n);
  REQUIRE(p.members.data.size() == 3 * (N + 1) * 2);
  for (std::size_t s = 0; s < 3; ++s)
    for (std::size_t i = 0; i < N * 2; ++i)
      CHECK(p.members.data[s * (N + 1) * 2 + i] == doctest::Approx(test->members.data[s * N * 2 + i]).epsilon(1e-5));

  // eval --data on labeled CSV data with a missing value and an unseen category encodes it too.
  EvalOptions e = eval_opts(run);
  e.data = write_file("enc-labeled.csv", "size,color,w,y\n1,red,,1\n2,blue,3,0\n3,purple,1,0\n").string();
  e.verbosity = Verbosity::Quiet;
  const auto [erc, eerr] = exit_and_stderr([&] { return run_eval(e); });
  CHECK_MESSAGE(erc == kExitOk, eerr);
  CHECK_MESSAGE(eerr.find("category 'purple'") != std::string::npos, eerr);
}

TEST_CASE("predict reads new CSV rows in the training file's dialect: header-less, semicolons, comments") {
  std::string rows;
  for (int i = 0; i < 40; ++i) rows += fmt::format("{};{};{}\n", i % 7, (i * 3) % 5, i % 2);
  const fs::path data = write_file("dialect-train.csv", "# made by a logger\n" + rows);
  const fs::path run = train_run(
      "dialect", "name: dialect\nseed: 4\nswarm: {size: 2}\nmodel: {layers: [{units: 4, activation: tanh}, {units: 2}]}\n"
                 "loss: cross_entropy\ndata:\n  source: {type: csv, path: " + data.string() +
                 ", target: y, delimiter: ';', comment: '#', columns: [a, b, y]}\n"
                 "train: {epochs: 2, batch_size: 8}\n");
  PredictOptions o;
  o.run_path = run.string();
  o.input = write_file("dialect-new.csv", "# new rows\n1;2\n# another\n3;4\n").string();
  o.verbosity = Verbosity::Quiet;
  o.out = scratch("dialect-pred.h5").string();
  const auto [rc, err] = exit_and_stderr([&] { return run_predict(o); });
  REQUIRE_MESSAGE(rc == kExitOk, err);
  const PredictionFile p = read_prediction_file(*o.out);
  CHECK(p.members.data.size() == 2 * 2 * 2);  // [S=2, 2 rows, 2 classes]
  // The same when the training file has moved away: the dialect comes from the run's /config.
  fs::rename(data, data.string() + ".moved");
  o.out = scratch("dialect-pred-moved.h5").string();
  const auto [rc1, err1] = exit_and_stderr([&] { return run_predict(o); });
  REQUIRE_MESSAGE(rc1 == kExitOk, err1);
  CHECK(read_prediction_file(*o.out).members.data == p.members.data);
  // Rows in another dialect fail with the file and line, not a silent misreading.
  o.input = write_file("dialect-other.csv", "a,b\n1,2\n").string();
  o.out = scratch("dialect-pred2.h5").string();
  const auto [rc2, err2] = exit_and_stderr([&] { return run_predict(o); });
  CHECK(rc2 == kExitUsage);
  CHECK_MESSAGE(err2.find("dialect-other.csv:1") != std::string::npos, err2);
}
