// Reader of the `data` section (source, split, per-member data, normalization), used by load.cpp.
#pragma once
#include <string>

#include "config/yaml_util.h"

namespace tn::cfg {

// Fills `d` from the `data` map. A relative data file path (csv, idx, hdf5, npy) is resolved
// against the working directory, else against `base_dir` (the config file's directory).
void read_data(const Field& f, DataConfig& d, const std::string& base_dir);

// Fills d.sequence from `data.sequence` (load_sequence.cpp) and checks it against the rest of
// the data section `data` (source, split, per_member), which d already holds.
void read_sequence(const Field& f, const Field& data, DataConfig& d);

}  // namespace tn::cfg
