// Epoch summaries, divergence and history columns of a pass's TrainOutput.
#include "train/history.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <stdexcept>

#include "train/member_state.h"

namespace tn {
namespace train_detail {

// Summaries of epochs [e0, e1) over the members with a finite loss; a member's first
// non-finite epoch marks it diverged. A diverged member is frozen from the step its loss
// became non-finite (math/optimizers.h frozen_member): its later epochs' history is NaN.
// Member by member, so each member's history is read contiguously (epoch by epoch, every read
// landed on its own page); per epoch the sums still run over the members in order.
// Members stopped early (out.stopped_epoch) are left out from the epoch after their stop.
std::vector<EpochStats> summarize(TrainOutput& out, int S, int e0, int e1, int first_member,
                                  std::vector<int>& diverged) {
  const int n = e1 - e0;
  constexpr double kInf = std::numeric_limits<double>::infinity();
  std::vector<EpochStats> st(static_cast<std::size_t>(n));
  std::vector<double> sum(n, 0.0), acc(n, 0.0), vsum(n, 0.0);
  std::vector<int> finite(n, 0), vcount(n, 0), stopped(n, 0);  // vcount: a group_by member may have no validation rows
  for (EpochStats& x : st) {
    x.loss_min = kInf;
    x.loss_max = -kInf;
  }
  for (int s = 0; s < S; ++s) {
    for (int e = e0; e < e1; ++e) {
      const int i = e - e0;
      const std::size_t at = static_cast<std::size_t>(s) * out.epochs + e;
      const double l = out.train_loss[at];
      if (!out.stopped_epoch.empty() && out.stopped_epoch[s] > 0 && e >= out.stopped_epoch[s]) {
        ++stopped[i];
        continue;
      }
      if (diverged[s] > 0 && e >= diverged[s]) {  // frozen since epoch diverged[s]
        for (auto h : kHistories)
          if (!(out.*h).empty()) (out.*h)[at] = std::numeric_limits<float>::quiet_NaN();
        continue;
      }
      if (!std::isfinite(l)) {
        if (diverged[s] < 0) {
          diverged[s] = e + 1;
          st[i].newly_diverged.push_back(first_member + s);
        }
        continue;
      }
      ++finite[i];
      sum[i] += l;
      st[i].loss_min = std::min(st[i].loss_min, l);
      st[i].loss_max = std::max(st[i].loss_max, l);
      if (!out.train_acc.empty()) acc[i] += out.train_acc[at];
      if (!out.val_loss.empty() && std::isfinite(out.val_loss[at])) {
        vsum[i] += out.val_loss[at];
        ++vcount[i];
      }
    }
  }
  for (int i = 0; i < n; ++i) {
    EpochStats& x = st[i];
    x.epoch = e0 + i + 1;
    x.epochs = out.epochs;
    x.diverged = S - finite[i] - stopped[i];
    x.training = S - x.diverged - stopped[i];
    if (finite[i] > 0) {
      x.loss_mean = sum[i] / finite[i];
      if (!out.train_acc.empty()) x.acc_mean = acc[i] / finite[i];
      if (!out.val_loss.empty() && vcount[i] > 0) x.val_loss_mean = vsum[i] / vcount[i];
    } else {
      x.loss_mean = x.loss_min = x.loss_max = std::numeric_limits<double>::quiet_NaN();
    }
  }
  return st;
}

std::vector<MemberEpoch> member_epochs(const TrainOutput& out, int S, int e, int first_member,
                                       const std::function<double(int)>& lr) {
  constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
  std::vector<MemberEpoch> m(static_cast<std::size_t>(S));
  for (int s = 0; s < S; ++s) {
    const std::size_t at = static_cast<std::size_t>(s) * out.epochs + e;
    const auto value = [&](const std::vector<float>& h) { return h.empty() ? kNaN : h[at]; };
    m[s] = {first_member + s, value(out.train_loss), value(out.val_loss), value(out.train_acc), value(out.val_acc), lr(s)};
  }
  return m;
}

// Diverged members are left out of every ensemble as members with non-finite parameters are:
// their predictions are NaN. Their parameters stay as frozen, those of the step before their
// loss became non-finite (math/optimizers.h frozen_member), for inspection.
void leave_out_diverged(TrainOutput& out, int first_member) {
  constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
  const std::size_t O = static_cast<std::size_t>(out.shape.outputs()), N = static_cast<std::size_t>(out.pred_n);
  for (std::size_t s = 0; s < out.diverged_epoch.size(); ++s) {
    if (out.diverged_epoch[s] <= 0) continue;
    if (!out.pred_members.empty()) std::fill_n(out.pred_members.begin() + static_cast<std::ptrdiff_t>(s * N * O), N * O, kNaN);
    for (std::size_t i = 0; i < out.pred_member.size() && !out.pred_group.empty(); ++i)
      if (out.pred_member[i] - first_member == static_cast<int>(s))
        std::fill_n(out.pred_group.begin() + static_cast<std::ptrdiff_t>(i * O), O, kNaN);
  }
}

// A [S, from] history as [S, to]: columns cut off, or added as NaN.
std::vector<float> history_columns(const std::vector<float>& h, int from, int to) {
  if (h.empty() || from == to) return h;
  const std::size_t S = h.size() / static_cast<std::size_t>(std::max(1, from));
  std::vector<float> r(S * to, std::numeric_limits<float>::quiet_NaN());
  const int keep = std::min(from, to);
  for (std::size_t s = 0; s < S; ++s)
    std::copy_n(h.begin() + static_cast<std::ptrdiff_t>(s * from), keep, r.begin() + static_cast<std::ptrdiff_t>(s * to));
  return r;
}

// Resizes t's [S, t.epochs] histories to [S, epochs].
void resize_history(TrainOutput& t, int epochs) {
  for (auto h : kHistories) t.*h = history_columns(t.*h, t.epochs, epochs);
  t.epochs = epochs;
}

// A copy of `out` (histories [S, out.epochs]) with its histories cut to [S, done], without
// copying the full histories first.
TrainOutput copy_until(TrainOutput& out, int done) {
  std::vector<float> full[std::size(kHistories)];
  for (std::size_t i = 0; i < std::size(kHistories); ++i) full[i] = std::move(out.*kHistories[i]);
  TrainOutput t = out;
  for (std::size_t i = 0; i < std::size(kHistories); ++i) out.*kHistories[i] = std::move(full[i]);
  for (auto h : kHistories) t.*h = history_columns(out.*h, out.epochs, done);
  t.epochs = done;
  return t;
}

// Starts `out` (histories [S, train.epochs]) from `from`: its initial parameters (when it has
// them), histories, divergence and early-stopping state as far as it trained.
void start_from(TrainOutput& out, const TrainOutput& from) {
  if (!from.init_params.empty()) out.init_params = from.init_params;  // e.g. a warm start's
  if (from.epochs > 0) {  // else (interrupted in the first epoch) nothing to keep: out's stay
    for (auto h : kHistories) out.*h = history_columns(from.*h, from.epochs, out.epochs);
  }
  out.diverged_epoch = from.diverged_epoch;
  if (!out.stopped_epoch.empty() && !from.stopped_epoch.empty()) {
    out.stopped_epoch = from.stopped_epoch;
    out.best_epoch = from.best_epoch;
    out.best_value = from.best_value;
  }
  if (!from.search_epochs.empty() || !from.search_values.empty()) {
    out.search_epochs = from.search_epochs;
    out.search_rung = from.search_rung;
    out.search_source = from.search_source;
    out.search_values = from.search_values;
  }
}

}  // namespace train_detail
}  // namespace tn
