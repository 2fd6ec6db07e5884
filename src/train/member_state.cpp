// Gathering and scattering the per-member training state (train/member_state.h).
#include "train/member_state.h"

#include <algorithm>
#include <limits>

#include "train/early_stop.h"
#include "train/member_rows.h"

namespace tn::train_detail {

void init_member_state(const Config& cfg, int S, TrainOutput& t) {
  t.diverged_epoch.assign(static_cast<std::size_t>(S), -1);
  if (const EarlyStoppingConfig& es = cfg.train.early_stopping; es.enabled()) {
    t.stopped_epoch.assign(static_cast<std::size_t>(S), -1);
    t.best_epoch.assign(static_cast<std::size_t>(S), 0);
    t.best_value.assign(static_cast<std::size_t>(S), early_stop_initial_best(es));
  }
}

void size_member_state(TrainOutput& whole, int S, int E, const std::vector<const TrainOutput*>& parts) {
  const auto any = [&](auto has) { return std::any_of(parts.begin(), parts.end(), has); };
  for (auto h : kHistories)
    if (h == &TrainOutput::train_loss || any([&](const TrainOutput* p) { return !(p->*h).empty(); }))
      whole.*h = std::vector<float>(static_cast<std::size_t>(S) * E, std::numeric_limits<float>::quiet_NaN());
  whole.diverged_epoch.assign(static_cast<std::size_t>(S), -1);
  if (any([](const TrainOutput* p) { return !p->stopped_epoch.empty(); }))
    whole.stopped_epoch.assign(static_cast<std::size_t>(S), -1);
  if (any([](const TrainOutput* p) { return !p->best_value.empty(); })) {
    whole.best_epoch.assign(static_cast<std::size_t>(S), 0);
    whole.best_value.assign(static_cast<std::size_t>(S), 0.0);
  }
}

TrainOutput gather_members(const TrainOutput& whole, const std::vector<int>& members, int keep) {
  TrainOutput t;
  t.epochs = keep;
  t.steps_per_epoch = whole.steps_per_epoch;
  for (auto h : kHistories) t.*h = gather_rows(whole.*h, whole.epochs, members, keep);
  t.diverged_epoch = pick(whole.diverged_epoch, members);
  t.stopped_epoch = pick(whole.stopped_epoch, members);
  t.best_epoch = pick(whole.best_epoch, members);
  t.best_value = pick(whole.best_value, members);
  t.search_rung = pick(whole.search_rung, members);
  return t;
}

void scatter_members(TrainOutput& whole, const TrainOutput& part, const std::vector<int>& members) {
  const int E = whole.epochs;
  for (auto h : kHistories) {
    const std::vector<float>& p = part.*h;
    if (p.empty() || (whole.*h).empty()) continue;
    for (std::size_t i = 0; i < members.size(); ++i)
      for (int e = 0; e < E && e < part.epochs; ++e)
        (whole.*h)[static_cast<std::size_t>(members[i]) * E + e] = p[i * static_cast<std::size_t>(part.epochs) + e];
  }
  put(whole.diverged_epoch, part.diverged_epoch, members);
  put(whole.stopped_epoch, part.stopped_epoch, members);
  put(whole.best_epoch, part.best_epoch, members);
  put(whole.best_value, part.best_value, members);
  put(whole.search_rung, part.search_rung, members);
  if (part.pred_members.empty() || whole.pred_members.empty()) return;
  const std::size_t per = static_cast<std::size_t>(whole.pred_n) * whole.shape.outputs();
  for (std::size_t i = 0; i < members.size(); ++i)
    std::copy_n(part.pred_members.begin() + static_cast<std::ptrdiff_t>(i * per), per,
                whole.pred_members.begin() + static_cast<std::ptrdiff_t>(members[i] * per));
}

}  // namespace tn::train_detail
