// How an error a command ends with is reported: its message logged, its exit code returned.
// One place for every command (cli/commands/cli_util.h, cli/main.cpp) and for the ranks of an
// MPI job, which need the code before they stop together (run/train_ranks.h, `sweep`).
#pragma once
#include <exception>
#include <string>

namespace tn {

// A user error (util/user_error.h) is logged as an error and gives its own exit code; anything
// else is internal: logged as critical "<internal>: what", exit 1.
int report_failure(const std::exception& e, const std::string& internal = "internal error");

}  // namespace tn
