// The evaluation service behind `turbanet eval`: a stored swarm on its own split (rebuilt) or
// on new labeled data, its member and ensemble metrics, and the records the run file keeps.
#pragma once
#include <optional>
#include <string>

#include "eval/by_hparam.h"
#include "eval/evaluate.h"
#include "io/run_file.h"
#include "run/naive_compare.h"
#include "run/select_run.h"
#include "run/stored_swarm.h"

namespace tn {

struct EvalRequest {
  std::string run_path;
  std::optional<std::string> split;  // test | val | train | all; default test (train if none)
  std::optional<std::string> data;   // evaluate this config's data or CSV file instead
  Combine combine = Combine::MeanProb;  // ignored by group_by runs (no ensemble)
  int threads = 0;
  std::optional<SelectSpec> select;  // the ensemble chosen now (--select); else the run's /ensemble
  // Two-class runs (not with vote): decide class 1 from this threshold on, for every member
  // and the ensemble; with threshold_auto, from each one's F1-maximizing threshold on the
  // selection split instead.
  std::optional<double> threshold;
  bool threshold_auto = false;
};

struct EvalOutcome {
  StoredSwarm run;
  std::string source;  // what was evaluated ("test split of ...", a file)
  int n = 0;           // samples
  bool per_group = false;  // group_by run on its own splits: each member on its own group's samples
  Evaluation eval;     // not per_group
  HparamReport hparams;  // not per_group: metrics against the per-member hyperparameters
  // A halving run (/search): the members trained to the end (local indices) and the
  // evaluation of them alone, their ensemble included; empty when every member was.
  std::vector<int> finished;
  Evaluation finished_eval;
  EvalRecord record;     // what /eval/<split> stores
  Predictions predictions;  // what /predictions/<split> stores
  // Not own: the split members are ranked on ("val", else "train"; run/select_run.h) and
  // every member's evaluation there; select_split is "" when that split could be neither
  // read nor rebuilt (select_note says why).
  std::string select_split, select_note;
  Evaluation select_eval;
  std::vector<int> ranked;  // finite members, best first on the selection split (rank_members)
  // Not own, sequence data: the ensemble and every member against the naive forecasts, per
  // series (run/naive_compare.h); empty otherwise.
  NaiveComparison naive;
};

// Loads the run (throws RunFileError, ConfigError, UsageError), builds the inputs (DataError,
// UsageError), predicts with every member and evaluates: members are ranked on the selection
// split, the ensemble is req.select's choice (else the run's /ensemble, else every member,
// record.selection), decided by req's thresholds (record.threshold_from). Members with
// non-finite predictions are left out (record.excluded).
EvalOutcome evaluate_stored(const EvalRequest& req);

// A name for the records `eval --save NAME` writes (/eval/NAME, /predictions/NAME): letters,
// digits, '.', '_' and '-', not starting with '.'. Throws UsageError naming the rule.
void check_record_name(const std::string& name);
// Whether the run file holds a record called `name` under /eval or /predictions.
bool has_record(const RunFile& file, const std::string& name);

// Puts the outcome's records into its run file's contents as /eval/<name> and
// /predictions/<name> (their `split` attribute is `name`, their `source` says what was
// evaluated) and writes the whole file to `path`: a copy (eval --out FILE.h5; an existing file
// is replaced only when `replace`), or the run file itself (eval --save, `path` is
// outcome.run.path): then under its lock (io/file_lock.h), read again so that records stored by
// other processes meanwhile are kept, and refused (UsageError, nothing written) when it holds
// another run now, when a record `name` appeared meanwhile and `replace` is false, or when a
// training run holds the lock (io::Hold::Run; another writer is waited for, io::kWriteWait).
// Throws RunFileError when a file cannot be read or written; an existing file is left as it was.
void save_evaluation(EvalOutcome& outcome, const std::string& name, const std::string& path, bool replace);

}  // namespace tn
