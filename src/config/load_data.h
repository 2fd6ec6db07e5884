// Reader of the `data` section (source, split, per-member data, normalization), used by load.cpp.
#pragma once
#include <string>
#include <vector>

#include "config/yaml_util.h"

namespace tn::cfg {

// Path `written` as found: an absolute path as written; a relative one looked up in `dirs` in
// order ("" is the working directory, where it stays as written), the first that is a file.
// "" when in none; `looked` (optional) gets the places tried, for messages.
std::string find_file(const std::string& written, const std::vector<std::string>& dirs,
                      std::vector<std::string>* looked = nullptr);

// Fills `d` from the `data` map. A relative data file path (csv, idx, hdf5, npy) is looked up in
// `dirs` in order ("" is the working directory); DataFileNotFound when it is in none.
void read_data(const Field& f, DataConfig& d, const std::vector<std::string>& dirs);

// Fills d.sequence from `data.sequence` (load_sequence.cpp) and checks it against the rest of
// the data section `data` (source, split, per_member), which d already holds.
void read_sequence(const Field& f, const Field& data, DataConfig& d);

}  // namespace tn::cfg
