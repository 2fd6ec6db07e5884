// Reader of the `search` section (successive halving, population-based training), used by load.cpp.
#pragma once
#include "config/yaml_util.h"

namespace tn::cfg {

// Fills c.search from `search` and checks it against train, data and the per-member values
// already in `c` (read it after the grid).
void read_search(const Field& root, Config& c);

}  // namespace tn::cfg
