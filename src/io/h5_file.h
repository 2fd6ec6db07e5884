// Whole HDF5 files: atomic writing through an in-memory image, and checked opening for
// reading. Used by run_file.cpp and prediction_file.cpp; only src/io/ may include this file.
#pragma once
#include <functional>
#include <string>

#include "io/h5.h"
#include "io/run_file.h"

namespace tn::io {

// Builds an HDF5 file in memory with build(file) and writes it to `path` atomically: the
// bytes go to ".<name>.tmp-<pid>-<n>" beside `path`, are fsynced and renamed over `path`,
// so an existing file is either kept intact or replaced whole. Creates missing parent
// directories. Throws RunFileError("cannot write <kind> '<path>': ...") on any failure,
// after removing the temporary file.
void write_h5_atomically(const std::string& path, const std::string& kind,
                         const std::function<void(hid_t)>& build);

// Opens an existing HDF5 file read-only. Throws RunFileError naming `kind` and `path` when
// it is missing, a directory, or not HDF5. Call inside an h5::Session.
h5::Handle open_h5_for_reading(const std::string& path, const std::string& kind);

}  // namespace tn::io
