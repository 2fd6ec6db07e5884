// Which CSV columns become features, declared rather than guessed: an identifier-like text
// column refused with both fixes, data.drop, unknown names suggested (all names at -v), each
// encoded column logged once and unseen categories summarized in one warning per column.
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "cli_test_util.h"
#include "config/config.h"
#include "prepare_test_util.h"
#include "data/encode.h"
#include "data/prepare.h"
#include "eval_test_util.h"

using namespace tn;
using namespace evaltest;

namespace {

// 60 patients, each its own id, a 3-way category and a number; the label follows the number.
std::string patients_csv() {
  std::string t = "patient_id,x,color,y\n";
  const char* colors[] = {"red", "green", "blue"};
  for (int i = 0; i < 60; ++i)
    t += fmt::format("p{},{},{},{}\n", 1000 + i, i % 10, colors[i % 3], i % 10 < 5 ? 0 : 1);
  return t;
}

std::string patients_yaml(const std::string& path, const std::string& extra) {
  return "name: cols\nseed: 1\nswarm: {size: 2}\nmodel: {layers: [{units: 4, activation: tanh}, {units: 2}]}\n"
         "loss: cross_entropy\ndata:\n  source: {type: csv, path: " + path + ", target: y}\n"
         "  split: {train: 0.8, val: 0.2, seed: 1}\n" + extra + "train: {epochs: 2, batch_size: 8}\n";
}

DataConfig config_of(const std::string& yaml) { return parse_config(yaml, "c.yaml").data; }

using test::error_of;
using test::prepared;

std::string config_error_of(const std::string& yaml) {
  try {
    parse_config(yaml, "c.yaml");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("an identifier-like text column is refused, naming the column and both fixes") {
  const std::string path = write_file("patients.csv", patients_csv()).string();
  const std::string msg = error_of(config_of(patients_yaml(path, "")));
  CHECK_MESSAGE(msg.find("patients.csv: column 'patient_id' looks like an identifier: 48 categories in 48 training "
                         "rows") != std::string::npos, msg);
  CHECK_MESSAGE(msg.find("drop it with `data.drop: [patient_id]` or give it one input, the category's index: "
                         "data.features: {patient_id: ordinal}") != std::string::npos, msg);
  CHECK(msg.find("'color'") == std::string::npos);  // 3 categories: an ordinary one-hot column
  // Both fixes work as written.
  CHECK(error_of(config_of(patients_yaml(path, "  features: {patient_id: ordinal}\n"))).empty());
  CHECK(prepared(config_of(patients_yaml(path, "  drop: [patient_id]\n"))).features == 4);  // x + 3 colors
}

TEST_CASE("data.drop leaves a column out however the features are chosen, and the run trains") {
  const std::string path = write_file("patients-drop.csv", patients_csv()).string();
  const fs::path run = train_run("cols-drop", patients_yaml(path, "  drop: [patient_id, color]\n"));
  CHECK(fs::exists(run));
  EvalOptions o = eval_opts(run);  // new data read by the stored run: the dropped column is no feature
  o.data = path;
  CHECK(eval_json(o).contains("source"));
  const DataConfig all = config_of(patients_yaml(path, "  drop: [patient_id, color]\n"));
  CHECK(prepared(all).features == 1);
  CHECK(to_yaml(parse_config(patients_yaml(path, "  drop: [patient_id, color]\n"), "c.yaml"))
            .find("drop: [patient_id, color]") != std::string::npos);
  const std::string ranged = "name: cols\nmodel: {layers: [{units: 2}]}\ndata:\n  source: {type: csv, path: " + path +
                             ", target: y, features: {from: patient_id, to: color}}\n  drop: [patient_id]\n";
  CHECK(prepared(config_of(ranged)).features == 4);
  CHECK(error_of(config_of(patients_yaml(path, "  drop: [patient_id, x, color]\n")))
            .find("data.drop leaves no feature column; keep at least one") != std::string::npos);
}

TEST_CASE("data.drop: an unknown column is suggested, the target and non-CSV sources are refused") {
  const std::string path = write_file("patients-typo.csv", patients_csv()).string();
  const std::string msg = error_of(config_of(patients_yaml(path, "  drop: [patient_di]\n")));
  CHECK_MESSAGE(msg.find("data.drop: column 'patient_di' is not in the header; available columns: 'patient_id', "
                         "'x', 'color', 'y'; did you mean 'patient_id'?") != std::string::npos, msg);
  CHECK_MESSAGE(error_of(config_of(patients_yaml(path, "  features: {colour: onehot}\n")))
                    .find("did you mean 'color'?") != std::string::npos, msg);
  CHECK(config_error_of(patients_yaml(path, "  drop: [y]\n")).find("'y' is the target column") != std::string::npos);
  CHECK(config_error_of(patients_yaml(path, "  drop: [color]\n  features: {color: ordinal}\n"))
            .find("also in data.features") != std::string::npos);
  CHECK(config_error_of("model: {layers: [{units: 2}]}\ndata: {source: {type: spirals}, drop: [x]}\n")
            .find("needs data.source.type: csv") != std::string::npos);
}

TEST_CASE("a wide header lists its first columns in the message and all of them at -v") {
  std::string header, row;
  for (int c = 0; c < 40; ++c) header += "col" + std::to_string(c) + ",", row += "1,";
  const std::string path = write_file("wide-header.csv", header + "y\n" + row + "0\n" + row + "1\n").string();
  std::string msg;
  const std::string log = test::logged([&] {
    spdlog::set_level(spdlog::level::debug);
    msg = error_of(config_of("model: {layers: [{units: 2}]}\ndata:\n  source: {type: csv, path: " + path +
                             ", target: y}\n  drop: [col399]\n"));
  });
  CHECK_MESSAGE(msg.find("'col29', ... (11 more; -v lists them all); did you mean 'col39'?") != std::string::npos, msg);
  CHECK_MESSAGE(log.find("'col38', 'col39', 'y'") != std::string::npos, log);
}

TEST_CASE("each encoded column is logged once with its categories, and unseen ones are one warning per column") {
  const std::string path = write_file("patients-log.csv", patients_csv()).string();
  const DataConfig d = config_of(patients_yaml(path, "  features: {patient_id: ordinal}\n"));
  const std::string log = test::logged([&] {
    spdlog::set_level(spdlog::level::info);
    prepared(d);
  });
  CHECK_MESSAGE(log.find("column 'color': 3 categories in the training split, onehot (3 inputs)") != std::string::npos, log);
  CHECK_MESSAGE(log.find("column 'patient_id': 48 categories in the training split, ordinal (one input)") !=
                    std::string::npos, log);
  // The 12 validation ids were never seen in training: one line for them, not twelve.
  CHECK_MESSAGE(log.find("column 'patient_id': 12 categories were not in the training split ('p1") != std::string::npos, log);
  CHECK_MESSAGE(log.find("', ...), in 12 rows; they are encoded as -1") != std::string::npos, log);
  std::size_t lines = 0;
  for (std::size_t at = 0; (at = log.find("not in the training split", at)) != std::string::npos; ++at) ++lines;
  CHECK(lines == 1);

  // One unseen value keeps the line naming it, with its rows.
  FeatureEncoding e;
  e.columns.push_back({"c", Encoding::OneHot, {"a", "b"}, std::numeric_limits<float>::quiet_NaN()});
  Dataset nd;
  nd.n = 3;
  nd.features = 1;
  nd.origin = "new.csv";
  nd.feature_names = {"c"};
  nd.encodings = {Encoding::OneHot};
  nd.levels = {{"a", "z"}};
  nd.X = {0, 1, 1};
  const std::string one = test::logged([&] { apply_encoding(e, nd); });
  CHECK_MESSAGE(one.find("new.csv: column 'c': category 'z' was not in the training split; it is encoded as all "
                         "zeros (2 rows)") != std::string::npos, one);
}
