// The forecasting service: new history → last windows → member outputs → original units.
#include "run/forecast_run.h"

#include <spdlog/spdlog.h>

#include <cmath>

#include "run/new_series.h"
#include "run/stored_predict.h"

namespace tn {
namespace {

// Mean and population std across the members with all outputs finite, per series.
void ensemble(Forecast& f, int S) {
  const int N = f.N;
  std::vector<int> used;
  for (int s = 0; s < S; ++s) {
    bool finite = true;
    for (int i = 0; i < N; ++i) finite = finite && std::isfinite(f.members[static_cast<std::size_t>(s) * N + i]);
    if (finite) used.push_back(s);
    else f.excluded.push_back(s);
  }
  f.value.assign(N, NAN);
  f.std.assign(N, NAN);
  if (used.empty()) return;
  for (int i = 0; i < N; ++i) {
    double a = 0, b = 0;
    for (int s : used) a += f.members[static_cast<std::size_t>(s) * N + i];
    const double m = a / static_cast<double>(used.size());
    for (int s : used) {
      const double d = f.members[static_cast<std::size_t>(s) * N + i] - m;
      b += d * d;
    }
    f.value[i] = static_cast<float>(m);
    f.std[i] = static_cast<float>(std::sqrt(b / static_cast<double>(used.size())));
  }
}

}  // namespace

Forecast forecast_stored(const StoredSwarm& run, const std::string& input, const std::vector<std::string>& id_columns,
                         int threads) {
  const NewSeries s = read_new_series(run, input, id_columns);
  const SeriesWindows w = windows_to_forecast(s.table, s.data.sequence, stored_normalization(run), s.stats_of);
  Forecast f;
  f.series_column = s.table.group_names.empty() ? "" : s.data.group_by;
  f.time_column = s.table.time.empty() ? "" : s.data.sequence.time;
  f.horizon = s.data.sequence.horizon;
  f.per_group = !s.member.empty();
  f.N = w.n;
  f.id_columns = id_columns;
  f.ids.resize(id_columns.size());
  for (int i = 0; i < w.n; ++i) {
    const int g = w.series[i], row = w.last_row[i];
    f.series.push_back(s.table.group_names.empty() ? std::string() : s.table.group_names[g]);
    if (!f.time_column.empty()) f.last_time.push_back(s.table.time[row]);
    for (std::size_t k = 0; k < id_columns.size(); ++k) f.ids[k].push_back(s.table.ids[k][row]);
  }
  Inputs in;
  in.split = "data";
  in.source = input;
  in.n = w.n;
  in.X = w.X;
  in.batch = run.cfg.train.batch_size;
  if (f.per_group) {
    for (int g : w.series) {
      in.group.push_back(s.member[g]);
      f.member.push_back(s.member[g]);
    }
    spdlog::info("forecasting {} series of {} with their own members of {}", w.n, input, run.path);
    const GroupPredictions p = run_per_group(run, in, threads);
    f.normalized = p.outputs;
    for (int i = 0; i < w.n; ++i) f.value.push_back(w.units.original(p.outputs[i], i));
    return f;
  }
  spdlog::info("forecasting {} series of {} with {} members of {}", w.n, input, run.S, run.path);
  const SwarmPredictions p = run_swarm(run, in, threads);
  f.normalized = p.outputs;
  f.members.resize(p.outputs.size());
  for (std::size_t j = 0; j < p.outputs.size(); ++j)
    f.members[j] = w.units.original(p.outputs[j], j % w.n);
  ensemble(f, run.S);
  if (!f.excluded.empty())
    spdlog::warn("{} members have non-finite forecasts (diverged) and are left out of the ensemble", f.excluded.size());
  return f;
}

}  // namespace tn
