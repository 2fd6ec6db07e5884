// Early stopping and search (halving rungs, PBT rounds) applied between epochs.
#include "train/search_steps.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "train/early_stop.h"
#include "train/loop.h"
#include "train/search.h"
#include "train/survivors.h"

namespace tn::train_detail {

int early_stop_epoch(const Config& cfg, TrainOutput& out, Loop& loop, int e) {
  const EarlyStoppingConfig& es = cfg.train.early_stopping;
  const std::vector<float>& metric = metric_history(out, es.metric);
  int stopped = 0;
  for (int s = 0; s < cfg.swarm.size; ++s) {
    if (out.stopped_epoch[s] > 0) continue;
    const double v = metric[static_cast<std::size_t>(s) * out.epochs + e];
    switch (early_stop_update(es, v, e + 1, out.best_value[s], out.best_epoch[s], out.stopped_epoch[s])) {
      case EarlyStopEvent::Improved:
        if (loop.has_best()) loop.save_best(s);
        break;
      case EarlyStopEvent::Stopped:
        loop.stop_member(s);
        ++stopped;
        break;
      case EarlyStopEvent::None: break;
    }
  }
  return stopped;
}

bool search_after(const SearchConfig& sc, int done, int E) {
  if (done >= E) return false;
  if (sc.type == SearchConfig::Type::Halving) return std::count(sc.rungs.begin(), sc.rungs.end(), done) > 0;
  return sc.type == SearchConfig::Type::Pbt && done % sc.every_epochs == 0;
}

// The next epoch count after `done` at which search acts, or E.
int next_search_epoch(const SearchConfig& sc, int done, int E) {
  for (int e = done + 1; e < E; ++e)
    if (search_after(sc, e, E)) return e;
  return E;
}

// The search state at the start: nothing stopped; PBT's values of the perturbed keys.
void start_search(const Config& cfg, TrainOutput& out) {
  const SearchConfig& sc = cfg.search;
  const int S = cfg.swarm.size;
  if (sc.type == SearchConfig::Type::Halving) out.search_rung.assign(S, 0);
  for (const SearchConfig::Perturb& p : sc.perturb) {
    std::vector<double> row(static_cast<std::size_t>(S));
    for (int s = 0; s < S; ++s) {
      OptimizerConfig o = member_optimizer(cfg, cfg.swarm.first_member + s);
      row[s] = *optimizer_field(o, p.key);
    }
    out.search_values.push_back(std::move(row));
  }
}

// After epoch count `done` (a rung or round): halving stops the worse members still
// training; PBT's bottom members take over the state of top ones and explore. Returns how
// many members stopped.
std::vector<int> halving_round(const Config& cfg, TrainOutput& out, int done) {
  const SearchConfig& sc = cfg.search;
  const int S = cfg.swarm.size;
  const std::vector<double> value = epoch_metric(out, sc.metric, S, done - 1);
  out.search_epochs.push_back(done);
  const int round = static_cast<int>(out.search_epochs.size());
  std::vector<char> training(static_cast<std::size_t>(S), 0);
  for (int s : training_members(out, S)) training[static_cast<std::size_t>(s)] = 1;
  const std::vector<int> cut = halving_cut(value, training, sc.maximize(), sc.keep);
  for (int s : cut) {
    out.stopped_epoch[static_cast<std::size_t>(s)] = done;
    out.search_rung[static_cast<std::size_t>(s)] = round;
  }
  const long n = static_cast<long>(std::count(training.begin(), training.end(), 1));
  spdlog::info("halving rung {} after epoch {}: {} of {} members keep training, {} stopped", round, done,
               n - static_cast<long>(cut.size()), n, cut.size());
  return cut;
}

int search_step(const Config& cfg, TrainOutput& out, Loop& loop, int done) {
  const SearchConfig& sc = cfg.search;
  if (sc.type == SearchConfig::Type::Halving) {
    const std::vector<int> cut = halving_round(cfg, out, done);
    for (int s : cut) loop.stop_member(s);
    return static_cast<int>(cut.size());
  }
  const int S = cfg.swarm.size;
  const std::vector<double> value = epoch_metric(out, sc.metric, S, done - 1);
  out.search_epochs.push_back(done);
  const int round = static_cast<int>(out.search_epochs.size());
  std::vector<std::vector<double>> now;  // [K, S] the values in effect
  for (const std::vector<double>& h : out.search_values) now.emplace_back(h.end() - S, h.end());
  const PbtRound r = pbt_round(cfg, round, value, now);
  int exploited = 0;
  for (int s = 0; s < S; ++s) {
    if (r.source[s] == s) continue;
    ++exploited;
    loop.copy_member_state(s, r.source[s]);
    out.diverged_epoch[s] = -1;  // it trains again from the source's state
  }
  for (int s = 0; s < S; ++s) out.search_source.push_back(r.source[s]);
  for (std::size_t j = 0; j < sc.perturb.size(); ++j) {
    for (int s = 0; s < S; ++s)
      if (r.values[j][s] != now[j][s]) loop.set_member_value(s, sc.perturb[j].key, r.values[j][s]);
    out.search_values[j].insert(out.search_values[j].end(), r.values[j].begin(), r.values[j].end());
  }
  spdlog::info("pbt round {} after epoch {}: {} members took over better members' state", round, done, exploited);
  return 0;
}

// Resuming a search: the perturbed values in effect when the checkpoint was written.
void resume_search(const Config& cfg, const TrainOutput& out, Loop& loop) {
  const int S = cfg.swarm.size;
  for (std::size_t j = 0; j < cfg.search.perturb.size() && j < out.search_values.size(); ++j)
    for (int s = 0; s < S; ++s)
      loop.set_member_value(s, cfg.search.perturb[j].key, out.search_values[j][out.search_values[j].size() - S + s]);
}

}  // namespace tn::train_detail
