// Whole HDF5 files: atomic, sealed writing through an in-memory image, and reading that
// checks every byte before HDF5 parses it. Used by run_file.cpp and prediction_file.cpp; only src/io/ may include this file.
#pragma once
#include <functional>
#include <string>
#include <utility>

#include "io/atomic_file.h"
#include "io/h5.h"
#include "io/run_file_error.h"

namespace tn::io {

// Builds an HDF5 file in memory with build(file), seals it (io/file_seal.h) and writes it to
// `path` with write_file_atomically (io/atomic_file.h). Throws RunFileError("cannot write
// <kind> '<path>': ...") on any failure.
void write_h5_atomically(const std::string& path, const std::string& kind, const std::function<void(hid_t)>& build,
                         Replace replace);

// Reads the HDF5 file `path` with read(file) and returns what it returns. Every byte is
// checked first: a sealed file (io/file_seal.h) against its seal; a file without one (older
// turbanet versions, other programs) is read once in a child process, so that a crash or a
// hang of the HDF5 library on damaged bytes ends the child, not this process, and a file the
// child could not read is refused with the child's error, unopened here. Throws RunFileError
// naming `kind` and `path` when the file is missing, a directory, not HDF5 or damaged; an
// h5::Error thrown by read becomes "cannot read <kind> '<path>': ...".
template <class T>
T read_h5_checked(const std::string& path, const std::string& kind, const std::function<T(hid_t)>& read);

namespace detail {
// Checks existence, seal and (unsealed) a child's read, throwing the RunFileError read_all
// threw there; then opens read-only inside the caller's h5::Session.
void check_before_reading(const std::string& path, const std::string& kind, const std::function<void()>& read_all);
h5::Handle open_for_reading(const std::string& path, const std::string& kind);
}  // namespace detail

template <class T>
T read_h5_checked(const std::string& path, const std::string& kind, const std::function<T(hid_t)>& read) {
  const auto read_once = [&]() -> T {
    h5::Session session;
    h5::Handle file = detail::open_for_reading(path, kind);
    try {
      return read(file.get());
    } catch (const h5::Error& e) {
      throw RunFileError("cannot read " + kind + " '" + path + "': " + e.what());
    }
  };
  detail::check_before_reading(path, kind, [&] { read_once(); });
  return read_once();
}

}  // namespace tn::io
