// Live TensorBoard logs (train.tensorboard, --tensorboard; run/tensorboard_log.h): read back
// with TensorBoard's own reader they are the run file's histories (whole swarms, swarms trained
// in chunks, members of several architectures), a resumed run continues them without duplicate
// steps as an uninterrupted run has them, the layout of runs follows train.tensorboard_runs and
// stays on resume, and bad directories and trainings the logs cannot follow exit 2 before
// anything is written.
#include <doctest/doctest.h>

#include <filesystem>
#include <map>
#include <set>
#include <string>

#include "backend/cpu/cpu_backend.h"
#include "cli_test_util.h"
#include "config_test_util.h"
#include "eval_test_util.h"
#include "data/dataset.h"
#include "data/member_sets.h"
#include "data/prepare.h"
#include "io/run_file.h"
#include "python_test_util.h"
#include "run/tensorboard_log.h"
#include "run/train_run.h"
#include "train/train_swarm.h"

using namespace evaltest;
using tn::test::logged;

namespace {

std::string tensorboard_python() { return tn::test::test_venv_python("tensorboard, h5py"); }

// Options training `yaml` (saved as name.yaml) into name.h5 with logs in `logs`.
tn::TrainOptions logged_run(const std::string& name, const std::string& yaml, const fs::path& logs) {
  tn::TrainOptions o;
  o.config_path = write_file(name + ".yaml", yaml).string();
  o.out = scratch(name + ".h5").string();
  o.tensorboard = logs.string();
  o.force = true;
  o.verbosity = tn::Verbosity::Quiet;
  return o;
}

// The run directories under `logs` (its subdirectories' names).
std::set<std::string> run_dirs(const fs::path& logs) {
  std::set<std::string> out;
  for (const auto& e : fs::directory_iterator(logs))
    if (e.is_directory()) out.insert(e.path().filename().string());
  return out;
}

std::string check_with_tensorboard(const std::string& python, const fs::path& logs, const fs::path& run,
                                   const fs::path& reference = {}) {
  return tn::test::run_command(python + " " + TURBANET_SOURCE_DIR + "/scripts/check_tensorboard.py " + logs.string() +
                               " " + run.string() + " " + reference.string() + " 2>&1");
}

// spirals_yaml with its optimizer line replaced by `optimizer` (e.g. per-member learning rates).
std::string with_optimizer(int members, int epochs, const std::string& optimizer) {
  std::string y = spirals_yaml(members, epochs);
  const std::string line = "optimizer: {type: adam, lr: 0.02}";
  return y.replace(y.find(line), line.size(), optimizer);
}

// 4 members of two architectures (model.hidden [8] and [16, 4], alternating), `epochs` epochs.
std::string architectures_yaml(int epochs) {
  std::string y = spirals_yaml(4, epochs);
  const std::string layers = "model:\n  layers:\n    - {type: dense, units: 16, activation: tanh}\n";
  return y.replace(y.find(layers), layers.size(), "model:\n  hidden: {values: [[8], [16, 4]]}\n  layers:\n");
}

const char* kSkip = "SKIPPED: no .venv-test with tensorboard; run scripts/install-test-venv.sh (scripts/test.sh does)";

}  // namespace

TEST_CASE("tensorboard logs read back with TensorBoard's reader are the run file's histories, with hparams sessions") {
  const std::string python = tensorboard_python();
  if (python.empty()) {
    MESSAGE(kSkip);
    return;
  }
  const fs::path logs = scratch("tb-members");
  fs::remove_all(logs);
  tn::TrainOptions o = logged_run("tb-members", with_optimizer(4, 6, "optimizer: {type: adam, lr: {values: [0.01, 0.03]}}"), logs);
  REQUIRE(tn::run_train(o) == tn::kExitOk);
  CHECK(run_dirs(logs) == std::set<std::string>{"ensemble", "member-0", "member-1", "member-2", "member-3", "swarm"});
  const std::string out = check_with_tensorboard(python, logs, *o.out);
  INFO(out);
  CHECK(out.rfind("ok: 6 runs, 4 members", 0) == 0);
}

TEST_CASE("a resumed run continues its tensorboard logs without duplicate steps, as the uninterrupted run has them") {
  const std::string python = tensorboard_python();
  if (python.empty()) {
    MESSAGE(kSkip);
    return;
  }
  const std::string yaml = spirals_yaml(3, 3, "");
  const fs::path ref_logs = scratch("tb-uninterrupted"), logs = scratch("tb-resumed");
  fs::remove_all(ref_logs);
  fs::remove_all(logs);
  tn::TrainOptions u = logged_run("tb-uninterrupted", yaml, ref_logs);
  u.set = {"train.epochs=6"};
  REQUIRE(tn::run_train(u) == tn::kExitOk);
  // Trained 3 epochs with a checkpoint, then continued to 6: the logs hold epochs 4-6 that the
  // checkpoint of epoch 3 has not, as when a run is killed after its logs ran past its last
  // checkpoint. Resuming from that checkpoint again must drop them before appending.
  tn::TrainOptions a = logged_run("tb-resumed", yaml, logs);
  a.set = {"train.checkpoint.every_epochs=3"};
  REQUIRE(tn::run_train(a) == tn::kExitOk);
  const fs::path epoch3 = scratch("tb-resumed-epoch3.ckpt.h5");
  fs::copy_file(scratch("tb-resumed.ckpt.h5"), epoch3, fs::copy_options::overwrite_existing);
  a.set.push_back("train.epochs=6");
  a.resume = epoch3.string();
  REQUIRE(tn::run_train(a) == tn::kExitOk);
  REQUIRE(tn::run_train(a) == tn::kExitOk);  // from epoch 3 again, over logs that reach epoch 6
  const std::string out = check_with_tensorboard(python, logs, *a.out, ref_logs);
  INFO(out);
  CHECK(out.rfind("ok: 5 runs, 3 members", 0) == 0);
}

TEST_CASE("tensorboard_runs: groups share their per-member values, and auto logs a large swarm's summary only") {
  const fs::path logs = scratch("tb-groups");
  fs::remove_all(logs);
  tn::TrainOptions o = logged_run(
      "tb-groups", with_optimizer(6, 2, "optimizer: {type: adam, lr: {values: [0.01, 0.02, 0.03]}}"), logs);
  o.set = {"train.tensorboard_runs=groups"};
  REQUIRE(tn::run_train(o) == tn::kExitOk);
  CHECK(run_dirs(logs) == std::set<std::string>{"ensemble", "group-0", "group-1", "group-2", "swarm"});
  fs::remove_all(logs);
  o = logged_run("tb-auto", spirals_yaml(tn::kTensorBoardAutoRuns + 1, 1), logs);
  REQUIRE(tn::run_train(o) == tn::kExitOk);
  CHECK(run_dirs(logs) == std::set<std::string>{"ensemble", "swarm"});
}

TEST_CASE("bad tensorboard directories exit 2 with the reason before anything is written") {
  const fs::path logs = scratch("tb-bad");
  fs::remove_all(logs);
  const std::string yaml = spirals_yaml(2, 1);
  const auto refused = [&](tn::TrainOptions o, const std::string& why) {
    fs::remove(*o.out);
    int rc = -1;
    const std::string text = logged([&] { rc = tn::run_train(o); });
    CHECK_MESSAGE(rc == tn::kExitUsage, text);
    CHECK_MESSAGE(text.find(why) != std::string::npos, text);
    CHECK_FALSE(fs::exists(*o.out));
  };
  tn::TrainOptions o = logged_run("tb-bad", yaml, logs);
  o.tensorboard = o.config_path;  // the config file, an input
  refused(o, "an input of this run");
  const fs::path file = write_file("tb-bad-file", "x");
  o.tensorboard = file.string();
  refused(o, "exists and is not a directory");
  o.tensorboard = (file / "logs").string();
  refused(o, "cannot create directory");
  o.tensorboard = logs.string();
  o.set = {"train.tensorboard_runs=runs"};
  refused(o, "tensorboard_runs");
  o.set.clear();
  o.shard = "0/2";
  refused(o, "shard 0 of 2");
  o.shard.reset();
  fs::create_directories(logs / "other");  // another experiment's run in the same log directory
  const fs::path other = write_file("tb-bad/other/events.out.tfevents.1.host", "theirs");
  REQUIRE(tn::run_train(o) == tn::kExitOk);  // --force: replaces this run's logs only
  CHECK(slurp(other) == "theirs");
  o.force = false;  // logs already there: not replaced without --force
  refused(o, "already holds TensorBoard logs");
}

TEST_CASE("members of several architectures log as they train: each member, the swarm, and a run per architecture") {
  const std::string python = tensorboard_python();
  if (python.empty()) {
    MESSAGE(kSkip);
    return;
  }
  const fs::path logs = scratch("tb-architectures");
  fs::remove_all(logs);
  const std::string yaml = architectures_yaml(4);
  tn::TrainOptions o = logged_run("tb-architectures", yaml, logs);
  REQUIRE(tn::run_train(o) == tn::kExitOk);
  CHECK(run_dirs(logs) == std::set<std::string>{"arch-0", "arch-1", "ensemble", "member-0", "member-1", "member-2",
                                                "member-3", "swarm"});
  const std::string out = check_with_tensorboard(python, logs, *o.out);
  INFO(out);
  CHECK(out.rfind("ok: 8 runs, 4 members", 0) == 0);
  CHECK(out.find("2 architectures") != std::string::npos);
}

TEST_CASE("members of several architectures resumed from a checkpoint continue their logs as the uninterrupted run has them") {
  const std::string python = tensorboard_python();
  if (python.empty()) {
    MESSAGE(kSkip);
    return;
  }
  const std::string yaml = architectures_yaml(2);
  const fs::path ref_logs = scratch("tb-arch-uninterrupted"), logs = scratch("tb-arch-resumed");
  fs::remove_all(ref_logs);
  fs::remove_all(logs);
  tn::TrainOptions u = logged_run("tb-arch-uninterrupted", yaml, ref_logs);
  u.set = {"train.epochs=4"};
  REQUIRE(tn::run_train(u) == tn::kExitOk);
  tn::TrainOptions a = logged_run("tb-arch-resumed", yaml, logs);
  a.set = {"train.checkpoint.every_epochs=2"};
  REQUIRE(tn::run_train(a) == tn::kExitOk);
  a.set.push_back("train.epochs=4");
  a.resume = scratch("tb-arch-resumed.ckpt.h5").string();
  REQUIRE(tn::run_train(a) == tn::kExitOk);
  const std::string out = check_with_tensorboard(python, logs, *a.out, ref_logs);
  INFO(out);
  CHECK(out.rfind("ok: 8 runs, 4 members", 0) == 0);
}

TEST_CASE("an interrupted run of several architectures at different epochs resumes its logs without gaps or duplicates") {
  const std::string python = tensorboard_python();
  if (python.empty()) {
    MESSAGE(kSkip);
    return;
  }
  const fs::path logs = scratch("tb-arch-cut");
  fs::remove_all(logs);
  tn::TrainOptions o = logged_run("tb-arch-cut", architectures_yaml(4), logs);
  const auto train = [&](const std::string& resume, int stop_at_poll) {
    tn::Config cfg = tn::parse_config(slurp(o.config_path), o.config_path,
                                      {{"output.path", "'" + *o.out + "'"}, {"train.tensorboard", "'" + logs.string() + "'"}});
    tn::TrainingRun run(cfg, 1, true, std::chrono::steady_clock::now(), resume);
    int polls = 0;
    tn::TrainCallbacks cb;
    if (stop_at_poll > 0) cb.stop = [&] { return ++polls >= stop_at_poll; };
    return run.run(cb);
  };
  // One thread trains the architectures one after another: stopped while the second trains.
  REQUIRE(train("", 11).out.interrupted);  // of 16 polls
  const fs::path cut = scratch("tb-arch-cut-interrupted.h5");
  fs::copy_file(*o.out, cut, fs::copy_options::overwrite_existing);
  const tn::RunFile f = tn::read_run_file(cut.string());
  REQUIRE(f.state.architectures.size() == 2);
  REQUIRE(f.state.architectures[0].epoch != f.state.architectures[1].epoch);
  REQUIRE_FALSE(train(cut.string(), 0).out.interrupted);
  const std::string out = check_with_tensorboard(python, logs, *o.out);
  INFO(out);
  CHECK(out.rfind("ok: 8 runs, 4 members", 0) == 0);
}

TEST_CASE("a swarm trained in chunks logs every member and the swarm's curves as the whole swarm trained at once") {
  const std::string python = tensorboard_python();
  if (python.empty()) {
    MESSAGE(kSkip);
    return;
  }
  // Without early stopping every chunk trains every epoch; with it the chunks end at different
  // epochs, and the swarm's later epochs wait for the end of training.
  const std::string lr = "optimizer: {type: adam, lr: {values: [0.01, 0.03]}}";
  std::string stopping = with_optimizer(6, 14, "optimizer: {type: adam, lr: {values: [0.3, 0.3, 0.3, 0.3, 0.001, 0.001]}}");
  stopping.replace(stopping.find("train: {epochs: 14"), 18, "train: {early_stopping: {metric: val_loss, patience: 1}, epochs: 14");
  for (const auto& [name, yaml] : {std::pair<std::string, std::string>("tb-chunks", with_optimizer(6, 4, lr)),
                                   std::pair<std::string, std::string>("tb-chunks-stopping", stopping)}) {
    CAPTURE(name);
    const fs::path whole_logs = scratch(name + "-whole"), logs = scratch(name);
    fs::remove_all(whole_logs);
    fs::remove_all(logs);
    tn::TrainOptions o = logged_run(name + "-whole", yaml, whole_logs);
    REQUIRE(tn::run_train(o) == tn::kExitOk);
    // The same swarm in chunks of 2 members, as on a device too small for it (the members are
    // bitwise those of the whole swarm): chunk after chunk, each with all its epochs.
    tn::Config cfg = tn::parse_config(yaml, name + ".yaml");
    cfg.train.tensorboard = logs.string();
    const tn::PreparedData data = tn::prepare_data(tn::load_dataset(cfg.data, true), cfg.data);
    const tn::MemberSets sets = tn::make_member_sets(cfg, data);
    tn::CpuBackend be(1);
    std::map<int, int> last_epoch;  // of each chunk
    {
      tn::TensorBoardLog log(cfg, nullptr);
      tn::TrainControl control;
      control.member_epochs = true;
      const tn::TrainOutput t = tn::train_swarm_in_chunks(cfg, data, sets, be, [&](const tn::EpochStats& st) {
        last_epoch[st.chunk] = st.epoch;
        log.epoch(st);
      }, 2, control);
      log.finished(t.epochs, t.diverged_epoch, {}, false);
    }
    CHECK(last_epoch.size() == 3);
    if (name == "tb-chunks-stopping") CHECK(last_epoch[1] != last_epoch[3]);
    fs::remove_all(logs / "ensemble");  // the ensemble's scores are the whole run's (not trained here)
    fs::copy(whole_logs / "ensemble", logs / "ensemble", fs::copy_options::recursive);
    const std::string out = check_with_tensorboard(python, logs, *o.out, whole_logs);
    INFO(out);
    CHECK(out.rfind("ok: 8 runs, 6 members", 0) == 0);
  }
}

TEST_CASE("a resumed run keeps its tensorboard runs: another layout in the same directory exits 2") {
  const fs::path logs = scratch("tb-layout");
  fs::remove_all(logs);
  tn::TrainOptions o = logged_run("tb-layout", with_optimizer(4, 2, "optimizer: {type: adam, lr: {values: [0.01, 0.03]}}"), logs);
  o.set = {"train.checkpoint.every_epochs=2"};
  REQUIRE(tn::run_train(o) == tn::kExitOk);
  o.resume = scratch("tb-layout.ckpt.h5").string();
  o.set = {"train.epochs=3", "train.tensorboard_runs=groups"};
  int rc = -1;
  std::string text = logged([&] { rc = tn::run_train(o); });
  CHECK(rc == tn::kExitUsage);
  CHECK_HAS(text, "train.tensorboard_runs is groups");
  CHECK_HAS(text, "written with train.tensorboard_runs auto (runs: members)");
  CHECK(run_dirs(logs).count("group-0") == 0);
  o.set = {"train.epochs=3", "train.tensorboard_runs=members"};  // what auto resolved to: the same runs
  text = logged([&] { rc = tn::run_train(o); });
  CHECK_MESSAGE(rc == tn::kExitOk, text);
}

TEST_CASE("train.tensorboard and tensorboard_runs parse, round-trip, and bad values name the key and the choices") {
  const tn::Config c = tn::test::parse(tn::test::with("train: {tensorboard: logs/tb, tensorboard_runs: groups}\n"));
  CHECK(c.train.tensorboard == "logs/tb");
  CHECK(c.train.tensorboard_runs == tn::TensorBoardRuns::Groups);
  const tn::Config back = tn::parse_config(tn::to_yaml(c), "x");
  CHECK(back.train.tensorboard == "logs/tb");
  CHECK(back.train.tensorboard_runs == tn::TensorBoardRuns::Groups);
  CHECK(tn::to_yaml(tn::test::parse(tn::test::kMinimal)).find("tensorboard") == std::string::npos);
  const std::string bad = tn::test::error_of(tn::test::with("train: {tensorboard: logs, tensorboard_runs: runs}\n"));
  CHECK_HAS(bad, "train.tensorboard_runs");
  CHECK_HAS(bad, "members");
  CHECK_HAS(tn::test::error_of(tn::test::with("train: {tensorboard: ''}\n")), "must not be empty");
}

TEST_CASE("searches log every member as the run file has it: halving's stopped members end at their rung, PBT goes on") {
  const std::string python = tensorboard_python();
  if (python.empty()) {
    MESSAGE(kSkip);
    return;
  }
  // 64 members, a quarter kept after epoch 2: the survivors continue packed into fewer blocks.
  const std::pair<const char*, std::string> searches[] = {
      {"tb-halving", spirals_yaml(64, 4, "search: {type: halving, rungs: [2], keep: 0.25}\n")},
      {"tb-pbt", with_optimizer(8, 4, "optimizer: {type: adam, lr: {values: [0.01, 0.03]}}") +
                     "search: {type: pbt, every_epochs: 2, perturb: {optimizer.lr: [0.8, 1.25]}}\n"}};
  for (const auto& [name, yaml] : searches) {
    const fs::path logs = scratch(name);
    fs::remove_all(logs);
    tn::TrainOptions o = logged_run(name, yaml, logs);
    REQUIRE(tn::run_train(o) == tn::kExitOk);
    const std::string out = check_with_tensorboard(python, logs, *o.out);
    INFO(name, ": ", out);
    CHECK(out.rfind("ok: ", 0) == 0);
  }
}

TEST_CASE("train --tensorboard DIR on the command line writes the logs there") {
  const fs::path dir = scratch("tb-cli"), logs = dir / "logs";
  fs::remove_all(dir);
  fs::create_directories(dir);
  write_file("tb-cli/run.yaml", spirals_yaml(2, 2));
  const auto [rc, out] = tn::test::run_binary_in(dir, {"train", "run.yaml", "--out", "run.h5", "--tensorboard", "logs", "-q"});
  INFO(out);
  REQUIRE(rc == 0);
  CHECK(run_dirs(logs) == std::set<std::string>{"ensemble", "member-0", "member-1", "swarm"});
}
