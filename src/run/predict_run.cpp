// The prediction service: load, inputs, every member's outputs, the ensemble.
#include "run/predict_run.h"

#include <spdlog/spdlog.h>

namespace tn {
namespace {

// Sequence runs: one row per series, values in the target's original units.
PredictionFile& add_forecast(PredictionFile& f, const Forecast& x, std::uint64_t S) {
  using U = std::uint64_t;
  const U N = static_cast<U>(x.N);
  f.combine = x.own ? "own" : "mean";
  f.horizon = x.horizon;
  f.series_column = x.series_column;
  f.time_column = x.time_column;
  f.series = x.series;
  f.last_time = x.last_time;
  f.ids = x.ids;
  f.forecast = {{N}, x.value};
  if (x.own) {
    f.member = x.member;
    f.forecast_normalized = {{N}, x.normalized};
    return f;
  }
  for (int s : x.excluded) f.excluded.push_back(f.member[s]);
  f.members = {{S, N, 1}, x.members};
  f.members_normalized = {{S, N, 1}, x.normalized};
  f.ensemble_std = {{N, 1}, x.std};
  return f;
}

}  // namespace

PredictOutcome predict_stored(const std::string& run_path, const std::string& input, Combine how, int threads,
                              const std::vector<std::string>& id_columns) {
  PredictOutcome o{load_swarm(run_path, false), how};
  check_combine(o.run, how);
  o.id_columns = id_columns;
  if (o.run.file.data.seq_len > 0) {
    if (how != Combine::MeanProb) spdlog::warn("--combine {} is not used: forecasts are combined by their mean", to_string(how));
    o.forecast = forecast_stored(o.run, input, id_columns, threads);
    return o;
  }
  Inputs in = new_data(o.run, input, false, id_columns);
  o.ids = std::move(in.ids);
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
  f.id_columns = r.id_columns;
  f.ids = r.ids;
  for (int s = 0; s < r.run.S; ++s) f.member.push_back(r.run.first_member + s);
  if (r.forecast) return add_forecast(f, *r.forecast, static_cast<U>(r.run.S));
  if (r.run.classification) f.class_names = r.run.class_names;
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
