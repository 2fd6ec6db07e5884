// The error of a request a run cannot serve (exit 2): a bad command-line value, a split the
// run does not have, a run file that does not fit the request. Thrown by the run services
// and the command-line layer; cli/main.cpp reports it (util/user_error.h).
#pragma once
#include "util/user_error.h"

namespace tn {

struct UsageError : UserError {
  using UserError::UserError;
};

}  // namespace tn
