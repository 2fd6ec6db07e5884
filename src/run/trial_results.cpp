// Per-trial results of an ask/tell run from its run file (run/trial_results.h).
#include "run/trial_results.h"

#include <cmath>
#include <nlohmann/json.hpp>

namespace tn {
namespace {

using json = nlohmann::json;

json number(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

// The histories' values of member s at epoch e (1-based).
json at_epoch(const RunFile& f, std::size_t s, int e) {
  json o = json::object();
  if (e <= 0) return o;
  const std::pair<const char*, const Array*> hs[] = {
      {"train_loss", &f.train_loss}, {"val_loss", &f.val_loss}, {"train_accuracy", &f.train_accuracy},
      {"val_accuracy", &f.val_accuracy}};
  for (const auto& [name, a] : hs)
    if (!a->data.empty()) o[name] = number(a->data[s * a->shape[1] + static_cast<std::size_t>(e - 1)]);
  return o;
}

// The epoch (1-based) of member s's lowest value of `h` among its first `epochs`; 0 if none is finite.
int best_of(const Array& h, std::size_t s, int epochs) {
  int best = 0;
  for (int e = 1; e <= epochs; ++e) {
    const float v = h.data[s * h.shape[1] + static_cast<std::size_t>(e - 1)];
    if (std::isfinite(v) && (best == 0 || v < h.data[s * h.shape[1] + static_cast<std::size_t>(best - 1)])) best = e;
  }
  return best;
}

}  // namespace

std::string trial_results_json(const Trials& t, const RunFile& f, const std::string& run_path) {
  const Predictions* p = f.predictions.empty() ? nullptr : &f.predictions.front();
  const EvalRecord* ev = nullptr;
  for (const EvalRecord& e : f.evals)
    if (p && e.split == p->split) ev = &e;
  json trials = json::array();
  const int E = f.meta.epochs;
  for (int s = 0; s < t.size(); ++s) {
    const auto k = static_cast<std::size_t>(s);
    const int diverged = k < f.diverged_epoch.size() ? f.diverged_epoch[k] : -1;
    const int stopped = k < f.stopped_epoch.size() ? f.stopped_epoch[k] : -1;
    const bool pruned = stopped > 0 && f.search.type == "halving";
    const std::string status = diverged > 0 ? "diverged" : pruned ? "pruned" : stopped > 0 ? "stopped" : "complete";
    const int epochs = diverged > 0 ? diverged : stopped > 0 ? stopped : E;
    int best = k < f.best_epoch.size() ? f.best_epoch[k] : -1;
    if (best < 0) best = best_of(f.val_loss.data.empty() ? f.train_loss : f.val_loss, k, epochs);
    json params = json::object();
    for (std::size_t j = 0; j < t.keys.size(); ++j) params[t.keys[j]] = t.values[j][k];
    json metrics = json::object();
    if (ev && ev->member.size() == static_cast<std::size_t>(t.size()))
      for (std::size_t m = 0; m < ev->metrics.size(); ++m) metrics[ev->metrics[m]] = number(ev->members[k * ev->metrics.size() + m]);
    trials.push_back({{"trial", t.ids[k]}, {"member", s}, {"params", params}, {"status", status}, {"epochs", epochs},
                      {"best_epoch", best}, {"best", at_epoch(f, k, best)}, {"final", at_epoch(f, k, epochs)},
                      {"eval", metrics}});
  }
  json j = {{"run", run_path}, {"eval_split", ev ? json(ev->split) : json(nullptr)},
            {"metrics", ev ? json(ev->metrics) : json::array()}, {"trials", trials}};
  return j.dump(2) + "\n";
}

}  // namespace tn
