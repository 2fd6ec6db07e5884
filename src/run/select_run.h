// Choosing on the validation split for the commands (eval/select.h): which split members are
// ranked and the ensemble is chosen on (validation, else training; never the one reported),
// every member's predictions there, the ensemble a command uses (--select, else the run's
// /ensemble, else every member) and the records that keep it.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "config/config.h"
#include "eval/select.h"
#include "io/run_file.h"
#include "run/stored_inputs.h"

namespace tn {

// "val" when the run has validation samples, else "train".
std::string selection_split_name(const RunFile& file);

// The members' outputs on the selection split, and their evaluation there.
struct SelectionSplit {
  Inputs in;
  SwarmPredictions preds;
  Evaluation eval;  // every member, their ensemble by `how`
};

// Predicts the selection split with every member: its samples as stored in the run file
// (/data/splits/<name>, kept for small data), else rebuilt from the run's own data (read
// again from run.path). `reuse`: predictions of that very split already made (its inputs
// `reuse_in`), or null. Throws DataError, ConfigError or UsageError when the split can be
// neither read nor rebuilt.
SelectionSplit predict_selection_split(const StoredSwarm& run, Combine how, int threads,
                                       const Inputs* reuse_in = nullptr, const SwarmPredictions* reuse = nullptr);

// The selection `spec` asks for in the config's words.
SelectSpec config_selection(const EnsembleConfig& e);

// A selection as the run file keeps it: global member indices and weights.
SelectionRecord selection_record(const Selection& s, const std::string& split, int first_member);

// The weights [S] of a stored selection over the run's members (global indices from
// first_member); empty for an absent one (every member alike). Throws UsageError when it
// names a member the run does not have.
std::vector<double> selection_weights(const SelectionRecord& r, int first_member, int S);

// What a command's ensemble is: with `spec`, chosen now on `sel` (`sel` may be null for
// select all); else the run's /ensemble; absent: every member. Throws UsageError for a spec
// the run cannot serve (a metric it does not have, a group_by run).
SelectionRecord command_selection(const StoredSwarm& run, const std::optional<SelectSpec>& spec,
                                  const SelectionSplit* sel, Combine how);

// "top 3 by val log_loss 0.1234: #4 0.333, #9 0.333, #0 0.333" (members by weight, the first
// 8); "every member" for an absent record.
std::string describe_selection(const SelectionRecord& r);

}  // namespace tn
