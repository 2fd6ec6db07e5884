// Reader of the `data` section (source, split, per-member data, normalization), used by load.cpp.
#pragma once
#include <string>

#include "config/yaml_util.h"

namespace tn::cfg {

// Fills `d` from the `data` map. A relative data file path (csv, idx, hdf5, npy) is resolved
// against the working directory, else against `base_dir` (the config file's directory).
void read_data(const Field& f, DataConfig& d, const std::string& base_dir);

}  // namespace tn::cfg
