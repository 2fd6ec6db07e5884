// Live TensorBoard logs of a training run (train.tensorboard, docs/commands.md#tensorboard):
// which runs and tags each epoch writes, the hparams plugin's records, and continuing the logs
// of a resumed run. The event files themselves are io/tensorboard_events.h's.
#pragma once
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "config/config.h"
#include "train/train_output.h"

namespace tn {

namespace io {
class EventWriter;
}

// What a run's logs write into train.tensorboard (DIR):
//   DIR/                   the hparams experiment (its hparams: the swept per-member keys)
//   DIR/swarm/             summary curves over the members: <tag>/mean, median, q10, q90, min,
//                          max, and members_training, members_diverged
//   DIR/member-<k>/        (runs: members) member k's loss, val_loss, accuracy, val_accuracy, lr
//   DIR/group-<g>/         (runs: groups) the same, means over the members sharing group g's values
//   DIR/ensemble/          the ensemble's final scores: <split>/<metric>
// Steps are 1-based epochs. Each member or group run holds its hparams session.
class TensorBoardLog {
 public:
  // Opens the logs of a run of `cfg`, continuing them after `resumed_epochs` (-1: a new run,
  // whose existing event files in DIR are removed: check_tensorboard_dir refused them without
  // --force). Throws RunFileError when they cannot be written.
  TensorBoardLog(const Config& cfg, int resumed_epochs);
  ~TensorBoardLog();
  // The epoch's scalars (st.members: every member's values, TrainControl::member_epochs),
  // written to the files at most once a second. A failed write is reported once and ends the
  // logs; training goes on.
  void epoch(const EpochStats& st);
  // Writes what is pending now: before a checkpoint, so that a run resumed from it finds the
  // logs of every epoch up to it.
  void flush();
  // Training ended after `epochs`: the ensemble's final scores ("<split>/<metric>", value),
  // and each session's end (success; failure for a diverged member or a group all of whose
  // members diverged), unless interrupted (a resumed run ends them).
  void finished(int epochs, const std::vector<int>& diverged_epoch,
                const std::vector<std::pair<std::string, double>>& ensemble_scores, bool interrupted);

 private:
  struct Run;
  void write(const std::function<void()>& fn);
  void flush_all();
  const Config& cfg_;
  TensorBoardRuns runs_;
  std::vector<int> group_of_;  // [S] the run of each local member (members: itself; groups: its group)
  std::vector<std::unique_ptr<Run>> runs_out_;  // member or group runs
  std::unique_ptr<io::EventWriter> swarm_, ensemble_;
  bool failed_ = false;
  std::chrono::steady_clock::time_point flushed_ = std::chrono::steady_clock::now();
};

// The layout train.tensorboard_runs resolves to for `cfg` (auto: members up to
// kTensorBoardAutoRuns, else groups up to as many, else swarm).
TensorBoardRuns resolved_runs(const Config& cfg);

// Refuses (ConfigError, UsageError: exit 2) logs a run cannot write before it trains: a training
// that cannot report its members' epochs in order (`refusal`: why, e.g. "... trains in 3
// chunks"), DIR that is a file or one of the run's inputs (or inside one), one that cannot be
// created or written to, and, unless `resume` or `force`, DIR that already holds event files.
void check_tensorboard_dir(const Config& cfg, bool force, bool resume, const std::string& refusal);

}  // namespace tn
