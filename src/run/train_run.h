// The training service behind `turbanet train`: a resolved config checked before any work
// (output path, device, data, model, member sets, memory plan), then training, the final
// evaluation and the run file. The command-line layer parses options and prints.
#pragma once
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "config/config.h"
#include "data/arrays.h"
#include "data/member_sets.h"
#include "data/prepare.h"
#include "eval/evaluate.h"
#include "io/run_file.h"
#include "run/checkpoint.h"
#include "run/command_files.h"
#include "run/shard.h"
#include "run/warm_start.h"
#include "train/trainer.h"

namespace tn {

// What training evaluates at the end: the test split, or the training split without one.
struct FinalEval {
  SwarmPredictions preds;  // not group_by: every member on every sample
  const SplitData* split = nullptr;
  Evaluation eval;          // not group_by
  EvalRecord record;        // what /eval/<split> stores
  Predictions predictions;  // what /predictions/<split> stores
  // Halving (not group_by): the members trained to the end (local) and their evaluation
  // alone; empty when the rungs stopped none (or all).
  std::vector<int> kept;
  Evaluation kept_eval;
  // Not group_by: the split members are ranked and the ensemble is chosen on (validation,
  // else training), every member's evaluation there, and the ensemble config `ensemble`
  // chose (absent: every member; `eval` above is of this ensemble).
  const SplitData* select_split = nullptr;
  Evaluation select_eval;
  SelectionRecord selection;
};

// Where a run reports while it works; each callback may be empty.
struct TrainCallbacks {
  ProgressFn progress;                               // after every epoch
  std::function<void(const TrainOutput&)> trained;   // training done, before the evaluation
  std::function<void(const FinalEval&)> evaluated;   // evaluation done, before the file is written
  // Polled between epochs and, on the CPU, between steps (from every worker thread): true
  // stops training there; the state is written to the checkpoint and the run file (marked
  // /meta@interrupted) is written of what was trained (TrainControl::stop).
  std::function<bool()> stop;
};

struct TrainResult {
  TrainOutput out;
  FinalEval final_eval;
  std::vector<int> diverged;  // global indices of members whose loss became non-finite
  std::string checkpoint;     // the last checkpoint written (train.checkpoint.path), or ""
  double setup_and_train_seconds = 0, eval_seconds = 0, write_seconds = 0;
};

class TrainingRun {
 public:
  // Checks everything before any work: the run file and checkpoint paths against the run's
  // inputs and `other` files (run/command_files.h: the run file must not exist unless `force`
  // or resuming, the checkpoint unless `force` or it is the `resume` file), the device, the data, the model against the data, the member sets
  // and the memory plan, and a warm start's source run (model.init_from); with `resume` (a checkpoint or interrupted run file) that it is a
  // state of this run (run/checkpoint.h). `started` is when the command began (the run
  // file's wall time counts from it). Throws UsageError (the files), ConfigError, DataError,
  // BackendError or RunFileError (an unreadable `resume` file).
  // With `shard` (train --shard k/K, run/shard.h) it trains shard k's block of the swarm into
  // its own run file, NAME.shard-k-of-K.h5 beside output.path.
  // `arrays`: the data of a config whose data.source is `type: arrays` (the Python package's
  // X and y), moved into the run's data (data/sources.h: load_memory_arrays).
  TrainingRun(Config cfg, int threads, bool force, std::chrono::steady_clock::time_point started,
              const std::string& resume = "", Shard shard = {}, const CommandFiles& other = {},
              SourceArrays* arrays = nullptr);
  const Config& config() const { return cfg_; }
  const PreparedData& data() const { return data_; }
  const Backend& backend() const { return *be_; }
  const ChunkPlan& plan() const { return plan_; }
  const std::string& device_note() const { return device_note_; }  // "" or why auto chose the CPU
  int resumed_epochs() const { return resume_ ? resume_->state.epochs : 0; }
  // The resumed epoch's position when the checkpoint was interrupted between steps, else null.
  const PartialEpoch* resumed_partial() const {
    return resume_ && resume_->state.partial.present() ? &resume_->state.partial : nullptr;
  }
  // "" or why a resumed run will not be bitwise that of an uninterrupted one (another kernel target).
  const std::string& resume_note() const { return resume_note_; }

  // Trains, evaluates and writes the run file to config().output.path. Throws RunFileError
  // when the file cannot be written (an existing file is left as it was).
  TrainResult run(const TrainCallbacks& report);

 private:
  Config cfg_;
  bool force_ = false;  // the run file may replace an existing file
  std::chrono::steady_clock::time_point started_;
  std::unique_ptr<Backend> be_;
  std::string device_note_;
  PreparedData data_;
  MemberSets sets_;
  ChunkPlan plan_;
  std::string fingerprint_;  // of data_ and sets_ (run/fingerprint.h)
  std::unique_ptr<ResumePoint> resume_;
  std::unique_ptr<WarmStart> warm_;  // model.init_from, when not resuming
  RunFilesHeld held_;  // the run file and checkpoint, until the run ends (run/checkpoint.h)
  std::string resume_note_;
  Shard shard_;
  std::string whole_yaml_;  // a shard's: the whole swarm's resolved config, which its files store
  int whole_first_ = 0, whole_size_ = 0;  // the whole swarm's members, of which this run trains a shard
  // A shard's run file or checkpoint: the whole swarm's /config and the shard in /meta.
  void mark_shard(RunFile& f) const;
};

}  // namespace tn
