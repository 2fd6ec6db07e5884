// Reads numeric datasets of any HDF5 file for data.source type hdf5 (the data module turns
// them into a Dataset). Does not expose HDF5 types.
#pragma once
#include <string>
#include <vector>

#include "io/numeric_array.h"

namespace tn::io {

// A dataset to read and the config key that names it (for messages).
struct H5Request {
  std::string dataset;  // "X", "/X" or "group/X"
  std::string key;      // "data.source.x_dataset"
};

// Reads each requested dataset of the HDF5 file `path` (integer or float type, any rank),
// converted to float32, in request order. Throws SourceError when the file is missing or not
// HDF5, a dataset is missing (listing the datasets the file has), names a group, or holds
// non-numeric values.
std::vector<NumericArray> read_h5_arrays(const std::string& path,
                                         const std::vector<H5Request>& requests);

}  // namespace tn::io
