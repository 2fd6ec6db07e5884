// SIGINT and SIGTERM during a training run. The first asks the run to stop after the step in
// progress (on a GPU, and in a chunk of short epochs, after the epoch), keeping the work
// (TrainCallbacks::stop polls requested()); a second ends the process at once with 128 + the
// signal, removing the temporary file of a write in progress (io/atomic_file.h) and the lock
// files of the run (io/file_lock.h) so that existing files stay as they were and nothing
// half-written or stale remains.
#pragma once

namespace tn {

class StopSignals {
 public:
  // The outermost installs the handlers and clears the request; one inside it (a shard's run
  // inside a rank's loop over shards) keeps both, so no signal is lost between them.
  StopSignals();
  ~StopSignals();  // the outermost restores the previous handlers
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;
  // The first signal received (SIGINT or SIGTERM), or 0.
  static int requested();
};

}  // namespace tn
