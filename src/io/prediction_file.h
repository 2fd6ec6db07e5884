// The file `turbanet predict --out FILE.h5` writes: every member's outputs on new inputs,
// the ensemble's prediction and the per-sample uncertainty (layout in docs/run-file.md,
// "Prediction files"). Only src/io/ knows HDF5.
#pragma once
#include <string>
#include <vector>

#include "io/run_file.h"

namespace tn {

struct PredictionFile {
  std::string run;      // the run file the swarm came from
  std::string input;    // the predicted inputs
  std::string task;     // "classification" or "regression"
  std::string combine;  // as EvalRecord::combine
  std::vector<std::string> feature_names, class_names;
  std::vector<int> member;    // [S] global member indices (with a selection: the selected members)
  SelectionRecord selection;  // /selection: how `member` were chosen and weighted, or absent (every member)
  std::vector<int> excluded;  // global indices left out of the ensemble (non-finite outputs)
  Array members;              // [S, N, O] probabilities (classification) or values
  Array ensemble;             // [N, K] class probabilities or [N, O] values
  Array ensemble_std;         // [N, O] standard deviation of `members` across members
  std::vector<int> label;     // [N] the ensemble's class (classification)
  Array entropy, mutual_information, disagreement;  // [N] (classification)
  // predict --id: the carried-through columns, each [N] text (/id/<column>).
  std::vector<std::string> id_columns;
  std::vector<std::vector<std::string>> ids;
  // Forecasts of a sequence run (horizon > 0): one row per series. `member` then holds, for a
  // group_by run (combine "own"), the member forecasting each series [N], else every member [S].
  int horizon = 0;
  std::string series_column, time_column;       // "" when the run has none
  std::vector<std::string> series, last_time;   // [N]; last_time empty without time column
  Array forecast;                               // [N] original units
  Array forecast_normalized;                    // own: [N] in the units the model was trained in
  Array members_normalized;                     // not own: [S, N, 1] likewise (members: original units)
};

// Writes atomically, like write_run_file (replace: as there). Throws RunFileError.
void write_prediction_file(const std::string& path, const PredictionFile& p, bool replace = true);
// Reads a file written by write_prediction_file. Throws RunFileError.
PredictionFile read_prediction_file(const std::string& path);

}  // namespace tn
