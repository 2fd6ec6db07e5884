// The progress of several architectures merged into the swarm's, and the pool of threads
// that trains architectures side by side (train/architecture_progress.h).
#include "train/architecture_progress.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <exception>
#include <limits>
#include <numeric>
#include <thread>
#include <utility>

namespace tn::train_detail {

ArchitectureProgress::ArchitectureProgress(const Config& cfg, std::vector<std::string> names,
                                           std::vector<std::vector<int>> members, const std::vector<double>& cost, std::size_t positions,
                                           const ProgressFn& progress, const TrainOutput* resume,
                                           std::chrono::steady_clock::time_point t0)
    : cfg_(cfg), names_(std::move(names)), members_(std::move(members)), cost_(cost), total_cost_(std::accumulate(cost.begin(), cost.end(), 0.0)),
      positions_(positions), progress_(progress), t0_(t0), seen_(cost.size()) {
  // A resumed run starts where its architectures stand.
  for (std::size_t k = 0; k < seen_.size() && resume; ++k) seen_[k].epoch = resume->architectures[k].epochs;
  reported_ = first_reported_ = average_epoch();
}

int ArchitectureProgress::average_epoch() const {
  double done_cost = 0;
  for (std::size_t k = 0; k < seen_.size(); ++k) done_cost += cost_[k] * seen_[k].epoch;
  return std::min(cfg_.train.epochs, static_cast<int>(done_cost / std::max(total_cost_, 1e-300)));
}

void ArchitectureProgress::report(int g, const EpochStats& st, bool finished) {
  const int G = static_cast<int>(seen_.size());
  if (!progress_) return;
  std::lock_guard<std::mutex> lock(mutex_);
  GroupProgress& gp = seen_[static_cast<std::size_t>(g)];
  gp.epoch = finished ? cfg_.train.epochs : std::max(gp.epoch, st.epoch);
  if (!finished) gp.last = st;
  if (!st.newly_diverged.empty()) {  // at the architecture's own epoch, with global member indices
    std::vector<int> k;
    for (int s : st.newly_diverged)
      k.push_back(cfg_.swarm.first_member + members_[static_cast<std::size_t>(g)][static_cast<std::size_t>(s)]);
    spdlog::warn("{} {} of {} diverged at epoch {} (loss is not finite) and {} left out of the ensemble; lower "
                 "optimizer.lr or set optimizer.grad_clip", k.size() == 1 ? "member" : "members",
                 fmt::format("{}", fmt::join(k, ", ")), names_[static_cast<std::size_t>(g)], st.epoch,
                 k.size() == 1 ? "is" : "are");
  }
  const int epoch = average_epoch();
  if (epoch <= reported_ || epoch < 1) return;
  EpochStats w;
  w.epochs = cfg_.train.epochs;
  w.epoch = reported_ = epoch;
  w.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
  double loss = 0, acc = 0, val = 0;
  int n = 0, n_acc = 0, n_val = 0;
  w.loss_min = std::numeric_limits<double>::infinity();
  w.loss_max = -w.loss_min;
  for (int k = 0; k < G; ++k) {
    const GroupProgress& x = seen_[static_cast<std::size_t>(k)];
    const int m = static_cast<int>(members_[static_cast<std::size_t>(k)].size());
    w.diverged += x.last.diverged;
    w.early_stopping = w.early_stopping || x.last.early_stopping;
    w.training += x.last.epoch > 0 && x.last.early_stopping ? x.last.training : m - x.last.diverged;
    if (x.last.epoch == 0 || !std::isfinite(x.last.loss_mean)) continue;  // not started, or every member diverged
    const int finite = m - x.last.diverged;
    loss += x.last.loss_mean * finite, n += finite;
    w.loss_min = std::min(w.loss_min, x.last.loss_min);
    w.loss_max = std::max(w.loss_max, x.last.loss_max);
    if (x.last.acc_mean >= 0) acc += x.last.acc_mean * finite, n_acc += finite;
    if (x.last.val_loss_mean >= 0) val += x.last.val_loss_mean * finite, n_val += finite;
  }
  w.loss_mean = n ? loss / n : 0;
  w.acc_mean = n_acc ? acc / n_acc : -1;
  w.val_loss_mean = n_val ? val / n_val : -1;
  if (n == 0) w.loss_min = w.loss_max = 0;
  w.member_samples_per_s =
      w.seconds > 0 ? static_cast<double>(cfg_.swarm.size) * positions_ * (w.epoch - first_reported_) / w.seconds : 0;
  progress_(w);
}

void on_threads(int count, int n, const std::function<void(int i, Backend& one)>& fn) {
  std::atomic<int> next{0};
  std::exception_ptr error;
  std::mutex error_mutex;
  std::vector<std::thread> threads;
  const auto join_all = [&] {
    for (std::thread& t : threads)
      if (t.joinable()) t.join();
  };
  try {
    for (int w = 0; w < count; ++w)
      threads.emplace_back([&] {
        try {
          const std::unique_ptr<Backend> one = make_backend({DeviceKind::Cpu, 1}, nullptr);
          for (int i = next++; i < n; i = next++) {
            {
              std::lock_guard<std::mutex> lock(error_mutex);
              if (error) return;
            }
            fn(i, *one);
          }
        } catch (...) {
          std::lock_guard<std::mutex> lock(error_mutex);
          if (!error) error = std::current_exception();
        }
      });
  } catch (...) {  // a thread could not start: the others finish, then the error
    next = n;
    join_all();
    throw;
  }
  join_all();
  if (error) std::rethrow_exception(error);
}

}  // namespace tn::train_detail
