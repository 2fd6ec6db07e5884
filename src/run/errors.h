// The error of a request a run cannot serve (exit 2): a bad command-line value, a split the
// run does not have, a run file that does not fit the request. Thrown by the run services
// and the command-line layer; cli/commands/cli_util.h reports it.
#pragma once
#include <stdexcept>

namespace tn {

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace tn
