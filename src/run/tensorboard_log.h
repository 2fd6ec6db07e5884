// Live TensorBoard logs of a training run (train.tensorboard, docs/commands.md#tensorboard):
// which runs and tags each epoch writes, the hparams plugin's records, and continuing the logs
// of a resumed run. The event files themselves are io/tensorboard_events.h's.
#pragma once
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
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
//   DIR/                   the hparams experiment (its hparams: the swept per-member keys, and
//                          `architecture` when the members have several)
//   DIR/swarm/             summary curves over the members: <tag>/mean, median, q10, q90, min,
//                          max, and members_training, members_diverged
//   DIR/arch-<i>/          (several architectures) the same over architecture i's members (i:
//                          in order of their first member, as the run file's /architectures)
//   DIR/member-<k>/        (runs: members) member k's loss, val_loss, accuracy, val_accuracy, lr
//   DIR/group-<g>/         (runs: groups) the same, means over the members sharing group g's values
//   DIR/ensemble/          the ensemble's final scores: <split>/<metric>
// Steps are 1-based epochs. Each member or group run holds its hparams session. A member's
// epochs are written as they come; an epoch of a run over several members (swarm, arch, group)
// once every one of them has reported it (chunks, architectures: they train out of step), the
// rest when training ends.
class TensorBoardLog {
 public:
  // Opens the logs of a run of `cfg`, continuing them after the state `resumed` (null: a new
  // run, whose existing event files in DIR are removed: check_tensorboard_dir refused them
  // without --force). Each architecture of a resumed swarm continues after its own epoch.
  // Throws RunFileError when they cannot be written.
  TensorBoardLog(const Config& cfg, const TrainOutput* resumed);
  ~TensorBoardLog();
  // An epoch's scalars (st.members: its members' values, TrainControl::member_epochs: the
  // whole swarm's, a chunk's or an architecture's), written to the files at most once a second.
  // Thread-safe. A failed write is reported once and ends the logs; training goes on.
  void epoch(const EpochStats& st);
  // Writes what is pending now: before a checkpoint, so that a run resumed from it finds the
  // logs of every epoch up to it.
  void flush();
  // Training ended after `epochs`: the epochs still waiting for members that stopped sooner,
  // the ensemble's final scores ("<split>/<metric>", value), and each session's end (success;
  // failure for a diverged member or a group all of whose members diverged), unless
  // interrupted (a resumed run ends them).
  void finished(int epochs, const std::vector<int>& diverged_epoch,
                const std::vector<std::pair<std::string, double>>& ensemble_scores, bool interrupted);

 private:
  struct Run;
  // An epoch's values as they come: each local member's, once known, and the training and
  // diverged counts of each part (a chunk or an architecture, named by its first member).
  struct Pending {
    std::vector<MemberEpoch> of;  // [S]
    std::vector<char> known;      // [S]
    std::map<int, std::pair<int, int>> parts;
  };
  Pending& pending_at(int epoch);  // pending_[epoch], sized for the swarm's members
  void write(const std::function<void()>& fn);
  void flush_all();
  void write_ready(Run& r, bool finishing);
  void write_epoch(Run& r, int epoch, const Pending& p);
  const Config& cfg_;
  TensorBoardRuns runs_;
  std::vector<std::unique_ptr<Run>> runs_out_;   // member or group runs: means
  std::vector<std::unique_ptr<Run>> summaries_;  // swarm, then arch-<i>: summary curves
  std::unique_ptr<io::EventWriter> ensemble_;
  std::map<int, Pending> pending_;     // by epoch: the members' values known so far
  std::map<int, int> part_diverged_;   // by a part's first member: its latest diverged count
  std::mutex mutex_;
  bool failed_ = false;
  std::chrono::steady_clock::time_point flushed_ = std::chrono::steady_clock::now();
};

// The layout train.tensorboard_runs resolves to for `cfg` (auto: members up to
// kTensorBoardAutoRuns, else groups up to as many, else swarm).
TensorBoardRuns resolved_runs(const Config& cfg);

// Refuses (ConfigError, UsageError: exit 2) logs a run cannot write before it trains: a training
// the logs cannot follow (`refusal`: why, e.g. "... trains shard 0 of 2"), DIR that is a file
// or one of the run's inputs (or inside one), one that cannot be created or written to, and,
// unless `resume` or `force`, DIR that already holds event files.
void check_tensorboard_dir(const Config& cfg, bool force, bool resume, const std::string& refusal);

}  // namespace tn
