// Readers of the sections that rank members, used by load.cpp: `search` (successive halving,
// population-based training) and `ensemble` (which members make the ensemble, load_ensemble.cpp).
#pragma once
#include "config/yaml_util.h"

namespace tn::cfg {

// Checks a ranking metric (ranking_metrics()) the key `at` names against the config: an
// accuracy needs a classification loss, a val_ metric a validation split (ConfigError at `at`).
void check_ranking_metric(const Field& at, const std::string& metric, const Config& c);

// Fills c.search from `search` and checks it against train, data and the per-member values
// already in `c` (read it after the grid).
void read_search(const Field& root, Config& c);

// Fills c.ensemble from `ensemble` and checks it against the swarm, the loss and the model's
// outputs (its metric), and the per-member data (not group_by).
void read_ensemble(const Field& root, Config& c);

}  // namespace tn::cfg
