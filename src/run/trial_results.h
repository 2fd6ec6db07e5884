// The results of an ask/tell run (`turbanet train --trials FILE --trials-out RESULTS.json`),
// read from the run file it wrote, so a sharded or MPI run reports the same as one process.
#pragma once
#include <string>

#include "config/trials.h"
#include "io/run_file.h"

namespace tn {

// {"run": PATH, "eval_split": "test", "metrics": [...],
//  "trials": [{"trial": ID, "member": k, "params": {KEY: v, ...},
//              "status": "complete" | "stopped" (early stopping) | "pruned" (halving) | "diverged",
//              "epochs": epochs it trained, "best_epoch": e (1-based; 0: none),
//              "best": {"train_loss", "val_loss", "train_accuracy", "val_accuracy"} at best_epoch,
//              "final": the same at its last epoch, "eval": {METRIC: v, ...}}, ...]}
// best_epoch is early stopping's when the run used it, else the epoch of the lowest val_loss
// (train_loss without a validation split). "eval" holds the member's metrics on the split
// training evaluated (the test split, else the training split). NaN is written as null.
std::string trial_results_json(const Trials& t, const RunFile& f, const std::string& run_path);

}  // namespace tn
