// Signal handlers for training runs (see run/stop_signals.h).
#include "run/stop_signals.h"

#include <unistd.h>

#include <atomic>
#include <csignal>

#include "io/atomic_file.h"
#include "io/file_lock.h"

namespace tn {
namespace {

// Lock-free, so safe in a signal handler; read by every training thread between steps.
std::atomic<int> g_signal{0};
static_assert(std::atomic<int>::is_always_lock_free);
struct sigaction g_old_int, g_old_term;
int g_depth = 0;  // StopSignals alive (constructed and destroyed on one thread)

// Said at once on the first signal (write(2) is async-signal-safe; spdlog is not), so a
// user sees the stop taken while the step in progress, the checkpoint and the run file finish.
constexpr char kAcknowledged[] =
    "\nstopping: finishing the step in progress, then writing the checkpoint and the run file "
    "(a second Ctrl-C ends at once and keeps only what is already written)\n";

extern "C" void on_signal(int sig) {
  if (g_signal != 0) {
    io::remove_temporary_now();
    io::remove_lock_files_now();
    ::_exit(128 + sig);
  }
  g_signal = sig;
  [[maybe_unused]] const ssize_t n = ::write(STDERR_FILENO, kAcknowledged, sizeof kAcknowledged - 1);
}

}  // namespace

StopSignals::StopSignals() {
  if (g_depth++ > 0) return;
  g_signal = 0;
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sigaction(SIGINT, &sa, &g_old_int);
  sigaction(SIGTERM, &sa, &g_old_term);
}

StopSignals::~StopSignals() {
  if (--g_depth > 0) return;
  sigaction(SIGINT, &g_old_int, nullptr);
  sigaction(SIGTERM, &g_old_term, nullptr);
}

int StopSignals::requested() { return g_signal.load(std::memory_order_relaxed); }

}  // namespace tn
