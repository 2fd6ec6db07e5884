// What eval and predict hold of a trained swarm loaded back from its run file (run/stored_swarm.h
// loads it) and the inputs it runs on, apart from the loading, so that run/new_series.h can
// use them without including the loader that calls it.
#pragma once
#include <string>
#include <vector>

#include "config/config.h"
#include "data/encode.h"
#include "data/sequence_units.h"
#include "io/run_file.h"
#include "model/build.h"

namespace tn {

// Members of one architecture in a swarm of several (RunFile::architectures).
struct StoredArchitecture {
  std::string name;          // e.g. "dense 64 relu, dense 3"
  std::vector<int> members;  // local member indices (0 .. S-1)
  ModelShape shape;
  std::vector<float> params;  // ParamLayout(shape, members.size()) order
};

struct StoredSwarm {
  std::string path;
  RunFile file;
  Config cfg;
  ModelShape shape;           // with `architectures`: the first one's (inputs and outputs are every one's)
  std::vector<float> params;  // ParamLayout(shape, S) order; empty with `architectures`
  std::vector<StoredArchitecture> architectures;  // members of several architectures, else empty
  int S = 0, first_member = 0;
  bool classification = false;
  int K = 0;                             // classes (2 for bce); 0 for regression
  std::vector<std::string> class_names;  // stored, else "0".."K-1"
  FeatureEncoding encoding;              // /data/encoding, applied to new CSV data (may be empty)
};

// Samples to evaluate or predict, preprocessed as in training.
struct Inputs {
  std::string split;   // "test", "val", "train", "all" or "data"
  std::string source;  // for reports: "test split of spirals(n=512)" or the file
  int n = 0;
  std::vector<float> X;  // [n, F] normalized
  std::vector<float> y;  // [n] labels or [n, targets] values; empty for unlabeled inputs
  int batch = 1;         // forward batch rows: the training batch, to reproduce its predictions
  // Each sample's group (group_by; sequence data: its series), and, for sequence data, how its
  // output becomes original units and its naive forecasts (data/sequence_units.h).
  std::vector<int> group;
  std::vector<std::string> group_names;  // the name of each group (series), when the data name them
  TargetUnits units;
  NaiveForecasts naive;
  // new_data with id columns (predict --id): each column's text per sample, [columns][n].
  std::vector<std::string> id_columns;
  std::vector<std::vector<std::string>> ids;
};

// Whether the run has one member per group (data.per_member group_by), so that its members
// are run and scored on their own group's samples only.
inline bool one_member_per_group(const StoredSwarm& run) { return run.file.members.per_member == "group_by"; }

}  // namespace tn
