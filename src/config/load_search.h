// Reader of the `search` section (successive halving, population-based training), used by load.cpp.
#pragma once
#include "config/yaml_util.h"

namespace tn::cfg {

// Checks a ranking metric (ranking_metrics()) the key `at` names against the config: an
// accuracy needs a classification loss, a val_ metric a validation split (ConfigError at `at`).
void check_ranking_metric(const Field& at, const std::string& metric, const Config& c);

// Fills c.search from `search` and checks it against train, data and the per-member values
// already in `c` (read it after the grid).
void read_search(const Field& root, Config& c);

}  // namespace tn::cfg
