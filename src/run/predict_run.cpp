// The prediction service: load, inputs, every member's outputs, the ensemble.
#include "run/predict_run.h"

#include <spdlog/spdlog.h>

namespace tn {

PredictOutcome predict_stored(const std::string& run_path, const std::string& input, Combine how, int threads) {
  PredictOutcome o{load_swarm(run_path, false), how};
  check_combine(o.run, how);
  const Inputs in = new_data(o.run, input, false);
  spdlog::info("predicting {} samples of {} with {} members of {}", in.n, input, o.run.S, run_path);
  o.p = run_swarm(o.run, in, threads);
  o.c = combine(o.p, o.run.cfg.loss.type, how);
  o.stats = ensemble_mean_std(o.p.outputs, o.p.S, o.p.N, o.p.O);
  if (!o.c.excluded.empty())
    spdlog::warn("{} members have non-finite predictions (diverged) and are left out of the ensemble",
                 o.c.excluded.size());
  return o;
}

PredictionFile prediction_file(const PredictOutcome& r, const std::string& run_path, const std::string& input) {
  using U = std::uint64_t;
  const U S = static_cast<U>(r.p.S), N = static_cast<U>(r.p.N), O = static_cast<U>(r.p.O);
  PredictionFile f;
  f.run = run_path;
  f.input = input;
  f.task = r.run.classification ? "classification" : "regression";
  f.combine = r.run.classification ? to_string(r.how) : "mean";
  f.feature_names = r.run.file.data.feature_names;
  if (r.run.classification) f.class_names = r.run.class_names;
  for (int s = 0; s < r.p.S; ++s) f.member.push_back(r.run.first_member + s);
  for (int s : r.c.excluded) f.excluded.push_back(r.run.first_member + s);
  f.members = {{S, N, O}, r.p.outputs};
  f.ensemble = {{N, static_cast<U>(r.c.width)}, r.c.prediction};
  f.ensemble_std = {{N, O}, r.stats.std};
  if (!r.run.classification) return f;
  f.label = r.c.label;
  f.entropy = {{N}, r.c.entropy};
  f.mutual_information = {{N}, r.c.mutual_information};
  f.disagreement = {{N}, r.c.disagreement};
  return f;
}

}  // namespace tn
