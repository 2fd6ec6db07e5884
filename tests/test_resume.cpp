// Checkpoints and --resume: a run stopped after some epochs, or between the steps of an epoch,
// and resumed (onto another thread count) is bitwise the uninterrupted run, for shared,
// bootstrap and group_by data, Adam and SGD with schedules, an LSTM and early stopping; a finished run extends with a larger
// train.epochs; resumes that would change the trajectory are refused naming the keys.
#include <doctest/doctest.h>

#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include "cli/commands/commands.h"
#include "io/run_file.h"
#include "cli_test_util.h"
#include "python_test_util.h"
#include "run/train_run.h"

using namespace tn;
using tn::test::logged;
using tn::test::slurp;
namespace fs = std::filesystem;

namespace {

fs::path scratch(const std::string& name) { return tn::test::scratch_path("resume", name); }
fs::path write_config(const std::string& name, const std::string& text) { return tn::test::write_text(scratch(name), text); }

std::string dense_yaml(const std::string& per_member, const std::string& optimizer, const std::string& schedule,
                       int epochs, const std::string& train_extra = "") {
  return "name: r\nseed: 5\ndevice: cpu\nswarm: {size: 5}\nmodel:\n  layers:\n    - {type: dense, units: 8, activation: tanh}\n"
         "    - {type: dense, units: 2}\nloss: cross_entropy\noptimizer: " + optimizer + "\nschedule: " + schedule +
         "\ndata:\n  source: {type: spirals, n: 96}\n  split: {train: 0.6, val: 0.2, test: 0.2}\n  per_member: " +
         per_member + "\ntrain: {epochs: " + std::to_string(epochs) + ", batch_size: 16" + train_extra + "}\n";
}

std::string lstm_group_yaml(int epochs) {
  return "name: r\nseed: 3\ndevice: cpu\nswarm: {size: 3}\nmodel:\n  layers:\n    - {type: lstm, units: 6}\n    - {type: dense, units: 1}\n"
         "loss: mse\noptimizer: {type: adam, lr: 0.01}\nschedule: {type: cosine, min_lr: 0.001}\n"
         "data:\n  source: {type: random_walk, series: 3, length: 90, seed: 5}\n"
         "  split: {train: 0.7, val: 0.15, test: 0.15}\n  per_member: {group_by: ticker}\n  normalize: standard\n"
         "  normalize_per_member: true\n  sequence: {window: 6, horizon: 1, target: close}\n"
         "train: {epochs: " + std::to_string(epochs) + ", batch_size: 16}\n";
}

// A path as a YAML string (GCC 12 misreports "'" + string as an overlapping copy).
std::string quoted(const fs::path& p) { return std::string("'").append(p.string()).append("'"); }

Config config_for(const std::string& yaml, const fs::path& out, const std::vector<Override>& more = {}) {
  std::vector<Override> ov = {{"output.path", quoted(out)}};
  ov.insert(ov.end(), more.begin(), more.end());
  return parse_config(yaml, "test", ov);
}

// Trains cfg with `threads`; stop_after > 0 stops it after that many epochs (the stop is
// polled right after the epoch's progress report), stop_at_poll > 0 at that poll of `stop`,
// which also comes between steps, from every worker; returns the result.
TrainResult train(const Config& cfg, int threads, int stop_after = 0, const std::string& resume = "",
                  int stop_at_poll = 0) {
  TrainingRun run(cfg, threads, true, std::chrono::steady_clock::now(), resume);
  std::atomic<int> polls{0};
  std::atomic<bool> epoch_done{false};
  TrainCallbacks cb;
  if (stop_after > 0) {
    cb.progress = [&](const EpochStats& st) { epoch_done = epoch_done || st.epoch >= stop_after; };
    cb.stop = [&] { return epoch_done.load(); };
  } else if (stop_at_poll > 0) {
    cb.stop = [&] { return ++polls >= stop_at_poll; };
  }
  return run.run(cb);
}

bool same_bits(const Array& a, const Array& b) {
  return a.shape == b.shape && a.data.size() == b.data.size() &&
         (a.data.empty() || std::memcmp(a.data.data(), b.data.data(), a.data.size() * sizeof(float)) == 0);
}

// Parameters, histories and predictions of two run files, bitwise.
void check_same_run(const fs::path& a_path, const fs::path& b_path) {
  const RunFile a = read_run_file(a_path.string()), b = read_run_file(b_path.string());
  REQUIRE(a.params.size() == b.params.size());
  for (std::size_t l = 0; l < a.params.size(); ++l)
    for (std::size_t t = 0; t < a.params[l].tensors.size(); ++t) {
      CAPTURE(l);
      CAPTURE(a.params[l].tensors[t].first);
      CHECK(same_bits(a.params[l].tensors[t].second, b.params[l].tensors[t].second));
    }
  CHECK(same_bits(a.train_loss, b.train_loss));
  CHECK(same_bits(a.val_loss, b.val_loss));
  CHECK(same_bits(a.train_accuracy, b.train_accuracy));
  CHECK(same_bits(a.val_accuracy, b.val_accuracy));
  CHECK(a.diverged_epoch == b.diverged_epoch);
  CHECK(a.stopped_epoch == b.stopped_epoch);
  CHECK(a.best_epoch == b.best_epoch);
  CHECK(a.search.type == b.search.type);
  CHECK(a.search.epochs == b.search.epochs);
  CHECK(a.search.rung == b.search.rung);
  CHECK(a.search.source == b.search.source);
  CHECK(a.search.values == b.search.values);
  REQUIRE(a.predictions.size() == b.predictions.size());
  for (std::size_t i = 0; i < a.predictions.size(); ++i) {
    CHECK(same_bits(a.predictions[i].members, b.predictions[i].members));
    CHECK(same_bits(a.predictions[i].per_group, b.predictions[i].per_group));
  }
  CHECK(a.meta.epochs == b.meta.epochs);
  CHECK_FALSE(b.meta.interrupted);
}

// The uninterrupted run against one stopped after `stop_after` epochs (2 threads) and resumed
// from its checkpoint on 1 thread.
void check_resume_is_exact(const std::string& name, const std::string& yaml, int stop_after) {
  CAPTURE(name);
  const fs::path full = scratch(name + "-full.h5"), part = scratch(name + "-part.h5"), ck = scratch(name + ".ckpt.h5");
  train(config_for(yaml, full), 2);
  const TrainResult stopped = train(config_for(yaml, part, {{"train.checkpoint", "{every_epochs: 1, path: " + quoted(ck) + "}"}}),
                                    2, stop_after);
  REQUIRE(stopped.out.interrupted);
  CHECK(stopped.out.epochs == stop_after);
  CHECK(stopped.checkpoint == ck.string());
  const RunFile marked = read_run_file(part.string());
  CHECK(marked.meta.interrupted);
  CHECK(marked.meta.epochs == stop_after);
  CHECK(marked.state.present());  // the interrupted run file can be resumed too
  train(config_for(yaml, part), 1, 0, ck.string());
  check_same_run(full, part);
}

// The uninterrupted run against one stopped between steps at the `poll`-th poll of the stop
// (2 threads), resumed on 1 thread, stopped again at the resumed run's first poll (still in
// the interrupted epoch, before any member's next step when poll2 is 1), and resumed again.
void check_step_resume_is_exact(const std::string& name, const std::string& yaml, int poll, int poll2) {
  CAPTURE(name);
  const fs::path full = scratch(name + "-sfull.h5"), part = scratch(name + "-spart.h5"), ck = scratch(name + ".sckpt.h5");
  const Override checkpoint{"train.checkpoint", "{every_epochs: 1, path: " + quoted(ck) + "}"};
  train(config_for(yaml, full), 2);
  const TrainResult stopped = train(config_for(yaml, part, {checkpoint}), 2, 0, "", poll);
  REQUIRE(stopped.out.interrupted);
  REQUIRE(stopped.out.partial.present());
  const RunFile ckf = read_run_file(ck.string());
  CHECK(ckf.state.epoch == stopped.out.epochs);
  CHECK(ckf.state.next_step == stopped.out.partial.next_step);
  CHECK(read_run_file(part.string()).meta.interrupted);
  const TrainResult again = train(config_for(yaml, part, {checkpoint}), 1, 0, ck.string(), poll2);
  REQUIRE(again.out.interrupted);
  REQUIRE(again.out.partial.present());
  for (std::size_t s = 0; s < again.out.partial.next_step.size(); ++s)
    CHECK(again.out.partial.next_step[s] >= stopped.out.partial.next_step[s]);
  train(config_for(yaml, part, {checkpoint}), 1, 0, ck.string());
  check_same_run(full, part);
}

}  // namespace

TEST_CASE("resume: interrupted between steps (members of different blocks at different steps), bitwise") {
  // 40 members: several lane blocks, each stopped at its own step; 2 threads, then 1.
  const std::string shared = "name: r\nseed: 5\ndevice: cpu\nswarm: {size: 40}\nmodel:\n  layers:\n"
                             "    - {type: dense, units: 8, activation: tanh}\n    - {type: dense, units: 2}\n"
                             "loss: cross_entropy\noptimizer: {type: adam, lr: {values: [0.02, 0.005]}}\n"
                             "schedule: {type: cosine, min_lr: 0.001}\n"
                             "data:\n  source: {type: spirals, n: 400}\n  split: {train: 0.8, val: 0.1, test: 0.1}\n"
                             "  per_member: bootstrap\ntrain: {epochs: 3, batch_size: 8}\n";
  check_step_resume_is_exact("steps-bootstrap", shared, 70, 1);
  check_step_resume_is_exact("steps-later-epoch", shared, 300, 3);
  // Unequal member sets (group_by): members take different numbers of steps per epoch.
  check_step_resume_is_exact("steps-lstm", lstm_group_yaml(3), 3, 2);
  // SGD with momentum and early stopping, stopped at step 1 of epoch 2 (4 steps per epoch).
  check_step_resume_is_exact(
      "steps-early", dense_yaml("bootstrap", "{type: sgd, lr: 0.1, momentum: 0.9}", "constant", 5,
                                ", early_stopping: {metric: val_loss, patience: 2}"), 7, 1);
}

TEST_CASE("resume: shared data, adam with a cosine schedule, onto another thread count, bitwise") {
  check_resume_is_exact("shared", dense_yaml("shared", "{type: adam, lr: 0.02, grad_clip: 1.0}",
                                             "{type: cosine, warmup_epochs: 1, min_lr: 0.001}", 6), 3);
}

TEST_CASE("resume: bootstrap data, sgd with momentum and a step schedule, bitwise") {
  check_resume_is_exact("bootstrap", dense_yaml("bootstrap", "{type: sgd, lr: 0.1, momentum: 0.9, nesterov: true}",
                                                "{type: step, step_every: 2, gamma: 0.5}", 6), 2);
}

TEST_CASE("resume: regression with scaled targets (robust, bootstrap), bitwise") {
  check_resume_is_exact("target", "name: r\nseed: 5\ndevice: cpu\nswarm: {size: 4}\nmodel:\n  layers:\n"
                                  "    - {type: dense, units: 8, activation: tanh}\n    - {type: dense, units: 1}\n"
                                  "loss: mse\noptimizer: {type: adam, lr: 0.02}\ndata:\n  source: {type: sine, n: 96}\n"
                                  "  split: {train: 0.6, val: 0.2, test: 0.2}\n  per_member: bootstrap\n"
                                  "  normalize_target: robust\ntrain: {epochs: 5, batch_size: 16}\n", 2);
}

TEST_CASE("resume: scaled targets with statistics per member group (group_by, normalize_per_member), bitwise") {
  std::string csv = "ticker,x,y\n";
  for (int i = 0; i < 90; ++i)
    csv += std::to_string(i % 3) + "," + std::to_string(i / 45.0 - 1) + "," + std::to_string((i % 3) * 500 + std::sin(i * 0.3) * (1 + i % 3)) + "\n";
  const fs::path data = write_config("groups.csv", csv);
  check_resume_is_exact("group-target", "name: r\nseed: 5\ndevice: cpu\nmodel:\n  layers:\n"
                                        "    - {type: dense, units: 8, activation: tanh}\n    - {type: dense, units: 1}\n"
                                        "loss: mse\noptimizer: {type: adam, lr: 0.02}\ndata:\n  source: {type: csv, path: " +
                                            quoted(data) + ", features: [x], target: y}\n"
                                        "  split: {train: 0.6, val: 0.2, test: 0.2}\n  per_member: {group_by: ticker}\n"
                                        "  normalize: standard\n  normalize_per_member: true\n  normalize_target: standard\n"
                                        "train: {epochs: 5, batch_size: 16}\n", 2);
}

TEST_CASE("resume: an lstm on group_by sequence data, bitwise") {
  check_resume_is_exact("lstm", lstm_group_yaml(4), 2);
}

TEST_CASE("resume: early stopping with restore_best, stopped while some members still train, bitwise") {
  const std::string yaml = dense_yaml("bootstrap", "{type: adam, lr: {values: [0.3, 0.02, 0.1, 0.005, 0.05]}}",
                                      "constant", 12, ", early_stopping: {metric: val_loss, patience: 2, min_delta: 0.01}");
  check_resume_is_exact("early", yaml, 4);
}

TEST_CASE("resume: a halving and a pbt search, stopped between rungs and rounds or between steps, bitwise") {
  const std::string adam = "{type: adam, lr: {values: [0.3, 0.02, 0.1, 0.005, 0.05]}}";
  const std::string halving = dense_yaml("bootstrap", adam, "constant", 8) +
                              "search: {type: halving, rungs: [2, 5], keep: 0.5, metric: val_accuracy}\n";
  check_resume_is_exact("halving", halving, 3);
  const std::string pbt = dense_yaml("bootstrap", adam, "{type: cosine, min_lr: 0.001}", 8) +
                          "search: {type: pbt, every_epochs: 2, quantile: 0.4, perturb: {optimizer.lr: [0.8, 1.25]}, "
                          "resample_probability: 0.3}\n";
  check_resume_is_exact("pbt", pbt, 5);
  check_resume_is_exact("pbt-at-round", pbt, 4);  // the checkpoint right after a round
  check_step_resume_is_exact("steps-pbt", pbt, 9, 1);
  // 40 members: after the rung the survivors continue packed, in fewer blocks; a resume after
  // the rung packs them again, also in the middle of an epoch.
  const std::string packed = "name: r\nseed: 5\ndevice: cpu\nswarm: {size: 40}\nmodel:\n  layers:\n"
                             "    - {type: dense, units: 8, activation: tanh}\n    - {type: dense, units: 2}\n"
                             "loss: cross_entropy\noptimizer: {type: adam, lr: {logspace: [1.0e-3, 0.3]}}\n"
                             "data:\n  source: {type: spirals, n: 200}\n  split: {train: 0.6, val: 0.2, test: 0.2}\n"
                             "  per_member: bootstrap\ntrain: {epochs: 5, batch_size: 16}\n"
                             "search: {type: halving, rungs: [2, 3], keep: 1/3}\n";
  check_resume_is_exact("halving-packed", packed, 2);
  check_resume_is_exact("halving-packed-later", packed, 4);
  check_step_resume_is_exact("steps-halving-packed", packed, 60, 1);
  const RunFile f = read_run_file(scratch("pbt-full.h5").string());
  CHECK(f.search.type == "pbt");
  CHECK(f.search.epochs == std::vector<int>{2, 4, 6});
  CHECK(f.search.values.size() == 1);
  CHECK(f.search.values[0].size() == 4 * 5);
}

// A run of `yaml` (train.epochs = `epochs`) against one of `first` epochs with checkpoints
// every 2, resumed from its last checkpoint with train.epochs = `epochs`; returns the run file.
static RunFile check_extend_is_exact(const std::string& name, const std::string& yaml, int first, int epochs) {
  const fs::path full = scratch(name + "-full.h5"), out = scratch(name + ".h5"), ck = scratch(name + ".ckpt.h5");
  const fs::path cfg = write_config(name + ".yaml", yaml);
  train(config_for(yaml, full), 2);
  TrainOptions o;
  o.config_path = cfg.string();
  o.out = out.string();
  o.verbosity = Verbosity::Quiet;
  o.set = {"train.epochs=" + std::to_string(first), "train.checkpoint={every_epochs: 2, path: '" + ck.string() + "'}"};
  REQUIRE(run_train(o) == kExitOk);
  CHECK(read_run_file(ck.string()).state.epoch == first);
  o.set = {"train.epochs=" + std::to_string(epochs)};
  o.resume = ck.string();
  REQUIRE(run_train(o) == kExitOk);
  check_same_run(full, out);
  return read_run_file(out.string());
}

TEST_CASE("resume: extending a finished pbt run runs the round its last epoch now has, bitwise") {
  const std::string yaml = dense_yaml("bootstrap", "{type: adam, lr: {values: [0.3, 0.02, 0.1, 0.005, 0.05]}}", "constant", 8) +
                           "search: {type: pbt, every_epochs: 2, quantile: 0.4, perturb: {optimizer.lr: [0.8, 1.25]}}\n";
  // 4 epochs have a round after epoch 2 only (4 is the last); extended to 8, after 4 and 6 too.
  CHECK(check_extend_is_exact("pbt-extend", yaml, 4, 8).search.epochs == std::vector<int>{2, 4, 6});
}

TEST_CASE("resume: --set train.epochs extends a finished run to the longer run, bitwise") {
  check_extend_is_exact("extend", dense_yaml("shared", "{type: adam, lr: 0.02}", "{type: step, step_every: 3, gamma: 0.5}", 7),
                        4, 7);
}

TEST_CASE("resume: refused (exit 2) when trajectory-changing keys or the data differ, naming them") {
  const std::string yaml = dense_yaml("shared", "{type: adam, lr: 0.02}", "{type: cosine, min_lr: 0.001}", 3);
  const fs::path out = scratch("refuse.h5"), ck = scratch("refuse.ckpt.h5");
  const fs::path cfg = write_config("refuse.yaml", yaml);
  TrainOptions o;
  o.config_path = cfg.string();
  o.out = out.string();
  o.verbosity = Verbosity::Quiet;
  o.set = {"train.checkpoint={every_epochs: 1, path: '" + ck.string() + "'}"};
  REQUIRE(run_train(o) == kExitOk);
  const std::string before = slurp(out);
  o.resume = ck.string();
  int code = 0;
  o.set = {"optimizer.lr=0.03", "train.batch_size=8", "train.log_every=2"};
  std::string msg = logged([&] { code = run_train(o); });
  CHECK(code == kExitUsage);
  // train.log_every may change, so it is not named.
  CHECK(msg.find("in optimizer.lr, train.batch_size, which change how the swarm trains") != std::string::npos);
  // A cosine schedule's length is train.epochs: extending it would change every step's rate.
  o.set = {"train.epochs=5"};
  msg = logged([&] { code = run_train(o); });
  CHECK(code == kExitUsage);
  CHECK(msg.find("differs from that of '" + ck.string() + "' in train.epochs,") != std::string::npos);
  // The same config on other data (a different source seed is a config key; a changed file is not).
  o.set = {"data.source.seed=4"};
  msg = logged([&] { code = run_train(o); });
  CHECK(code == kExitUsage);
  CHECK(msg.find("data.source.seed") != std::string::npos);
  // A run file without a training state (--force: its checkpoint is there too, which a resume
  // from another file replaces only with --force).
  o.set = {};
  o.resume = out.string();
  o.force = true;
  msg = logged([&] { code = run_train(o); });
  CHECK(code == kExitUsage);
  CHECK(msg.find("holds no training state") != std::string::npos);
  // A checkpoint path that is the run file's.
  o.resume.clear();
  o.set = {"train.checkpoint.path=" + quoted(out)};
  msg = logged([&] { code = run_train(o); });
  CHECK(code == kExitUsage);
  CHECK(msg.find("train.checkpoint.path: '" + out.string() + "' is the run file (output.path)") != std::string::npos);
  CHECK(slurp(out) == before);  // nothing was written
}

TEST_CASE("resume: a data file with other contents at the same path is refused by its fingerprint") {
  const fs::path csv = scratch("fp.csv"), out = scratch("fp.h5"), ck = scratch("fp.ckpt.h5");
  const auto write_csv = [&](int shift) {
    std::ofstream f(csv);
    f << "a,b,y\n";
    for (int i = 0; i < 40; ++i) f << i + shift << "," << (i * 7) % 11 << "," << i % 2 << "\n";
  };
  write_csv(0);
  const std::string yaml = "name: fp\nmodel:\n  layers:\n    - {type: dense, units: 2}\nloss: cross_entropy\n"
                           "data:\n  source: {type: csv, path: '" + csv.string() + "', target: y}\n"
                           "train: {epochs: 2, checkpoint: {every_epochs: 1, path: '" + ck.string() + "'}}\n";
  TrainOptions o;
  o.config_path = write_config("fp.yaml", yaml).string();
  o.out = out.string();
  o.verbosity = Verbosity::Quiet;
  REQUIRE(run_train(o) == kExitOk);
  write_csv(1);
  o.resume = ck.string();
  int code = 0;
  const std::string msg = logged([&] { code = run_train(o); });
  CHECK(code == kExitUsage);
  CHECK(msg.find("the training data differ from those of") != std::string::npos);
}

TEST_CASE("checkpoint: the whole training state, readable with h5py") {
  const std::string yaml = dense_yaml("bootstrap", "{type: adam, lr: 0.02}", "constant", 3,
                                      ", early_stopping: {metric: val_accuracy, patience: 5}");
  const fs::path out = scratch("h5py.h5"), ck = scratch("h5py.ckpt.h5");
  train(config_for(yaml, out, {{"train.checkpoint.every_epochs", "2"}, {"train.checkpoint.path", quoted(ck)}}), 2);
  const RunFile r = read_run_file(ck.string());
  CHECK(r.state.epoch == 3);  // after 2, and at the end
  CHECK(r.train_loss.shape == std::vector<std::uint64_t>{5, 3});
  CHECK(r.state.opt1.size() == r.params.size());
  CHECK(r.state.best_value.size() == 5);
  CHECK(r.stopped_epoch.size() == 5);
  CHECK_FALSE(r.state.data_fingerprint.empty());
  CHECK(r.state.kernel_target.rfind("cpu", 0) == 0);
  const std::string python = tn::test::python_with_h5py();
  if (python.empty()) {
    MESSAGE("SKIPPED the h5py part: no python3 with h5py");
    return;
  }
  const std::string got = tn::test::run_command(
      python + " -c \"import h5py; f = h5py.File('" + ck.string() + "', 'r'); s = f['train_state']; "
      "print(s.attrs['epoch'], s['opt1/layer_0/W'].shape, s['opt2/layer_1/b'].shape, s['best_params/layer_0/W'].shape, "
      "s['best_value'].shape, f['members/best_epoch'].shape, f['meta'].attrs['interrupted'])\" 2>&1");
  CHECK(got == "3 (5, 2, 8) (5, 2) (5, 2, 8) (5,) (5,) 0\n");
}
