// Progress lines and the live bar.
#include "cli/progress.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include <fmt/ranges.h>

namespace tn {

Progress::Progress(int epochs, int log_every, bool quiet)
    : epochs_(epochs),
      log_every_(log_every > 0 ? log_every : std::max(1, epochs / 10)),
      quiet_(quiet),
      live_(!quiet && isatty(STDERR_FILENO)) {}

namespace {
std::string eta(const EpochStats& st) {
  const double left = st.epoch > 0 ? st.seconds / st.epoch * (st.epochs - st.epoch) : 0.0;
  return left < 60 ? fmt::format("{:.1f}s", left) : fmt::format("{:.0f}m{:02.0f}s", left / 60, std::fmod(left, 60.0));
}
}  // namespace

void Progress::operator()(const EpochStats& st) {
  if (!st.newly_diverged.empty()) {
    // One line per epoch, however many members diverged in it.
    constexpr std::size_t kListed = 20;
    const std::size_t n = st.newly_diverged.size();
    std::vector<int> listed(st.newly_diverged.begin(), st.newly_diverged.begin() + std::min(n, kListed));
    std::string list = fmt::format("{}", fmt::join(listed, ", "));
    if (n > kListed) list += fmt::format(" and {} more", n - kListed);
    spdlog::warn("{} {} diverged at epoch {} (loss is not finite) and {} left out of the ensemble; lower "
                 "optimizer.lr or set optimizer.grad_clip", n == 1 ? "member" : "members", list, st.epoch,
                 n == 1 ? "is" : "are");
  }
  if (quiet_) return;
  const bool line = st.epoch % log_every_ == 0 || st.epoch == epochs_ || st.epoch == 1;
  std::string acc = st.acc_mean >= 0 ? fmt::format(" acc {:.4f}", st.acc_mean) : "";
  std::string val = st.val_loss_mean >= 0 ? fmt::format(" val_loss {:.5f}", st.val_loss_mean) : "";
  std::string div = st.diverged > 0 ? fmt::format(" diverged {}", st.diverged) : "";
  if (st.early_stopping) div += fmt::format(" training {}", st.training);
  const std::string chunk = st.chunks > 1 ? fmt::format("chunk {}/{} ", st.chunk, st.chunks) : "";
  if (line) {
    if (bar_shown_) std::fputs("\r\033[K", stderr);
    bar_shown_ = false;
    spdlog::info("{}epoch {}/{} loss mean {:.5f} min {:.5f} max {:.5f}{}{}{} | {:.3g} member-samples/s | ETA {}",
                 chunk, st.epoch, st.epochs, st.loss_mean, st.loss_min, st.loss_max, acc, val, div,
                 st.member_samples_per_s, eta(st));
  } else if (live_ && st.seconds - last_bar_ >= 0.1) {
    last_bar_ = st.seconds;
    const int width = 30, filled = static_cast<int>(static_cast<double>(width) * st.epoch / st.epochs);
    std::fprintf(stderr, "\r\033[K[%s%s] %d/%d loss %.5f ETA %s", std::string(filled, '#').c_str(),
                 std::string(width - filled, '.').c_str(), st.epoch, st.epochs, st.loss_mean, eta(st).c_str());
    std::fflush(stderr);
    bar_shown_ = true;
  }
}

void Progress::finish() {
  if (bar_shown_) std::fputs("\r\033[K", stderr);
  bar_shown_ = false;
}

}  // namespace tn
