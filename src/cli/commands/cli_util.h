// Command-line helpers shared by the subcommands.
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "eval/combine.h"
#include "eval/select.h"
#include "run/command_files.h"
#include "run/world/world.h"

namespace tn {

// Runs fn(), a command's body, and returns its exit code; a user error it throws
// (util/user_error.h: ConfigError, DataError, BackendError, RunFileError, UsageError) is
// logged (util/error_report.h) and gives the error's own code (2 bad input, 1 an output not
// written). Any other error is internal and goes on to cli/main.cpp. Every run_* command
// returns through it, so that tests call commands as functions and read their exit codes.
int with_user_errors(const std::function<int()>& fn);

// "mean_prob" | "vote" | "mean_logit" → Combine. Throws UsageError naming the allowed rules
// (whether a rule fits the run is the run services' check, check_combine in run/stored_predict.h).
Combine parse_combine(const std::string& name);

// --select (all | top:K | greedy[:K]) and --select-by METRIC → the selection a command makes
// (eval/select.h), or nullopt without --select (the run's own /ensemble). Throws UsageError
// for a malformed --select, or --select-by without a top or greedy --select.
std::optional<SelectSpec> parse_select_options(const std::optional<std::string>& select,
                                               const std::optional<std::string>& select_by);

// Checks a command's one output file, named by option `key`, before any work
// (run/command_files.h): refused (UsageError, exit 2) when it is one of the command's `inputs`
// (even with --force), not a regular file, or exists and `force` is false.
void check_out_file(const std::string& out, bool force, const std::vector<NamedFile>& inputs,
                    const std::string& key = "--out");

// Under mpirun: every log line names the rank ("rank 1 of 4"), and ranks other than 0 log
// warnings and errors only (progress and results once, from rank 0).
void log_as_rank(const World& w);

// Prints `text` on standard output and flushes it. False (with the error logged) when the
// write fails, e.g. a full disk behind a redirection: the command then exits 1.
bool print_stdout(const std::string& text);

}  // namespace tn
