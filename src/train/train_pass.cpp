// One pass over every member at once: the epochs, progress, checkpoints, early stopping,
// search (halving's survivors continue in train/packed.cpp) and the final predictions.
#include "train/pass.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <memory>

#include "train/history.h"
#include "train/loop.h"
#include "train/member_state.h"
#include "train/packed.h"
#include "train/swarm_forward.h"
#include "train/search_steps.h"
#include "train/survivors.h"

namespace tn::train_detail {

// One pass over all members of `cfg` at once.
TrainOutput train_pass(const Config& cfg, const PreparedData& data, const MemberSets& sets, Backend& be,
                       const ProgressFn& progress, const TrainControl& control) {
  TrainOutput out;
  const int S = cfg.swarm.size, E = cfg.train.epochs;
  out.shape = make_model_shape(cfg, data);
  out.layout = ParamLayout(out.shape, S);
  std::vector<float> scales(S);
  for (int s = 0; s < S; ++s) scales[s] = static_cast<float>(member_init_scale(cfg, cfg.swarm.first_member + s));
  out.init_params = init_params(out.shape, out.layout, cfg.seed, cfg.swarm.first_member, scales);
  if (control.init && !control.resume) control.init(cfg.swarm.first_member, out.layout, out.init_params);
  out.epochs = E;
  const bool classification = is_classification(cfg.loss.type);
  const std::size_t hist = static_cast<std::size_t>(S) * E;
  out.train_loss.assign(hist, 0.0f);
  if (classification) out.train_acc.assign(hist, 0.0f);
  if (data.val.n > 0) {
    out.val_loss.assign(hist, 0.0f);
    if (classification) out.val_acc.assign(hist, 0.0f);
  }
  init_member_state(cfg, S, out);
  const EarlyStoppingConfig& es = cfg.train.early_stopping;
  const SearchConfig& sc = cfg.search;
  if (sc.type == SearchConfig::Type::Halving) out.stopped_epoch.assign(S, -1);
  start_search(cfg, out);
  const int first = control.resume ? std::min(control.resume->epochs, E) : 0;
  if (control.resume) start_from(out, *control.resume);

  auto owned = std::make_unique<Loop>(cfg, data, sets, be, out, control.resume, &control.stop);
  Loop& loop = *owned;
  if (control.resume) resume_search(cfg, out, loop);
  // A finished run extended (train.epochs grew): the rung or round its last epoch now has.
  if (control.resume && !control.resume->partial.present() && search_after(sc, first, E) &&
      (out.search_epochs.empty() || out.search_epochs.back() < first))
    search_step(cfg, out, loop, first);
  // Halving: continue the members still training packed when that takes fewer blocks.
  const auto pack = [&] { return survivors_pay(cfg, training_members(out, S), S, loop.block()); };
  // The state as far as trained (epochs [0, done)), for a checkpoint.
  const auto snapshot = [&](int done) {
    TrainOutput t = copy_until(out, done);
    loop.download_params(t.params);
    loop.download_state(t);
    return t;
  };
  // Members still training: not stopped early, not diverged.
  const auto active = [&] { return static_cast<int>(training_members(out, S).size()); };
  const auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  // Chunks of epochs sized to take about 50 ms, so progress stays live while threads
  // rarely synchronize. Results do not depend on the chunking. Early stopping decides after
  // every epoch, and checkpoints fall on multiples of checkpoint_every.
  const int every = control.checkpoint ? control.checkpoint_every : 0;
  int chunk = 1, e0 = first;
  const bool stops_members = es.enabled() || sc.type == SearchConfig::Type::Halving;
  bool all_stopped = stops_members && active() == 0;
  bool packed = control.resume && e0 < E && !all_stopped && pack();  // resumed after a rung
  while (!packed && e0 < E && !all_stopped && !out.interrupted) {
    int e1 = std::min({E, e0 + chunk, e0 + loop.max_chunk(), next_search_epoch(sc, e0, E)});
    if (es.enabled()) e1 = e0 + 1;
    if (every > 0) e1 = std::min(e1, (e0 / every + 1) * every);
    const double t0 = elapsed();
    loop.run_epochs(e0, e1);
    if (loop.stopped_in_epoch()) {  // interrupted between steps of epoch e0 (e1 == e0 + 1)
      out.partial = loop.partial_epoch(e0);
      out.interrupted = true;
      if (control.checkpoint) control.checkpoint(snapshot(e0));
      break;
    }
    const double t1 = elapsed(), dt = t1 - t0;
    std::vector<EpochStats> stats = summarize(out, S, e0, e1, cfg.swarm.first_member, out.diverged_epoch);
    if (control.member_epochs)  // before a search step changes a member's learning rate
      for (int e = e0; e < e1; ++e)
        stats[e - e0].members = member_epochs(out, S, e, cfg.swarm.first_member, [&](int s) { return loop.epoch_lr(s, e); });
    if (es.enabled()) {
      stats.back().early_stopping = true;
      stats.back().newly_stopped = early_stop_epoch(cfg, out, loop, e1 - 1);
      stats.back().training = active();
      all_stopped = stats.back().training == 0;
    }
    if (search_after(sc, e1, E)) {
      stats.back().early_stopping = stops_members;
      stats.back().newly_stopped = search_step(cfg, out, loop, e1);
      stats.back().training = active();
      all_stopped = stats.back().training == 0;
      packed = !all_stopped && pack();
    }
    for (int e = e0; e < e1; ++e) {
      EpochStats& st = stats[e - e0];
      st.seconds = t0 + dt * (e + 1 - e0) / (e1 - e0);
      st.member_samples_per_s =
          st.seconds > 0 ? static_cast<double>(S) * loop.n_train() * (e + 1 - first) / st.seconds : 0;
      if (progress) progress(st);
    }
    const double per_epoch = dt / (e1 - e0);
    chunk = std::clamp(static_cast<int>(0.05 / std::max(per_epoch, 1e-9)), 1, std::max(1, 2 * chunk));
    e0 = e1;
    out.interrupted = e0 < E && !all_stopped && control.stop && control.stop();
    if (control.checkpoint && ((every > 0 && (e0 % every == 0 || e0 == E || all_stopped)) || out.interrupted))
      control.checkpoint(snapshot(e0));
  }
  if (packed && !out.interrupted)
    return continue_packed(cfg, data, sets, be, progress, control, out, std::move(owned), e0, elapsed(),
                           e0 == first && control.resume ? &control.resume->partial : nullptr, train_pass);
  out.train_seconds = elapsed();
  resize_history(out, e0);
  if (loop.has_best())
    for (int s = 0; s < S; ++s)
      if (out.best_epoch[s] > 0) loop.restore_best(s);
  loop.download_params(out.params);
  const SplitData& split = data.test.n > 0 ? data.test : data.train;
  out.pred_split = split.name;
  out.pred_n = split.n;
  if (sets.names.empty()) {
    loop.member_outputs(split, out.pred_members);
    leave_out_diverged(out, cfg.swarm.first_member);
    return out;
  }
  // group_by: the member of a sample is its group (members and groups are numbered alike);
  // this pass predicts the samples of its members [first_member, first_member + S).
  out.pred_member = split.group;
  std::vector<int> local(split.group);
  for (int& m : local) m -= cfg.swarm.first_member;
  // The trained parameters through the stored-swarm path (what `eval` runs), in the
  // trainer's batch size, so the two give the same bits.
  out.pred_group = predict_per_group(be, out.shape, cfg.loss.type, out.params, S, split.X, split.n, loop.batch(), local)
                     .outputs;
  leave_out_diverged(out, cfg.swarm.first_member);
  return out;
}


}  // namespace tn::train_detail
