// The prediction service: load, inputs, every member's outputs, the ensemble.
#include "run/predict_run.h"

#include <spdlog/spdlog.h>

#include "run/stored_inputs.h"
#include "run/stored_predict.h"

namespace tn {
namespace {

// Sequence runs: one row per series, values in the target's original units.
PredictionFile& add_forecast(PredictionFile& f, const Forecast& x, std::uint64_t S) {
  using U = std::uint64_t;
  const U N = static_cast<U>(x.N);
  f.combine = x.per_group ? "own" : "mean";
  f.horizon = x.horizon;
  f.series_column = x.series_column;
  f.time_column = x.time_column;
  f.series = x.series;
  f.last_time = x.last_time;
  f.ids = x.ids;
  f.forecast = {{N}, x.value};
  if (x.per_group) {
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


// The ensemble's members and weights: the selection's, in its order, or every member.
void choose_members(PredictOutcome& o, const std::optional<SelectSpec>& select, int threads) {
  const StoredSwarm& run = o.run;
  std::optional<SelectionSplit> sel;
  if (select && select->method != SelectMethod::All && !one_member_per_group(run))
    sel = predict_selection_split(run, o.how, threads);
  o.selection = command_selection(run, select, sel ? &*sel : nullptr, o.how);
  if (!o.selection.present()) {
    for (int s = 0; s < run.S; ++s) o.member.push_back(run.first_member + s);
    return;
  }
  selection_weights(o.selection, run.first_member, run.S);  // checks the members
  o.member = o.selection.member;
  o.weights = o.selection.weight;
  spdlog::info("ensemble of the selected members: {}", describe_selection(o.selection));
}

// The local indices of the outcome's members.
std::vector<int> local_members(const PredictOutcome& o) {
  std::vector<int> local;
  for (int g : o.member) local.push_back(g - o.run.first_member);
  return local;
}

// Forecasts of the selected members alone: their mean and spread, weighted.
void keep_forecast_members(Forecast& f, const std::vector<int>& local, const std::vector<double>& weights) {
  const std::size_t N = static_cast<std::size_t>(f.N);
  std::vector<float> members, normalized;
  for (int s : local) {
    members.insert(members.end(), f.members.begin() + static_cast<std::ptrdiff_t>(s * N),
                   f.members.begin() + static_cast<std::ptrdiff_t>((s + 1) * N));
    normalized.insert(normalized.end(), f.normalized.begin() + static_cast<std::ptrdiff_t>(s * N),
                      f.normalized.begin() + static_cast<std::ptrdiff_t>((s + 1) * N));
  }
  const EnsembleStats st = ensemble_mean_std(members, static_cast<int>(local.size()), f.N, 1, &weights);
  f.members = std::move(members);
  f.normalized = std::move(normalized);
  f.value = st.mean;
  f.std = st.std;
  f.excluded = st.excluded;
}

}  // namespace

PredictOutcome predict_stored(const std::string& run_path, const std::string& input, Combine how, int threads,
                              const std::vector<std::string>& id_columns, const std::optional<SelectSpec>& select) {
  PredictOutcome o;
  o.run = load_swarm_model(run_path);
  o.how = how;
  check_combine(o.run, how);
  o.id_columns = id_columns;
  choose_members(o, select, threads);
  const std::vector<double>* weights = o.weights.empty() ? nullptr : &o.weights;
  if (o.run.file.data.seq_len > 0) {
    if (how != Combine::MeanProb) spdlog::warn("--combine {} is not used: forecasts are combined by their mean", to_string(how));
    o.forecast = forecast_stored(o.run, input, id_columns, threads);
    if (weights && !o.forecast->per_group) keep_forecast_members(*o.forecast, local_members(o), o.weights);
    return o;
  }
  Inputs in = new_data(o.run, input, false, id_columns);
  o.ids = std::move(in.ids);
  spdlog::info("predicting {} samples of {} with {} members of {}", in.n, input, o.member.size(), run_path);
  o.p = run_swarm(o.run, in, threads);
  if (weights) o.p = member_subset(o.p, local_members(o));
  o.c = combine(o.p, o.run.cfg.loss.type, how, weights);
  o.stats = ensemble_mean_std(o.p.outputs, o.p.S, o.p.N, o.p.O, weights);
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
  f.member = r.member;
  f.selection = r.selection;
  if (r.forecast) return add_forecast(f, *r.forecast, static_cast<U>(r.member.size()));
  if (r.run.classification) f.class_names = r.run.class_names;
  for (int s : r.c.excluded) f.excluded.push_back(r.member[static_cast<std::size_t>(s)]);
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
