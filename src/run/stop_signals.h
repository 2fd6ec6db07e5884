// SIGINT and SIGTERM during a training run. The first asks the run to stop after the step in
// progress (on a GPU, and in a chunk of short epochs, after the epoch), keeping the work
// (TrainCallbacks::stop polls requested()); a second ends the process at once with 128 + the
// signal, removing the temporary file of a write in progress (io/atomic_file.h) so that
// existing files stay as they were and nothing half-written remains.
#pragma once

namespace tn {

class StopSignals {
 public:
  StopSignals();   // installs the handlers
  ~StopSignals();  // restores the previous ones
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;
  // The first signal received (SIGINT or SIGTERM), or 0.
  static int requested();
};

}  // namespace tn
