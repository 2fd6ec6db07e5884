// `turbanet eval` called as a function: JSON against the HDF5 record and against metrics
// recomputed here from the stored predictions, splits and outputs, exit codes and messages.
#include <doctest/doctest.h>
#include <hdf5.h>

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <tuple>
#include <nlohmann/json.hpp>

#include "config/config.h"
#include "data/prepare.h"
#include "eval_test_util.h"
#include "io/run_file.h"
#include "seal_test_util.h"

using namespace tn;
using namespace evaltest;
using nlohmann::json;

namespace {

const EvalRecord* find_eval(const RunFile& r, const std::string& split) {
  for (const EvalRecord& e : r.evals)
    if (e.split == split) return &e;
  return nullptr;
}

// Exit code and stderr of a run that should fail.
std::pair<int, std::string> eval_error(const EvalOptions& o) {
  return exit_and_stderr([&] { return run_eval(o); });
}

// Accuracy, log loss and Brier score of probabilities P [N, K], computed here independently.
struct Simple {
  double accuracy = 0, log_loss = 0, brier = 0;
};
Simple simple_metrics(const std::vector<double>& P, const std::vector<float>& y, int K) {
  Simple m;
  const std::size_t N = y.size();
  for (std::size_t i = 0; i < N; ++i) {
    const double* p = &P[i * K];
    const int label = static_cast<int>(y[i]);
    m.accuracy += (std::max_element(p, p + K) - p) == label;
    m.log_loss -= std::log(std::max(p[label], 1e-15));
    for (int k = 0; k < K; ++k) m.brier += (p[k] - (k == label)) * (p[k] - (k == label));
  }
  m.accuracy /= N;
  m.log_loss /= N;
  m.brier /= N;
  return m;
}

void check_simple(const json& got, const Simple& want, double eps) {
  CHECK(got["accuracy"].get<double>() == doctest::Approx(want.accuracy));
  CHECK(got["log_loss"].get<double>() == doctest::Approx(want.log_loss).epsilon(eps));
  CHECK(got["brier"].get<double>() == doctest::Approx(want.brier).epsilon(eps));
}

}  // namespace

TEST_CASE("eval --json agrees with the HDF5 record and with metrics recomputed from the stored predictions") {
  const fs::path run = train_run("json", spirals_yaml(6, 40));
  const json j = eval_json(eval_opts(run));
  const RunFile r = read_run_file(run.string());
  const EvalRecord* rec = find_eval(r, "test");
  const Predictions* pred = r.find_predictions("test");
  REQUIRE(rec != nullptr);
  REQUIRE(pred != nullptr);
  CHECK(j["split"] == "test");
  CHECK(j["n_samples"] == 40);
  CHECK(j["metrics"].get<std::vector<std::string>>() == rec->metrics);
  const std::size_t M = rec->metrics.size();
  REQUIRE(j["members"].size() == 6);
  for (std::size_t s = 0; s < 6; ++s) {
    CHECK(j["members"][s]["member"] == rec->member[s]);
    for (std::size_t m = 0; m < M; ++m) CHECK(j["members"][s][rec->metrics[m]].get<double>() == rec->members[s * M + m]);
  }
  for (std::size_t m = 0; m < M; ++m) {
    CHECK(j["ensemble"][rec->metrics[m]].get<double>() == rec->ensemble[m]);
    CHECK(j["member_mean"][rec->metrics[m]].get<double>() == rec->member_mean[m]);
    CHECK(j["member_std"][rec->metrics[m]].get<double>() == rec->member_std[m]);
  }
  // Independently from /predictions/test: members [S, N, 2] and targets [N].
  const int S = 6, N = 40, K = 2;
  REQUIRE(pred->members.data.size() == static_cast<std::size_t>(S * N * K));
  std::vector<double> mean(N * K, 0.0);
  double accuracy_sum = 0;
  for (int s = 0; s < S; ++s) {
    const std::vector<double> P(pred->members.data.begin() + s * N * K, pred->members.data.begin() + (s + 1) * N * K);
    for (int i = 0; i < N * K; ++i) mean[i] += P[i] / S;
    const Simple m = simple_metrics(P, pred->targets.data, K);
    check_simple(j["members"][s], m, 1e-9);
    accuracy_sum += m.accuracy;
  }
  CHECK(j["member_mean"]["accuracy"].get<double>() == doctest::Approx(accuracy_sum / S));
  check_simple(j["ensemble"], simple_metrics(mean, pred->targets.data, K), 1e-5);
  // The ensemble confusion matrix counts (true, predicted) pairs.
  std::vector<std::vector<int>> confusion(K, std::vector<int>(K, 0));
  for (int i = 0; i < N; ++i) ++confusion[static_cast<int>(pred->targets.data[i])][mean[2 * i + 1] > mean[2 * i] ? 1 : 0];
  CHECK(j["ensemble"]["confusion"].get<std::vector<std::vector<int>>>() == confusion);
}

TEST_CASE("train stores the evaluation of the test split, or of the training split without one") {
  const RunFile with_test = read_run_file(train_run("with-test", spirals_yaml(3, 5)).string());
  REQUIRE(with_test.evals.size() == 1);
  CHECK(with_test.evals[0].split == "test");
  CHECK(with_test.evals[0].n_samples == 40);
  CHECK(with_test.evals[0].member == std::vector<int>{0, 1, 2});
  CHECK(with_test.data.feature_names == std::vector<std::string>{"x", "y"});

  std::string yaml = spirals_yaml(3, 5);
  yaml.replace(yaml.find("{train: 0.7, val: 0.1, test: 0.2}"), 33, "{train: 1.0}");
  TrainOptions o;
  o.config_path = write_file("no-test.yaml", yaml).string();
  o.out = scratch("no-test.h5").string();
  o.force = true;
  int rc = -1;
  const std::string log = capture(2, [&] { rc = run_train(o); });
  REQUIRE(rc == kExitOk);
  CHECK(log.find("no test split: evaluated on the training split") != std::string::npos);
  const RunFile r = read_run_file(*o.out);
  REQUIRE(r.evals.size() == 1);
  CHECK(r.evals[0].split == "train");
  CHECK(r.evals[0].n_samples == 200);
}

TEST_CASE("eval: other splits and combination rules, kept in the run file under the names --save gives") {
  const fs::path run = train_run("splits", spirals_yaml(5, 20));
  EvalOptions o = eval_opts(run);
  o.split = "val";
  o.save = "val";
  CHECK(eval_json(o)["n_samples"] == 20);
  o.split = "all";
  o.combine = "vote";
  o.save = "all-vote";
  const json all = eval_json(o);
  CHECK(all["n_samples"] == 200);
  CHECK(all["combine"] == "vote");
  // Vote: the ensemble's class is the majority of the members' classes.
  const RunFile r = read_run_file(run.string());
  const Predictions* p = r.find_predictions("all-vote");
  REQUIRE(p != nullptr);
  int correct = 0;
  for (int i = 0; i < 200; ++i) {
    int votes = 0;
    double mean = 0;
    for (int s = 0; s < 5; ++s) {
      const float* q = &p->members.data[(s * 200 + i) * 2];
      votes += q[1] > q[0];
      mean += q[1] - q[0];
    }
    const int label = votes * 2 > 5 || (votes * 2 == 5 && mean > 0) ? 1 : 0;
    correct += label == static_cast<int>(p->targets.data[i]);
  }
  CHECK(all["ensemble"]["accuracy"].get<double>() == doctest::Approx(correct / 200.0));
  o.split = "test";
  o.combine = "mean_logit";
  o.save = "test-logit";
  CHECK(eval_json(o)["combine"] == "mean_logit");
  // Every evaluation is kept under its own name; training's own record is untouched.
  const RunFile after = read_run_file(run.string());
  CHECK(find_eval(after, "val") != nullptr);
  CHECK(find_eval(after, "all-vote")->source.find("all samples of") == 0);
  CHECK(find_eval(after, "test-logit")->combine == "mean_logit");
  CHECK(find_eval(after, "test")->combine == "mean_prob");
  CHECK(find_eval(after, "test")->source == find_eval(r, "test")->source);
}

TEST_CASE("eval changes nothing unless asked: the run file's bytes stay, --save writes, a record is replaced only with --force") {
  const fs::path run = train_run("readonly", spirals_yaml(3, 5));
  const std::string before = slurp(run);
  const auto before_time = fs::last_write_time(run);
  EvalOptions o = eval_opts(run);
  o.combine = "vote";
  const json vote = eval_json(o);  // eval --combine vote --json: printed, nothing written
  CHECK(vote["combine"] == "vote");
  o.split = "val";
  o.combine = "mean_prob";
  eval_json(o);
  o.split.reset();
  o.json = false;
  capture(1, [&] { CHECK(run_eval(o) == kExitOk); });  // the table
  CHECK(slurp(run) == before);
  CHECK(fs::last_write_time(run) == before_time);
  // Files of this run in the scratch directory (temporary files would start with ".readonly").
  const auto files_of_run = [&] {
    int n = 0;
    for (const auto& e : fs::directory_iterator(run.parent_path())) n += e.path().filename().string().find("readonly") != std::string::npos;
    return n;
  };
  const int files = files_of_run();

  // --out naming the run file is refused: storing in it is what --save is for.
  o.out = run.string();
  auto [rc, err] = eval_error(o);
  CHECK(rc == kExitUsage);
  CHECK_MESSAGE(err.find("is the run file; to store the results in it, use --save NAME") != std::string::npos, err);
  o.out.reset();
  o.save = "test/../x";
  std::tie(rc, err) = eval_error(o);
  CHECK(rc == kExitUsage);
  CHECK_MESSAGE(err.find("is not a record name") != std::string::npos, err);
  // Training's record is replaced only with --force.
  o.save = "test";
  o.combine = "vote";
  std::tie(rc, err) = eval_error(o);
  CHECK(rc == kExitUsage);
  CHECK_MESSAGE(err.find("already has a record 'test'") != std::string::npos, err);
  CHECK(slurp(run) == before);
  CHECK(files_of_run() == files);

  o.save = "test-vote";
  eval_json(o);
  const RunFile saved = read_run_file(run.string());
  CHECK(find_eval(saved, "test")->combine == "mean_prob");
  CHECK(find_eval(saved, "test-vote")->combine == "vote");
  CHECK(saved.find_predictions("test-vote") != nullptr);
  CHECK(files_of_run() == files);
  o.save = "test";
  o.force = true;
  eval_json(o);
  CHECK(find_eval(read_run_file(run.string()), "test")->combine == "vote");
}

TEST_CASE("eval --out writes elsewhere and leaves the run file as it was") {
  const fs::path run = train_run("out", spirals_yaml(3, 5));
  const std::string before = slurp(run);
  EvalOptions o = eval_opts(run);
  o.out = scratch("report.json").string();
  const json printed = eval_json(o);
  CHECK(json::parse(slurp(*o.out)) == printed);
  o.out = scratch("copy.h5").string();
  o.split = "val";
  eval_json(o);
  CHECK(find_eval(read_run_file(*o.out), "val") != nullptr);
  CHECK(slurp(run) == before);
}

TEST_CASE("eval: the table names the best member, the member mean ± std and the ensemble") {
  const fs::path run = train_run("table", spirals_yaml(4, 10));
  int rc = -1;
  const std::string table = capture(1, [&] { rc = run_eval(eval_opts(run)); });
  CHECK(rc == kExitOk);
  for (const char* part : {"best #", "members mean ± std", "ensemble", "accuracy", "log_loss", "ece",
                           "members ranked on the val split by accuracy", "mutual information", "confusion matrix"})
    CHECK_MESSAGE(table.find(part) != std::string::npos, part);
}

TEST_CASE("eval: bad input exits 2 with a clear message and changes nothing") {
  std::string yaml = spirals_yaml(2, 3);
  yaml.replace(yaml.find("{train: 0.7, val: 0.1, test: 0.2}"), 33, "{train: 0.8, test: 0.2}");
  const fs::path run = train_run("bad", yaml);
  const std::string before = slurp(run);
  EvalOptions o = eval_opts(run);
  std::string want;
  SUBCASE("missing run file") {
    o.run_path = scratch("nope.h5").string();
    want = "does not exist";
  }
  SUBCASE("not a run file") {
    o.run_path = write_file("text.h5", "hello").string();
    want = "is not an HDF5 file";
  }
  SUBCASE("another format version") {
    const fs::path other = scratch("v2.h5");
    fs::copy_file(run, other, fs::copy_options::overwrite_existing);
    const hid_t f = H5Fopen(other.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
    const hid_t a = H5Aopen(f, "format_version", H5P_DEFAULT);
    const int v = 99;
    H5Awrite(a, H5T_NATIVE_INT, &v);
    H5Aclose(a);
    H5Fclose(f);
    tn::test::reseal(other.string());
    o.run_path = other.string();
    want = "has format_version 99, but this turbanet reads only format_version 1";
  }
  SUBCASE("missing parameters") {
    const fs::path other = scratch("noparams.h5");
    fs::copy_file(run, other, fs::copy_options::overwrite_existing);
    const hid_t f = H5Fopen(other.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
    H5Ldelete(f, "/params", H5P_DEFAULT);
    H5Fclose(f);
    tn::test::reseal(other.string());
    o.run_path = other.string();
    want = "has no /params";
  }
  SUBCASE("a split the run does not have") {
    o.split = "val";
    want = "the run has no val split";
  }
  SUBCASE("data with other feature columns") {
    o.data = write_file("other.csv", "a,b,label\n1,2,0\n3,4,1\n").string();
    want = "column 'x' is not in the header";
  }
  SUBCASE("data with a class the run does not know") {
    o.data = write_file("classes.csv", "x,y,label\n1,2,0\n3,4,7\n").string();
    want = "class '7' is not one of the run's classes";
  }
  SUBCASE("a config whose data has another feature count") {
    const fs::path csv = write_file("three.csv", "a,b,c,label\n1,2,3,0\n4,5,6,1\n");
    o.data = write_file("three.yaml", "data: {source: {type: csv, path: " + csv.string() + ", target: label}}\n").string();
    want = "the data has 3 features, but the model takes 2";
  }
  SUBCASE("--split together with --data") {
    o.split = "test";
    o.data = "x.csv";
    want = "use one or the other";
  }
  SUBCASE("an unknown combination rule") {
    o.combine = "median";
    want = "unknown rule 'median'";
  }
  SUBCASE("an --out that is neither JSON nor HDF5") {
    o.out = scratch("out.txt").string();
    want = "must end in .json";
  }
  const auto [rc, err] = eval_error(o);
  CHECK(rc == kExitUsage);
  CHECK_MESSAGE(err.find(want) != std::string::npos, err);
  CHECK(slurp(run) == before);
}

TEST_CASE("eval: a result that cannot be written exits 1") {
  const fs::path run = train_run("io", spirals_yaml(2, 3));
  const fs::path blocker = write_file("blocker", "a file, not a directory");
  EvalOptions o = eval_opts(run);
  o.out = (blocker / "copy.h5").string();
  const auto [rc, err] = eval_error(o);
  CHECK(rc == kExitIo);
  CHECK(err.find("cannot create directory") != std::string::npos);
}

TEST_CASE("eval --data: a labeled CSV with the run's columns, in any order, by name") {
  std::string yaml = spirals_yaml(4, 20);
  const fs::path run = train_run("data", yaml);
  const json test = eval_json(eval_opts(run));
  // The same test samples written as a CSV with shuffled columns and an extra one.
  const RunFile r = read_run_file(run.string());
  const Config cfg = parse_config(r.config_yaml, "run");
  const PreparedData d = prepare_data(load_dataset(cfg.data, true), cfg.data);
  std::string csv = "label,note,y,x\n";
  for (int i = 0; i < d.test.n; ++i)
    csv += std::to_string(static_cast<int>(d.test.y[i])) + ",n," + fmt::format("{:.9g},{:.9g}\n", d.test.X[2 * i + 1], d.test.X[2 * i]);
  EvalOptions o = eval_opts(run);
  o.data = write_file("test-points.csv", csv).string();
  o.save = "new-points";
  const json j = eval_json(o);
  CHECK(j["split"] == "data");
  CHECK(j["n_samples"] == d.test.n);
  CHECK(j["ensemble"]["accuracy"].get<double>() == test["ensemble"]["accuracy"].get<double>());
  CHECK(j["ensemble"]["log_loss"].get<double>() == doctest::Approx(test["ensemble"]["log_loss"].get<double>()));
  CHECK(find_eval(read_run_file(run.string()), "new-points")->source == *o.data);
}

TEST_CASE("eval: a member with NaN parameters is left out and reported by its global index") {
  std::string yaml = spirals_yaml(4, 10);
  yaml.replace(yaml.find("swarm: {size: 4}"), 16, "swarm: {size: 4, first_member: 3}");
  const fs::path run = train_run("nan", yaml);
  RunFile r = read_run_file(run.string());
  Array& W = r.params[0]["W"];  // [S, 2, 16]: member 1 (global 4) diverged
  for (std::size_t i = 32; i < 64; ++i) W.data[i] = std::numeric_limits<float>::quiet_NaN();
  write_run_file(run.string(), r);
  EvalOptions o = eval_opts(run);
  o.json = true;
  o.save = "test-nan";
  int rc = -1;
  std::string out;
  const std::string err = capture(2, [&] { out = capture(1, [&] { rc = run_eval(o); }); });
  REQUIRE(rc == kExitOk);
  CHECK(err.find("members 4 have non-finite predictions") != std::string::npos);
  const json j = json::parse(out);
  CHECK(j["excluded_members"] == std::vector<int>{4});
  CHECK(j["members"][1]["member"] == 4);
  CHECK(j["members"][1]["excluded"] == true);
  CHECK(j["members"][1]["accuracy"].is_null());
  double sum = 0;
  for (int s : {0, 2, 3}) sum += j["members"][s]["accuracy"].get<double>();
  CHECK(j["member_mean"]["accuracy"].get<double>() == doctest::Approx(sum / 3));
  CHECK(j["ensemble"]["accuracy"].is_number());
  CHECK(find_eval(read_run_file(run.string()), "test-nan")->excluded == std::vector<int>{4});
}

TEST_CASE("eval: per-member hyperparameters give the best member per metric and metrics by value") {
  std::string yaml = spirals_yaml(8, 30, "grid: [optimizer.lr, optimizer.weight_decay]\n");
  const std::string plain = "optimizer: {type: adam, lr: 0.02}";
  yaml.replace(yaml.find(plain), plain.size(),
               "optimizer: {type: adam, lr: {logspace: [1.0e-4, 1.0e-1], num: 4}, weight_decay: {values: [0, 0.001]}}");
  const fs::path run = train_run("hparams", yaml);
  const RunFile r = read_run_file(run.string());
  REQUIRE(r.members.hparams.size() == 2);
  CHECK(r.members.hparams[0].first == "optimizer.lr");
  const std::vector<double>& lr = r.members.hparams[0].second;
  CHECK(lr == std::vector<double>{1e-4, 1e-4, 1e-3, 1e-3, 1e-2, 1e-2, 1e-1, 1e-1});
  const json j = eval_json(eval_opts(run));
  EvalOptions on_val = eval_opts(run);
  on_val.split = "val";
  const json val = eval_json(on_val);
  REQUIRE(j.contains("hparams"));
  CHECK(j["hparams"]["keys"].get<std::vector<std::string>>() == std::vector<std::string>{"optimizer.lr", "optimizer.weight_decay"});
  // The best member per metric is the best of the members list on the validation split, with
  // its own values.
  for (const std::string metric : {"accuracy", "log_loss"}) {
    const bool up = metric == "accuracy";
    int best = 0;
    for (int s = 1; s < 8; ++s) {
      const double v = val["members"][s][metric].get<double>(), b = val["members"][best][metric].get<double>();
      if (up ? v > b : v < b) best = s;
    }
    const json& got = j["hparams"]["best"][metric];
    CHECK(got["member"] == best);
    CHECK(got["chosen_on"] == "val");
    CHECK(got["chosen_on_value"] == val["members"][best][metric]);
    CHECK(got["optimizer.lr"].get<double>() == lr[best]);
  }
  // By value: 4 learning rates of 2 members each; the mean is over those members.
  const json& groups = j["hparams"]["by_value"]["optimizer.lr"];
  REQUIRE(groups.size() == 4);
  for (int g = 0; g < 4; ++g) {
    CHECK(groups[g]["value"].get<double>() == lr[2 * g]);
    CHECK(groups[g]["members"] == 2);
    const double mean = (j["members"][2 * g]["accuracy"].get<double>() + j["members"][2 * g + 1]["accuracy"].get<double>()) / 2;
    CHECK(groups[g]["mean"]["accuracy"].get<double>() == doctest::Approx(mean));
  }
  CHECK(j["hparams"]["by_value"]["optimizer.weight_decay"][1]["members"] == 4);
  // The readable table has the same sections.
  int rc = -1;
  const std::string table = capture(1, [&] { rc = run_eval(eval_opts(run)); });
  CHECK(rc == kExitOk);
  CHECK(table.find("best member per metric, chosen on the val split") != std::string::npos);
  CHECK(table.find("by optimizer.lr:") != std::string::npos);
}
