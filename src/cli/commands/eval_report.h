// Reports of an evaluation: the readable table (stdout), the JSON object (--json, --out
// FILE.json) and the one-line summary `train` logs.
#pragma once
#include <string>
#include <vector>

#include "eval/by_hparam.h"
#include "eval/evaluate.h"
#include "io/run_file.h"

namespace tn {

// The headline metrics among `names`, by index: accuracy and log loss, or RMSE and R².
std::vector<std::size_t> headline_metrics(const std::vector<std::string>& names);

// Where the members were ranked (run/select_run.h): the selection split and every member's
// evaluation there, best first in `ranked`. Without one (split ""), the reports rank on the
// evaluated split and say so, with `note` (why the selection split could not be read).
struct RankView {
  std::string split;
  const Evaluation* eval = nullptr;
  std::vector<int> ranked;
  std::string note;
};

// A run's search (/search) for the reports: PBT's lineage of member `best` (local index, the
// best by rank_members), halving's rungs. Not shown when record is null or has no type.
struct SearchView {
  const SearchRecord* record = nullptr;
  int epochs = 0;   // epochs the run trained
  int members = 0;  // swarm size
  const std::vector<int>* diverged_epoch = nullptr;  // [S] /members/diverged_epoch, or null
  int best = -1;
  bool interrupted = false;  // the run was stopped before train.epochs
  // halving: the members trained to the end (local) and their own evaluation, or empty
  const std::vector<int>* finished = nullptr;
  const Evaluation* finished_eval = nullptr;
};

// {"run", "split", "source", "task", "combine", "n_samples", "classes", "metrics",
//  "members": [{"member": k, "excluded": b, <metric>: v, ..., "confusion": [[...]]}, ...],
//  "member_mean": {...}, "member_std": {...}, "ensemble": {...}, "excluded_members": [...],
//  "uncertainty": {"mean_entropy", "mean_mutual_information", "mean_disagreement"},
//  "best_member": {"chosen_on": "val" | "train" | <split> (no selection split), "by": [metrics],
//                  "member": k, "chosen_on_metrics": {...}, "metrics": {...}} | null,
//  "ensemble_selection": null | {"select", "k", "metric", "chosen_on", "value", "members": [k],
//                                "weights": [w], "all_members_ensemble": {...}},
//  "threshold": null | {"from": "fixed" | <split>, "ensemble": t, "members": [t]}}
// with the metric names of the HDF5 file; NaN is written as null; "ensemble" is of the
// selected members when there is a selection.
// With per-member hyperparameters (hp not null and not empty) also
//   "hparams": {"keys": [...], "best": {<metric>: {"member": k, "chosen_on": s, "chosen_on_value": v, <key>: v, ...}},
//               "by_value": {<key>: [{"value": v, "members": n, "mean": {...}, "std": {...}}]}}
// With a search (sv not null): "search": {"type", "metric", "epochs": [...],
//   halving: "members_after_rung": [S, ...], "stopped_rung": [...] (0: trained to the end),
//            "finished_members": [...], "finished_ensemble": {<metric>: v} (the kept members alone);
//   pbt: "best_lineage": [{"member": k, "first_epoch", "last_epoch", <key>: v, ...}, ...]}
std::string eval_json(const Evaluation& e, const EvalRecord& r, const std::string& run_path,
                      const std::vector<std::string>& class_names, const RankView& rank,
                      const HparamReport* hp = nullptr, const SearchView* sv = nullptr);

// Members ranked on the selection split, best and worst member (values on the evaluated
// split), member mean ± std and ensemble side by side (and the ensemble of every member when
// the ensemble is a selection), per-sample uncertainty and the ensemble's confusion matrix.
// With per-member hyperparameters: the best member per metric with its values, and a table
// per key of members grouped by value.
// With a search: its rungs (halving) or the best member's lineage (PBT).
std::string eval_table(const Evaluation& e, const EvalRecord& r, const std::string& run_path,
                       const std::vector<std::string>& class_names, const RankView& rank,
                       const HparamReport* hp = nullptr, const SearchView* sv = nullptr);

// "test split of spirals(n=512) (102 samples): ensemble accuracy 0.99 | members 0.97 ± 0.01 |
//  best on val #12: val 0.995, test 0.99"
std::string eval_summary(const Evaluation& e, const EvalRecord& r, const RankView& rank);

}  // namespace tn
