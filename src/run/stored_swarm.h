// A trained swarm loaded back from its run file for eval, predict and export: the
// configuration, model shape and parameters, normalization statistics and names, checked
// against each other (run/swarm_file.h). The inputs it runs on are run/stored_inputs.h, its
// forward pass run/stored_predict.h.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "config/config.h"
#include "data/encode.h"
#include "io/run_file.h"
#include "model/build.h"
#include "run/errors.h"

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

// The model alone (shape, parameters, stored statistics and names), for any run, sequence runs
// included: the config's data section is replaced by a stand-in of the same kind, so a
// training file that has moved does not matter (the stored feature names and statistics are
// used instead). For export, predict and eval --data. Throws RunFileError, ConfigError or
// UsageError.
StoredSwarm load_swarm_model(const std::string& path);

// The model and the config's data section as it was trained (its files looked up where the
// run was trained), so that the run's own splits can be rebuilt (run/stored_inputs.h
// own_split). Throws as load_swarm_model, and DataError, naming the file and what to do, when
// the training data is no longer there.
StoredSwarm load_swarm_with_own_data(const std::string& path);

// Whether the run has one member per group (data.per_member group_by), so that its members
// are run and scored on their own group's samples only.
inline bool one_member_per_group(const StoredSwarm& run) { return run.file.members.per_member == "group_by"; }

// Text-valued per-member values for reports (eval/by_hparam.h): /members/hparams' text keys
// (model.hidden, activations, recurrent types) and, when members differ in more than one
// architecture key, "architecture": each member's whole architecture.
std::vector<std::pair<std::string, std::vector<std::string>>> architecture_hparams(const StoredSwarm& run);

}  // namespace tn
