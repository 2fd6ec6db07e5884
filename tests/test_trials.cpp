// Ask/tell trials (train --trials FILE --trials-out RESULTS.json): member k of a trials swarm is
// bitwise the member trained alone with its trial's values as plain numbers; bad trials files
// exit 2 naming the row and column; the results name each trial's status (complete, pruned,
// diverged) and metrics; scripts/optuna_swarm.py runs a study on them (with Optuna installed).
#include <doctest/doctest.h>

#include <cstring>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "cli/commands/commands.h"
#include "cli_test_util.h"
#include "config/trials.h"
#include "io/run_file.h"
#include "python_test_util.h"
#include "run/trial_results.h"

using namespace tn;
using tn::test::logged;
using tn::test::slurp;
namespace fs = std::filesystem;

#define CHECK_HAS(msg, part) CHECK_MESSAGE((msg).find(part) != std::string::npos, (msg))

namespace {

fs::path scratch(const std::string& name) { return tn::test::scratch_path("trials", name); }
fs::path write(const std::string& name, const std::string& text) { return tn::test::write_text(scratch(name), text); }

// A config whose optimizer values the trials replace; halving when `search` is given.
fs::path config(const std::string& name, const std::string& extra = "") {
  return write(name + ".yaml",
               "name: t\nseed: 4\ndevice: cpu\nswarm: {size: 2}\nmodel:\n  layers:\n"
               "    - {type: dense, units: 8, activation: tanh}\n    - {type: dense, units: 2}\n"
               "loss: cross_entropy\noptimizer: {type: adam, lr: 0.01}\n"
               "data:\n  source: {type: spirals, n: 120}\n  split: {train: 0.6, val: 0.2, test: 0.2}\n"
               "  per_member: bootstrap\ntrain: {epochs: 6, batch_size: 16}\n" + extra);
}

int train(const fs::path& cfg, const std::string& out, std::optional<std::string> trials,
          std::optional<std::string> trials_out = std::nullopt, std::vector<std::string> set = {}, std::string* log = nullptr) {
  TrainOptions o;
  o.config_path = cfg.string();
  o.out = scratch(out).string();
  o.force = true;
  o.threads = 2;
  o.trials = std::move(trials);
  o.trials_out = std::move(trials_out);
  o.set = std::move(set);
  int rc = -1;
  const std::string text = logged([&] { rc = run_train(o); });
  if (log) *log = text;
  return rc;
}

bool same_bits(const Array& a, const Array& b) {
  return a.data.size() == b.data.size() && std::memcmp(a.data.data(), b.data.data(), a.data.size() * sizeof(float)) == 0;
}

// Member s's slice of a [S, ...] array.
Array member_slice(const Array& a, std::size_t s) {
  Array r;
  const std::size_t per = a.data.size() / a.shape[0];
  r.data.assign(a.data.begin() + static_cast<std::ptrdiff_t>(s * per), a.data.begin() + static_cast<std::ptrdiff_t>((s + 1) * per));
  return r;
}

}  // namespace

TEST_CASE("trials: member k of a trials swarm equals the member trained alone with its values, bitwise") {
  const fs::path cfg = config("alone");
  const fs::path csv = write("t.csv", "# ask/tell round 1\ntrial,optimizer.lr,optimizer.weight_decay\n"
                                      "11,0.03,0\n12,0.001,0.001\n13, 0.2 ,1e-4\n");
  REQUIRE(train(cfg, "swarm.h5", csv.string()) == kExitOk);
  const RunFile swarm = read_run_file(scratch("swarm.h5").string());
  CHECK(swarm.meta.swarm_size == 3);
  CHECK(swarm.members.hparams.size() == 2);
  const char* lrs[] = {"0.03", "0.001", "0.2"};
  const char* wds[] = {"0", "0.001", "1e-4"};
  for (int k = 0; k < 3; ++k) {
    CAPTURE(k);
    REQUIRE(train(cfg, "alone.h5", std::nullopt, std::nullopt,
                  {"swarm.size=1", "swarm.first_member=" + std::to_string(k), std::string("optimizer.lr=") + lrs[k],
                   std::string("optimizer.weight_decay=") + wds[k]}) == kExitOk);
    const RunFile alone = read_run_file(scratch("alone.h5").string());
    for (std::size_t l = 0; l < swarm.params.size(); ++l)
      for (std::size_t t = 0; t < swarm.params[l].tensors.size(); ++t)
        CHECK(same_bits(member_slice(swarm.params[l].tensors[t].second, k), alone.params[l].tensors[t].second));
    CHECK(same_bits(member_slice(swarm.val_loss, k), alone.val_loss));
  }
  // Quoted cells, a byte order mark, a plus sign and comment lines read the same.
  const fs::path odd = write("odd.csv", "\xEF\xBB\xBF\"trial\",\"optimizer.lr\",optimizer.weight_decay\r\n"
                                        "# first\r\n11,+0.03,0\r\n  # second\r\n12,0.001,\"0.001\"\r\n13,0.2,1e-4\r\n");
  REQUIRE(train(cfg, "odd.h5", odd.string()) == kExitOk);
  CHECK(same_bits(read_run_file(scratch("odd.h5").string()).params[0].tensors[0].second, swarm.params[0].tensors[0].second));
  // The same trials as JSON give the same run.
  const fs::path json = write("t.json", R"({"trials": [{"trial": 11, "optimizer.lr": 0.03, "optimizer.weight_decay": 0},
    {"trial": 12, "optimizer.lr": 0.001, "optimizer.weight_decay": 0.001},
    {"trial": 13, "optimizer.lr": 0.2, "optimizer.weight_decay": 1e-4}]})");
  REQUIRE(train(cfg, "json.h5", json.string()) == kExitOk);
  CHECK(same_bits(read_run_file(scratch("json.h5").string()).params[0].tensors[0].second, swarm.params[0].tensors[0].second));
}

TEST_CASE("trials: --trials-out reports each trial's status, best epoch, histories and metrics") {
  const fs::path cfg = config("out", "search: {type: halving, rungs: [3], keep: 0.5}\n");
  const fs::path csv = write("s.csv", "trial,optimizer.lr\na,0.05\nb,0.0001\nc,0.02\nd,1e30\n");
  const std::string out = scratch("results.json").string();
  std::string log;
  REQUIRE(train(cfg, "s.h5", csv.string(), out, {"optimizer.type=sgd"}, &log) == kExitOk);
  CHECK(log.find("wrote the results of 4 trials") != std::string::npos);
  const nlohmann::json r = nlohmann::json::parse(slurp(out));
  CHECK(r["eval_split"] == "test");
  REQUIRE(r["trials"].size() == 4);
  std::map<std::string, nlohmann::json> by;
  for (const auto& t : r["trials"]) by[t["trial"]] = t;
  CHECK(by["d"]["params"]["optimizer.lr"] == 1e30);
  // The rung after epoch 3 keeps the better half by validation loss; the huge rate is cut.
  const RunFile f = read_run_file(scratch("s.h5").string());
  const std::vector<std::string> ids = {"a", "b", "c", "d"};
  for (int s = 0; s < 4; ++s) {
    int worse = 0;
    for (int o = 0; o < 4; ++o) worse += f.val_loss.data[static_cast<std::size_t>(o) * 6 + 2] > f.val_loss.data[static_cast<std::size_t>(s) * 6 + 2];
    const bool kept = worse >= 2;
    CAPTURE(s);
    CHECK(by[ids[s]]["status"] == (kept ? "complete" : "pruned"));
    CHECK(by[ids[s]]["epochs"] == (kept ? 6 : 3));
  }
  CHECK(by["d"]["status"] == "pruned");
  for (int s = 0; s < 4; ++s) {
    const nlohmann::json& t = r["trials"][static_cast<std::size_t>(s)];
    CAPTURE(s);
    CHECK(t["member"] == s);
    const int best = t["best_epoch"];
    REQUIRE(best >= 1);
    CHECK(t["best"]["val_loss"].get<double>() == doctest::Approx(f.val_loss.data[static_cast<std::size_t>(s) * 6 + best - 1]));
    for (int e = 1; e <= t["epochs"].get<int>(); ++e)
      CHECK(f.val_loss.data[static_cast<std::size_t>(s) * 6 + e - 1] >= t["best"]["val_loss"].get<double>() - 1e-7);
    CHECK(t["eval"]["accuracy"].is_number());
  }
  // A diverged member (here marked so in the file read back) is reported as such, to its epoch.
  RunFile marked = f;
  marked.diverged_epoch = {-1, -1, 2, -1};
  const nlohmann::json d = nlohmann::json::parse(trial_results_json(read_trials(csv.string()), marked, "x.h5"));
  CHECK(d["trials"][2]["status"] == "diverged");
  CHECK(d["trials"][2]["epochs"] == 2);
  // An existing results file is kept unless --force (checked before training).
  TrainOptions o;
  o.config_path = cfg.string();
  o.out = scratch("s2.h5").string();
  o.trials = csv.string();
  o.trials_out = out;
  o.set = {"optimizer.type=sgd"};
  CHECK(logged([&] { CHECK(run_train(o) == kExitUsage); }).find("already exists") != std::string::npos);
  CHECK_FALSE(fs::exists(scratch("s2.h5")));
}

TEST_CASE("trials: bad files and options exit 2 naming the row and column") {
  const fs::path cfg = config("bad");
  const auto error = [&](const std::string& name, const std::string& text, std::vector<std::string> set = {}) {
    std::string log;
    CHECK(train(cfg, "bad.h5", write(name, text).string(), std::nullopt, std::move(set), &log) == kExitUsage);
    return log;
  };
  CHECK_HAS(error("a.csv", "optimizer.lr,optimizer.lrr\n0.1,2\n"), "row 1 (the header): column 'optimizer.lrr' is not a per-member key; did you mean 'optimizer.lr'?");
  CHECK_HAS(error("b.csv", "optimizer.lr\n0.1\n\n# a comment\n-1\n"), "b.csv: row 5 (trial '1'), column optimizer.lr: value -1 is out of range");
  CHECK_HAS(error("c.csv", "optimizer.lr,optimizer.eps\n0.1,1e-8\n0.2,abc\n"), "row 3, column optimizer.eps: 'abc' is not a finite number");
  CHECK_HAS(error("d.csv", "optimizer.lr,optimizer.eps\n0.1\n"), "row 2: has 1 cells, the header 2 columns");
  CHECK_HAS(error("e.csv", "trial,optimizer.lr\nx,0.1\nx,0.2\n"), "row 3: the trial name 'x' is used twice");
  CHECK_HAS(error("f.csv", "optimizer.lr,optimizer.lr\n0.1,0.2\n"), "column 'optimizer.lr' is given twice");
  CHECK_HAS(error("g.json", R"([{"optimizer.lr": 0.1}, {"optimizer.momentum": 0.1}])"), "g.json: trial 2: has no 'optimizer.lr'");
  CHECK_HAS(error("h.json", R"([{"optimizer.lr": "fast"}])"), "trial 1, key optimizer.lr: \"fast\" is not a finite number");
  CHECK_HAS(error("i.json", "[{"), "is not valid JSON");
  CHECK_HAS(error("i2.json", R"([{"optimizer.lr": 0.1, "optimizer.lr": 0.2}])"), "gives the key 'optimizer.lr' twice");
  CHECK_HAS(error("j.txt", "optimizer.lr\n0.1\n"), "must end in .csv or .json");
  CHECK_HAS(error("k.csv", "optimizer.lr\n"), "has no trials");
  CHECK_HAS(error("l.csv", "optimizer.momentum\n0.5\n1.5\n", {"optimizer.type=sgd"}),
            "row 3 (trial '1'), column optimizer.momentum: value 1.5 is out of range");
  CHECK_HAS(error("n.csv", "optimizer.lr\n0.1\n", {"optimizer.weight_decay={values: [0, 0.1]}"}),
            "the configuration gives optimizer.weight_decay per member, but the trials file has no column for it");
  CHECK_HAS(error("o.csv", "optimizer.lr\n0.1\n0.2\n0.3\n0.4\n",
                  {"optimizer.lr={values: [0.1, 0.2]}", "train.epochs=4", "swarm.size=4",
                   "search={type: pbt, every_epochs: 2, perturb: {optimizer.lr: [0.8]}}"}),
            "search pbt replaces members' state");
  CHECK_HAS(error("p.csv", "optimizer.lr\n1e-400\n"), "'1e-400' is outside the range of a double-precision number");
  CHECK_HAS(error("m.csv", "optimizer.lr\n0.1\n", {"optimizer.weight_decay={values: [0, 0.1]}", "optimizer.lr={values: [0.1, 0.2]}",
                                                   "grid=[optimizer.lr, optimizer.weight_decay]", "swarm.size=4"}), "remove `grid`");
  std::string log;
  fs::create_directories(scratch("dir.csv"));
  CHECK(train(cfg, "bad.h5", scratch("dir.csv").string(), std::nullopt, {}, &log) == kExitUsage);
  CHECK_HAS(log, "dir.csv: is not a file");
  TrainOptions o;
  o.config_path = cfg.string();
  o.trials_out = scratch("x.json").string();
  log = logged([&] { CHECK(run_train(o) == kExitUsage); });
  CHECK_HAS(log, "--trials-out reports the trials of --trials FILE");
}

TEST_CASE("trials: bad values in several columns are all reported, each naming its row and column") {
  const fs::path cfg = config("several");
  std::string log;
  CHECK(train(cfg, "several.h5", write("several.csv", "optimizer.lr,optimizer.momentum\n0.1,0.5\n-1,0.5\n0.1,1.5\n").string(),
              std::nullopt, {"optimizer.type=sgd"}, &log) == kExitUsage);
  CHECK_HAS(log, "several.csv: row 3 (trial '1'), column optimizer.lr: value -1 is out of range");
  CHECK_HAS(log, "several.csv: row 4 (trial '2'), column optimizer.momentum: value 1.5 is out of range");
  CHECK_HAS(log, "2 errors in");
}

TEST_CASE("trials: JSON numbers beyond a double's range and text that is not UTF-8 exit 2 naming the trial") {
  const fs::path cfg = config("range");
  const auto error = [&](const std::string& name, const std::string& text) {
    std::string log;
    CHECK(train(cfg, "range.h5", write(name, text).string(), std::nullopt, {}, &log) == kExitUsage);
    return log;
  };
  // (an internal error, exit 1, before: nlohmann's "number overflow")
  CHECK_HAS(error("a.json", R"([{"optimizer.lr": 0.1}, {"optimizer.lr": 1e999}])"),
            "a.json: trial 2, key optimizer.lr: '1e999' is outside the range of a double-precision number");
  CHECK_HAS(error("b.json", R"({"trials": [{"trial": 7, "optimizer.lr": -2e400}]})"),
            "b.json: trial 1, key optimizer.lr: '-2e400' is outside the range");
  CHECK_HAS(error("c.json", R"([{"optimizer.lr": 0.1, "trial": 1e999}])"), "trial 1, key trial: '1e999'");
  CHECK_HAS(error("d.json", R"([{"optimizer.lr": NaN}])"), "is not valid JSON");
  CHECK_HAS(error("e.csv", "optimizer.lr\ninf\n"), "row 2, column optimizer.lr: 'inf' is not a finite number");
  CHECK_HAS(error("f.csv", "trial,optimizer.lr\ncaf\xE9,0.1\n"), "f.csv: line 2, column 4: byte 0xE9 is not valid UTF-8");
  const std::string log = error("g.json", "[{\"optimizer.lr\": 0.1,\n  \"trial\": \"caf\xE9\"}]");
  CHECK_HAS(log, "g.json: line 2, column 16: byte 0xE9 is not valid UTF-8");
  CHECK(log.find('\xE9') == std::string::npos);
}

TEST_CASE("trials: scripts/optuna_swarm.py runs a study round by round and Optuna's sequential loop") {
  const char* env = std::getenv("TURBANET_TEST_VENV");
  const fs::path py = (env ? fs::path(env) : fs::path(TURBANET_SOURCE_DIR) / ".venv-test") / "bin" / "python";
  if (!fs::exists(py) || std::system((py.string() + " -c 'import optuna' >/dev/null 2>&1").c_str()) != 0) {
    MESSAGE("SKIPPED: no .venv-test with optuna; run scripts/install-test-venv.sh (PyPI)");
    return;
  }
  const fs::path cfg = config("optuna");
  const fs::path summary = scratch("optuna.json");
  const std::string cmd = py.string() + " " + TURBANET_SOURCE_DIR + "/scripts/optuna_swarm.py " + cfg.string() +
                          " --rounds 2 --batch 3 --mode both --param optimizer.lr=log:1e-3:1e-1 --turbanet " +
                          TURBANET_BINARY + " --out " + summary.string() + " 2>&1";
  const std::string out = tn::test::run_command(cmd);
  INFO(out);
  REQUIRE(fs::exists(summary));
  const nlohmann::json j = nlohmann::json::parse(slurp(summary));
  REQUIRE(j["results"].size() == 2);
  for (const auto& r : j["results"]) {
    CHECK(r["trials"] == 6);
    CHECK(r["complete"] == 6);
    CHECK(r["best_value"].is_number());
    CHECK(r["best_params"]["optimizer.lr"].get<double>() >= 1e-3);
  }
  CHECK(j["direction"] == "minimize");
}
