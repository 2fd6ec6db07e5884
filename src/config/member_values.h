// Reading per-member hyperparameters ({values: [...]}, {linspace: [a, b]}, {logspace: [a, b]},
// optional num) and the `grid:` key. Internal to src/config/.
#pragma once
#include <string>
#include <vector>

#include "config/yaml_util.h"

namespace tn::cfg {

// Reads `f` (a number, or a per-member map) into `scalar`. A map's values are checked against
// `r` (a linspace or logspace is kept as its ends and num, not expanded) and appended to
// c.member_values under `key`; `scalar` gets the first value. A missing field leaves `scalar`
// alone.
void read_member_value(const Field& f, const std::string& key, double& scalar, Range r, Config& c);

// A dense layer's activations, in the order YAML lists them.
const std::vector<Activation>& layer_activations();

// The smallest of the values of `mv`.
double smallest_value(const MemberValues& mv);

// Reads the top-level `grid: [key, key, ...]` (at least two per-member keys, combined as a
// cartesian product) and checks that every per-member key's values cover the swarm evenly.
void read_grid(const Field& root, Config& c);

}  // namespace tn::cfg
