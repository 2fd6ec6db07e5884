// Reports of a group_by evaluation, every member scored on its own group's samples: the
// readable table, the JSON object and the one-line summary, with the naive baselines and the
// per-series table of sequence data.
#pragma once
#include <string>
#include <vector>

#include "cli/commands/report_parts.h"
#include "io/run_file.h"
#include "run/naive_compare.h"

namespace tn {

// group_by evaluations (record.per_group()): every member scored on its own group's samples.
// JSON: the keys of eval_json except "ensemble" and "uncertainty", each member's
// "n_samples" and "group" (when `groups` names them), and
//   "pooled": {...}, "quantile_levels": [0, 0.05, ...], "quantiles": {<metric>: [7]},
//   "baseline": null | {"kind": "persistence", "members": [{"member": k, <metric>: v}],
//                       "pooled": {...}, "quantiles": {...}},
//   "original_units": null | {"members", "pooled", "quantiles", "baseline"} (same forms),
//   "vs_baseline": null | {<mae|rmse|mse>: {"beat": n, "compared": n, "median_ratio": r}},
// (persistence), and for every naive forecast (sequence data):
//   "baselines": [{"kind", "members", "pooled", "quantiles", "original_units"}],
//   "vs_baselines": null | {<kind>: {<metric>: {"beat", "compared", "median_ratio"}}},
//   "compared_in": "original_units" | "model_units",
//   "series": null | [{"member", "group", "n_samples", "units", <metric>: v,
//                      "baselines": {<kind>: {<metric>: v, "skill_<metric>": s, "beats_by_<metric>": b}}}]
// with the comparisons in original units when the record has them.
std::string group_eval_json(const EvalRecord& r, const std::string& run_path,
                          const std::vector<std::string>& class_names, const std::vector<std::string>& groups);

// The per-member summary: quantiles of each metric across members and the pooled value, the
// same for each naive forecast and in original units, a per-series table (the model's mae
// against each baseline's, and its skill 1 − model/baseline) and how many series beat each.
std::string group_eval_table(const EvalRecord& r, const std::string& run_path, const std::vector<std::string>& groups);

// Sequence runs without group_by: the ensemble against each naive forecast in the words of
// group_eval_table ("1 of 1 series beat persistence by mae (median ratio model/persistence
// 0.91)") with its per-series table (the model being the ensemble), the ensemble over all
// series pooled, and every member's skill against each ("persistence by mae (0.81): 12 of 16
// members beat it, skill median +0.050 (5%-95% ...)"). "" when `c` is empty.
std::string naive_table(const NaiveComparison& c);
// Its JSON (null when empty): {"compared_in", "vs_baselines": {<kind>: {<metric>: {"beat",
// "compared", "median_ratio"}}}, "pooled": {<kind>: {<metric>: baseline, "ensemble_<metric>",
// "skill_<metric>"}}, "series": [{"group", "n_samples", "units", <metric>, "baselines"}] (as
// group_eval_json's), "members": [{"kind", "metric", "baseline", "beat", "compared",
// "skill_quantiles": [7]}]}.
report::json naive_json(const NaiveComparison& c);

// "test split of random_walk(...) (520 samples): per-member mae median 0.11 (5%-95% 0.08-0.19),
//  pooled 0.12 | 3 of 4 series beat persistence (median ratio 0.98); 4 of 4 series beat drift (...)"
std::string group_eval_summary(const EvalRecord& r);

}  // namespace tn
