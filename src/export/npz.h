// NumPy .npz archives: named arrays, each a .npy file (format 1.0) inside a zip archive (made
// with libzip, entries stored uncompressed, as numpy.savez does), built in memory so that the
// caller writes the file atomically. numpy.load(path)[name] reads an array back.
#pragma once
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

namespace tn {

struct NpyArray {
  std::string name;                  // key in the archive (the entry is name + ".npy")
  std::vector<std::uint64_t> shape;  // {} for a 0-d array
  // float32 ('<f4'), int32 ('<i4') or text ('<U<longest>', UTF-8 in, UTF-32 in the file).
  std::variant<std::vector<float>, std::vector<std::int32_t>, std::vector<std::string>> data;
};

// The bytes of one .npy file. Throws std::invalid_argument when the shape does not fit the
// data or a string is not valid UTF-8.
std::string npy_bytes(const NpyArray& a);

// The bytes of a .npz archive of `arrays`. Throws std::runtime_error when libzip fails.
std::string npz_bytes(const std::vector<NpyArray>& arrays);

}  // namespace tn
