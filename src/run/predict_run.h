// The prediction service behind `turbanet predict`: a stored swarm on new inputs, every
// member's outputs, the combined prediction and its spread.
#pragma once
#include <string>

#include "eval/ensemble.h"
#include "io/prediction_file.h"
#include "run/stored_swarm.h"

namespace tn {

struct PredictOutcome {
  StoredSwarm run;
  Combine how = Combine::MeanProb;
  SwarmPredictions p;    // [S, N, O] every member
  Combined c;            // the ensemble's prediction (classes: labels and uncertainty)
  EnsembleStats stats;   // per sample: mean and std across members
};

// Loads the run, reads and preprocesses `input` (a CSV with the run's feature columns or a
// config's data section) and runs every member. Throws RunFileError, ConfigError, DataError,
// UsageError.
PredictOutcome predict_stored(const std::string& run_path, const std::string& input, Combine how, int threads);

// The prediction file (/predictions HDF5 layout, io/prediction_file.h) of an outcome.
PredictionFile prediction_file(const PredictOutcome& o, const std::string& run_path, const std::string& input);

}  // namespace tn
