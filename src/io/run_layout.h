// Names and texts of the run file's HDF5 layout (docs/run-file.md) that its checker, writer
// and reader share. Only src/io/ includes this file.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace tn::io {

inline constexpr int kFormatVersion = 1;

inline std::string layer_name(const std::string& root, std::size_t i) {
  return root + "/layer_" + std::to_string(i);
}


inline std::string shape_text(const std::vector<std::uint64_t>& shape) {
  std::string text = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) text += ',';
    text += std::to_string(shape[i]);
  }
  return text + "]";
}

}  // namespace tn::io
