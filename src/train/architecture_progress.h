// The progress of a swarm of several architectures (train/architectures.h) as one: each
// architecture trains at its own time, so the swarm's epoch is theirs averaged, weighted by
// their cost; a line each time that average passes an epoch. And the pool of threads that
// trains whole architectures side by side. Internal to train/.
#pragma once
#include <chrono>
#include <functional>
#include <string>
#include <mutex>
#include <vector>

#include "backend/backend.h"
#include "train/train_output.h"

namespace tn::train_detail {

class ArchitectureProgress {
 public:
  // Per group g of the G architectures: names[g], members[g] (local member indices) and
  // cost[g], its weight; `positions` the epoch's positions (the largest member set);
  // `resume` (may be null): where each architecture stands; `t0` when training started.
  ArchitectureProgress(const Config& cfg, std::vector<std::string> names, std::vector<std::vector<int>> members,
                       const std::vector<double>& cost,
                       std::size_t positions, const ProgressFn& progress, const TrainOutput* resume,
                       std::chrono::steady_clock::time_point t0);
  // Group g's epoch `st` (or, with `finished`, its end: it trains no more epochs). Thread-safe.
  void report(int g, const EpochStats& st, bool finished);

 private:
  struct GroupProgress {
    int epoch = 0;
    EpochStats last;
  };
  int average_epoch() const;  // weighted epoch of the architectures' current epochs

  const Config& cfg_;
  std::vector<std::string> names_;
  std::vector<std::vector<int>> members_;
  const std::vector<double>& cost_;
  double total_cost_;
  std::size_t positions_;
  const ProgressFn& progress_;
  std::chrono::steady_clock::time_point t0_;
  std::vector<GroupProgress> seen_;
  int reported_ = 0, first_reported_ = 0;
  std::mutex mutex_;
};

// Calls fn(i, backend) for i in [0, n), each on one of `count` threads with its own
// one-thread CPU backend, the next i to the first thread free. The first exception is
// rethrown after every thread has ended (no new i starts after it).
void on_threads(int count, int n, const std::function<void(int i, Backend& one)>& fn);

}  // namespace tn::train_detail
