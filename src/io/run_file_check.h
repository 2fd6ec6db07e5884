// The checks of a run file's in-memory form before anything is written: every array's shape
// matches its values, names are valid HDF5 group names, tensors are parameter tensors.
#pragma once
#include <string>

#include "io/run_records.h"

namespace tn::io {

// Throws RunFileError("cannot write run file '<path>': <what is wrong>") for the first fault.
void check_run_file(const std::string& path, const RunFile& run);

}  // namespace tn::io
