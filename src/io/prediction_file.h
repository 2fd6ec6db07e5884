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
  std::vector<int> member;    // [S] global member indices
  std::vector<int> excluded;  // global indices left out of the ensemble (non-finite outputs)
  Array members;              // [S, N, O] probabilities (classification) or values
  Array ensemble;             // [N, K] class probabilities or [N, O] values
  Array ensemble_std;         // [N, O] standard deviation of `members` across members
  std::vector<int> label;     // [N] the ensemble's class (classification)
  Array entropy, mutual_information, disagreement;  // [N] (classification)
};

// Writes atomically, like write_run_file (replace: as there). Throws RunFileError.
void write_prediction_file(const std::string& path, const PredictionFile& p, bool replace = true);
// Reads a file written by write_prediction_file. Throws RunFileError.
PredictionFile read_prediction_file(const std::string& path);

}  // namespace tn
