// Command-line helpers shared by the subcommands.
#pragma once
#include <functional>
#include <string>

#include "eval/combine.h"

namespace tn {

// Runs fn() and returns its exit code; a user error it throws (UsageError, RunFileError,
// ConfigError, DataError, BackendError) is logged and gives kExitUsage.
int with_user_errors(const std::function<int()>& fn);

// "mean_prob" | "vote" | "mean_logit" → Combine. Throws UsageError naming the allowed rules
// (whether a rule fits the run is the run services' check, run/stored_swarm.h).
Combine parse_combine(const std::string& name);

}  // namespace tn
