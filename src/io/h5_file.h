// Whole HDF5 files: atomic, sealed writing through an in-memory image, and reading that checks
// every byte before HDF5 parses it and keeps HDF5's crashes out of this process. Used by
// run_file.cpp and prediction_file.cpp; only src/io/ may include this file.
#pragma once
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "io/atomic_file.h"
#include "io/h5.h"
#include "io/run_file_error.h"

namespace tn::io {

// Builds an HDF5 file in memory with build(file), seals it (io/file_seal.h) and writes it to
// `path` with write_file_atomically (io/atomic_file.h). Throws RunFileError("cannot write
// <kind> '<path>': ...") on any failure.
void write_h5_atomically(const std::string& path, const std::string& kind, const std::function<void(hid_t)>& build,
                         Replace replace);

// Reads the HDF5 file `path` with read(file) and returns what it returns. HDF5 1.10 crashes or
// loops on some crafted or damaged files, and a seal (io/file_seal.h) only proves the bytes
// are the ones sealed, not who sealed them. So the file's bytes are read once into memory,
// checked against their seal when they have one, and parsed from there twice: first in a
// child process, where a crash or a hang of the library ends the child, not this process;
// then, once the child read them without error, here. Both parse the same bytes: a file
// changed on disk meanwhile cannot slip in between. Throws RunFileError naming `kind` and
// `path` when the file is missing, a directory or not a regular file, not HDF5 or damaged, or
// when HDF5 crashed or hung on it; an h5::Error thrown by read becomes "cannot read <kind>
// '<path>': ...", and the child's RunFileError is thrown here unchanged.
template <class T>
T read_h5_checked(const std::string& path, const std::string& kind, const std::function<T(hid_t)>& read);

namespace detail {

// A whole file's bytes, read once, with what its seal said about them.
struct Image {
  std::string named;  // "run file 'x.h5'"
  std::vector<unsigned char> bytes;
  bool sealed = false;
};

// Reads `path` whole and checks its seal and HDF5's signature; throws RunFileError when it is
// missing, a directory or another non-regular file (a FIFO, a device), unreadable, damaged or not HDF5.
Image load_image(const std::string& path, const std::string& kind);
// Runs read_all() in a child process (the image is the child's too) and throws RunFileError
// when it crashed, did not finish in time, or threw RunFileError there (its message).
void read_in_child(const Image& image, const std::function<void()>& read_all);
// Opens the image read-only, inside the caller's h5::Session, without copying its bytes.
h5::Handle open_image(const Image& image);

}  // namespace detail

template <class T>
T read_h5_checked(const std::string& path, const std::string& kind, const std::function<T(hid_t)>& read) {
  const detail::Image image = detail::load_image(path, kind);
  const auto read_once = [&]() -> T {
    h5::Session session;
    h5::Handle file = detail::open_image(image);
    try {
      return read(file.get());
    } catch (const h5::Error& e) {
      throw RunFileError("cannot read " + kind + " '" + path + "': " + e.what());
    }
  };
  detail::read_in_child(image, [&] { read_once(); });
  return read_once();
}

}  // namespace tn::io
