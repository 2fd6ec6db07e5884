// The error of every file the io layer reads or writes: run files, prediction files and their
// temporary and sealed forms.
#pragma once
#include <stdexcept>

namespace tn {

// A failure to read or write a run file (missing file, not HDF5, missing group, disk full).
struct RunFileError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace tn
