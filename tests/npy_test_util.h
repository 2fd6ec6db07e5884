// NumPy .npy files written byte by byte for tests (the array sources' fixtures, multi-target
// regression data), without NumPy.
#pragma once
#include <cstring>
#include <initializer_list>
#include <string>
#include <vector>

namespace tn::test {

using NpyBytes = std::vector<unsigned char>;

// A .npy file: magic, version, header length, the header dict padded to 64 bytes, data.
inline NpyBytes npy(const std::string& descr, const std::string& shape, const NpyBytes& data, bool fortran = false,
                    int major = 1) {
  std::string dict = "{'descr': " + (descr.starts_with('[') ? descr : "'" + descr + "'") +
                     ", 'fortran_order': " + (fortran ? "True" : "False") + ", 'shape': " + shape + ", }";
  const std::size_t pre = major == 1 ? 10 : 12;
  while ((pre + dict.size() + 1) % 64 != 0) dict += ' ';
  dict += '\n';
  NpyBytes out = {0x93, 'N', 'U', 'M', 'P', 'Y', static_cast<unsigned char>(major), 0};
  for (std::size_t i = 0; i < pre - 8; ++i) out.push_back(static_cast<unsigned char>(dict.size() >> (8 * i)));
  out.insert(out.end(), dict.begin(), dict.end());
  out.insert(out.end(), data.begin(), data.end());
  return out;
}

// The little-endian bytes of `values` as T.
template <class T>
NpyBytes raw(const std::vector<T>& values) {
  NpyBytes out(values.size() * sizeof(T));
  if (!out.empty()) std::memcpy(out.data(), values.data(), out.size());
  return out;
}
template <class T>
NpyBytes raw(std::initializer_list<T> values) {
  return raw(std::vector<T>(values));
}

}  // namespace tn::test
