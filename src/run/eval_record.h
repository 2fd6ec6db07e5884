// From evaluation results to what the run file stores: /predictions/<split> and
// /eval/<split> (shared by train, eval and their tests).
#pragma once
#include <string>
#include <vector>

#include "data/sequence_units.h"
#include "eval/evaluate.h"
#include "eval/per_group.h"
#include "io/run_file.h"

namespace tn {

// Members' outputs [S, N, O], their ensemble mean and spread (eval/ensemble.h; weighted by
// `weights` [S] when given), and the targets: [N] labels (classification) or [N, T] values;
// none when `targets` is empty.
Predictions make_predictions(const std::string& split, const SwarmPredictions& p,
                             const std::vector<float>& targets, bool classification,
                             const std::vector<double>* weights = nullptr);

// What output.predictions (`kept`: members | ensemble | none) keeps of `p`: all of it, all but
// the members' outputs [S, N, O] (the ensemble's mean and spread, the targets; a group_by
// run's own predictions are one per sample and kept), or nothing: false, leave the record out.
bool keep_predictions(const std::string& kept, Predictions& p);

// The /eval/<split> record of `e`; members are numbered from `first_member`.
EvalRecord make_eval_record(const Evaluation& e, const std::string& split,
                            const std::string& source, Combine how, int first_member, int n);

// The targets of an own-sample evaluation of sequence data: y in model units, and, unless
// `units` is the identity, y and every naive forecast in original units too. The naive forecasts
// are converted to model units; seasonal naive is left out when it is NaN everywhere (no
// data.sequence.season). Other data: `naive` and `units` empty, y alone.
GroupTargets group_targets(const std::vector<float>& y, const TargetUnits& units, const NaiveForecasts& naive);

// group_by runs: /predictions/<split> with own [N, O] and member [N] (global indices, members
// numbered from `first_member`), the naive forecasts, and, when the model's units are not the
// target's, own/targets/naive forecasts in original units.
Predictions make_group_predictions(const std::string& split, const GroupPredictions& p, const GroupTargets& t,
                                 int first_member, bool classification);

// The /eval/<split> record (combine "own") of a group_by evaluation.
EvalRecord make_group_eval_record(const GroupEvaluation& e, const std::string& split, const std::string& source,
                                int first_member, int n);

}  // namespace tn
