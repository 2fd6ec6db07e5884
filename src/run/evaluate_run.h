// The evaluation service behind `turbanet eval`: a stored swarm on its own split (rebuilt) or
// on new labeled data, its member and ensemble metrics, and the records the run file keeps.
#pragma once
#include <optional>
#include <string>

#include "eval/by_hparam.h"
#include "eval/evaluate.h"
#include "io/run_file.h"
#include "run/stored_swarm.h"

namespace tn {

struct EvalRequest {
  std::string run_path;
  std::optional<std::string> split;  // test | val | train | all; default test (train if none)
  std::optional<std::string> data;   // evaluate this config's data or CSV file instead
  Combine combine = Combine::MeanProb;  // ignored by group_by runs (no ensemble)
  int threads = 0;
};

struct EvalOutcome {
  StoredSwarm run;
  std::string source;  // what was evaluated ("test split of ...", a file)
  int n = 0;           // samples
  bool own = false;    // group_by run on its own splits: each member on its own group's samples
  Evaluation eval;     // not own
  HparamReport hparams;  // not own: metrics against the per-member hyperparameters
  EvalRecord record;     // what /eval/<split> stores
  Predictions predictions;  // what /predictions/<split> stores
};

// Loads the run (throws RunFileError, ConfigError, UsageError), builds the inputs (DataError,
// UsageError), predicts with every member and evaluates. Members with non-finite
// predictions are left out (record.excluded).
EvalOutcome evaluate_stored(const EvalRequest& req);

// Puts the outcome's records into its run file's contents and writes them to `path` (the run
// file itself, or a copy; an existing copy is replaced only when `replace`). Throws RunFileError.
void save_evaluation(EvalOutcome& outcome, const std::string& path, bool replace);

}  // namespace tn
