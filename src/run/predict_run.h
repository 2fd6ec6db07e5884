// The prediction service behind `turbanet predict`: a stored swarm on new inputs, every
// member's outputs, the combined prediction and its spread.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "eval/ensemble.h"
#include "io/prediction_file.h"
#include "run/forecast_run.h"
#include "run/select_run.h"
#include "run/stored_swarm.h"

namespace tn {

struct PredictOutcome {
  StoredSwarm run;
  Combine how = Combine::MeanProb;
  // The ensemble's members (global indices): every member, or the selection's (--select, else
  // the run's /ensemble); p and the forecasts hold these members only, weighted by `weights`.
  SelectionRecord selection;   // absent: every member, weighted alike
  std::vector<int> member;     // [S'] global index of each member of p
  std::vector<double> weights;  // [S'] or empty (alike)
  SwarmPredictions p;    // [S', N, O] the ensemble's members
  Combined c;            // the ensemble's prediction (classes: labels and uncertainty)
  EnsembleStats stats;   // per sample: mean and std across members
  std::vector<std::string> id_columns;        // --id
  std::vector<std::vector<std::string>> ids;  // [columns][N]
  std::optional<Forecast> forecast;  // sequence runs: one forecast per series (p, c, stats empty)
};

// Loads the run, reads and preprocesses `input` (a CSV with the run's feature columns or a
// config's data section; sequence runs: a long-format CSV of new history, forecast_run.h) and
// runs every member; `id_columns` of the input are carried through. The ensemble holds the
// members `select` chooses on the validation split (run/select_run.h), else the run's
// /ensemble, else every member. Throws RunFileError, ConfigError, DataError, UsageError.
PredictOutcome predict_stored(const std::string& run_path, const std::string& input, Combine how, int threads,
                              const std::vector<std::string>& id_columns = {},
                              const std::optional<SelectSpec>& select = std::nullopt);

// The prediction file (HDF5 layout in io/prediction_file.h) of an outcome, forecasts included.
PredictionFile prediction_file(const PredictOutcome& o, const std::string& run_path, const std::string& input);

}  // namespace tn
