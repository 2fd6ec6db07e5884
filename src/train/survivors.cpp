// Successive halving's survivors packed into a swarm of their own (train/survivors.h).
#include "train/survivors.h"

#include "train/history.h"
#include "train/member_rows.h"
#include "train/member_state.h"

#include <algorithm>
#include <limits>

namespace tn {
namespace {

// Member rows `members` of a layout-ordered swarm array, as a layout-ordered array of them.
std::vector<float> gather_params(const std::vector<float>& a, const ParamLayout& from, const ParamLayout& to,
                                 const std::vector<int>& members) {
  if (a.empty()) return {};
  std::vector<float> r(static_cast<std::size_t>(to.total));
  for (std::size_t t = 0; t < from.size.size(); ++t)
    for (std::size_t i = 0; i < members.size(); ++i)
      std::copy_n(a.begin() + from.at(static_cast<int>(t), members[i]), from.size[t],
                  r.begin() + to.at(static_cast<int>(t), static_cast<int>(i)));
  return r;
}

void scatter_params(std::vector<float>& a, const ParamLayout& to, const std::vector<float>& part, const ParamLayout& from,
                    const std::vector<int>& members) {
  if (part.empty() || a.empty()) return;
  for (std::size_t t = 0; t < to.size.size(); ++t)
    for (std::size_t i = 0; i < members.size(); ++i)
      std::copy_n(part.begin() + from.at(static_cast<int>(t), static_cast<int>(i)), to.size[t],
                  a.begin() + to.at(static_cast<int>(t), members[i]));
}

}  // namespace

std::vector<int> training_members(const TrainOutput& out, int S) {
  std::vector<int> m;
  for (int s = 0; s < S; ++s)
    if (out.diverged_epoch[s] < 0 && (out.stopped_epoch.empty() || out.stopped_epoch[s] < 0)) m.push_back(s);
  return m;
}

bool survivors_pay(const Config& cfg, const std::vector<int>& members, int S, int block) {
  if (cfg.search.type != SearchConfig::Type::Halving || members.empty() || block <= 0) return false;
  if (cfg.data.per_member == PerMember::GroupBy) return false;
  for (const LayerConfig& l : cfg.model.layers)
    if (l.dropout > 0) return false;
  std::vector<char> busy(static_cast<std::size_t>((S + block - 1) / block), 0);
  for (int s : members) busy[static_cast<std::size_t>(s / block)] = 1;
  const auto now = std::count(busy.begin(), busy.end(), 1);
  const auto packed = (static_cast<long>(members.size()) + block - 1) / block;
  return packed < now;
}

TrainOutput survivors_state(const TrainOutput& full, const std::vector<int>& members, int done,
                            const PartialEpoch* partial) {
  // The survivors are training: none diverged or stopped, at rung 0 (what their entries hold).
  TrainOutput t = train_detail::gather_members(full, members, done);
  const int M = static_cast<int>(members.size());
  t.shape = full.shape;
  t.layout = ParamLayout(full.shape, M);
  t.init_params = gather_params(full.init_params, full.layout, t.layout, members);
  t.params = gather_params(full.params, full.layout, t.layout, members);
  t.opt1 = gather_params(full.opt1, full.layout, t.layout, members);
  t.opt2 = gather_params(full.opt2, full.layout, t.layout, members);
  t.search_epochs = full.search_epochs;
  if (partial && partial->present()) {
    t.partial.next_step = pick(partial->next_step, members);
    t.partial.loss_sum = pick(partial->loss_sum, members);
    t.partial.correct_sum = pick(partial->correct_sum, members);
  }
  return t;
}

TrainOutput merge_survivors(const TrainOutput& full, const TrainOutput& part, const std::vector<int>& members) {
  TrainOutput r;
  r.shape = full.shape;
  r.layout = full.layout;
  r.init_params = full.init_params;
  r.params = full.params;
  scatter_params(r.params, r.layout, part.params, part.layout, members);
  if (!part.opt1.empty()) {
    r.opt1 = full.opt1;
    r.opt2 = full.opt2;
    scatter_params(r.opt1, r.layout, part.opt1, part.layout, members);
    scatter_params(r.opt2, r.layout, part.opt2, part.layout, members);
  }
  const int E = part.epochs, S = full.layout.S;
  r.epochs = E;
  r.steps_per_epoch = full.steps_per_epoch;
  // The others' rows as they were (NaN after their rung already), then the survivors' state.
  for (auto h : train_detail::kHistories) r.*h = train_detail::history_columns(full.*h, full.epochs, E);
  r.diverged_epoch = full.diverged_epoch;
  r.stopped_epoch = full.stopped_epoch;
  r.search_epochs = part.search_epochs;
  r.search_rung = full.search_rung;
  r.interrupted = part.interrupted;
  if (part.partial.present()) {  // the others are stopped: they take no step of the epoch
    r.partial.next_step.assign(static_cast<std::size_t>(S), static_cast<int>(full.steps_per_epoch));
    r.partial.loss_sum.assign(static_cast<std::size_t>(S), 0.0);
    put(r.partial.next_step, part.partial.next_step, members);
    put(r.partial.loss_sum, part.partial.loss_sum, members);
    if (!part.partial.correct_sum.empty()) {
      r.partial.correct_sum.assign(static_cast<std::size_t>(S), 0.0);
      put(r.partial.correct_sum, part.partial.correct_sum, members);
    }
  }
  r.pred_split = full.pred_split;
  r.pred_n = full.pred_n;
  r.pred_members = full.pred_members;
  train_detail::scatter_members(r, part, members);
  r.train_seconds = full.train_seconds + part.train_seconds;
  r.kernel = full.kernel;
  return r;
}

}  // namespace tn
