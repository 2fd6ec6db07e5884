// Warm starts (model.init_from): a run's members start from the trained parameters of members
// of another run file, after checking that the two models are the same.
#pragma once
#include <string>
#include <vector>

#include "config/config.h"
#include "data/prepare.h"
#include "model/build.h"

namespace tn {

// The source run's trained parameters, checked against this run's model and data.
struct WarmStart {
  std::string path;            // the source run file
  int first_member = 0, S = 0;  // the source holds members [first_member, first_member + S)
  ParamLayout layout;           // of this model's shape for the source's S members
  std::vector<float> params;    // its /params in `layout` order
  // Members of several architectures, here or in the source: instead of `params`, every
  // member's source parameters, tensor by tensor ([cfg.swarm.size], this run's member order).
  std::vector<std::vector<float>> member_params;
  int run_first = 0;  // this run's first member (member_params[k - run_first])
};

// Reads cfg.model.init_from's run file and checks, before any work, that it fits: every
// tensor of `shape` with the same name and dimensions (else ConfigError naming the tensor and
// both shapes), the same input features and classes as `data` where both have names, and a
// source member for every member of this run. Throws ConfigError or RunFileError.
WarmStart load_warm_start(const Config& cfg, const ModelShape& shape, const PreparedData& data);

// Overwrites the initial parameters `params` (ParamLayout order) of members
// [first_member, first_member + layout.S) with those of their source members.
void apply_warm_start(const WarmStart& w, const InitFromConfig& init, int first_member, const ParamLayout& layout,
                      std::vector<float>& params);
// The same for `members` (global indices, one per layout member, of one architecture), from
// member_params: what a sub-swarm of one architecture starts from (train/architectures.h).
void apply_warm_start(const WarmStart& w, const std::vector<int>& members, const ParamLayout& layout,
                      std::vector<float>& params);

}  // namespace tn
