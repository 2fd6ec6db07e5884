// The error of every file the io layer reads or writes: run files, prediction files and their
// temporary and sealed forms.
#pragma once
#include <string>
#include <utility>

#include "util/user_error.h"

namespace tn {

// A failure to read or write a run file (missing file, not HDF5, missing group, disk full).
// Bad input (exit 2) by default; writing_output marks the failures of writing one (exit 1).
struct RunFileError : UserError {
  using UserError::UserError;
};

// Runs `write`, which writes a command's output file (reading or locking what it writes over
// on the way), and returns what it returns: a RunFileError it throws is an I/O failure
// (kExitIoFailure), whatever step failed.
template <class Write>
decltype(auto) writing_output(Write&& write) {
  try {
    return std::forward<Write>(write)();
  } catch (const RunFileError& e) {
    if (e.exit_code() == kExitIoFailure) throw;
    throw RunFileError(e.what(), kExitIoFailure);
  }
}

}  // namespace tn
