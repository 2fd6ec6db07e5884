// The exit codes of turbanet's commands, which the ranks of an MPI job also exchange
// (run/train_ranks.h): 0 success; 1 an I/O failure (run file or output not written); 2 a user
// error (bad config, data, arguments, device or run file; nothing written); 3 training finished
// and was saved but some members diverged; 128 + signal (130 SIGINT, 143 SIGTERM) training was
// interrupted and its work saved.
#pragma once
#include "util/user_error.h"

namespace tn {

inline constexpr int kExitOk = 0, kExitIo = kExitIoFailure, kExitUsage = kExitBadInput, kExitDiverged = 3;

// The exit code of a training stopped by `signal` (SIGINT, SIGTERM) with its work saved.
inline constexpr int interrupted_exit(int signal) { return 128 + signal; }

}  // namespace tn
