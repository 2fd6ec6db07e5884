// One numeric array read from a data file (npy, hdf5, idx), converted to float32, and the
// error of a source file that cannot be read as one. Knows nothing of datasets or configs:
// data/arrays.h turns these arrays into a Dataset.
#pragma once
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace tn {

// One array from a file, converted to float32, row-major.
struct NumericArray {
  std::string origin;  // for messages: "x.npy" or "data.h5:/X"
  std::string key;     // the config key that named it: "data.source.x_path"
  std::vector<std::uint64_t> shape;
  std::vector<float> values;
};

namespace io {
// A data file that cannot be read (missing, not the expected format, a bad dataset); what()
// names the file, the config key and the problem. The data module reports it as a DataError.
struct SourceError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
}  // namespace io

}  // namespace tn
