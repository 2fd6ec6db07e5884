// `turbanet merge`: the run files of a sharded swarm (train --shard k/K, run/shard.h) joined
// into the file one run of the whole swarm writes: parameters, initial parameters, histories,
// per-member records and hyperparameters side by side in member order, and the ensemble's
// predictions and metrics computed again over all members from the shards' stored predictions
// (each member's are bitwise those of the whole run, so the ensemble's are too).
#pragma once
#include <string>
#include <vector>

#include "io/run_file.h"

namespace tn {

// Reads and checks the parts and returns the merged run, whose output.path is `out`. Refused
// with UsageError, naming the files: a file that is not a shard, parts of different swarms or
// shard counts, a shard missing or given twice, parts whose configurations differ in more than
// their shard's members and paths or that were trained on different data, and an interrupted
// part (resume it first); `out` being one of the parts is the command's check (check_out_file).
// RunFileError for an unreadable part; ConfigError (DataFileNotFound) when the parts' data files
// cannot be found, as for eval.
RunFile merge_shards(const std::vector<std::string>& parts, const std::string& out);

}  // namespace tn
