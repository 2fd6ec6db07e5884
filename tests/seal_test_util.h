// Test helpers for sealed files (src/io/file_seal.h), written from the format's description
// rather than with the project's code: the first 512 bytes hold
// "turbanet-seal v1\ncrc32 <8 hex digits>\nbytes <n>\n", zero padded, for the n bytes after them.
#pragma once
#include <libdeflate.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace tn::test {

inline std::vector<char> file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline void put_bytes(const std::string& path, const std::vector<char>& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// Writes a valid seal for the file's current bytes: what a file edited on purpose (e.g. with
// h5py) would need to be read again. Lets tests reach the reader's checks behind the seal.
inline void reseal(const std::string& path) {
  std::vector<char> b = file_bytes(path);
  if (b.size() < 512) return;
  const std::size_t n = b.size() - 512;
  char header[512] = {};
  std::snprintf(header, sizeof header, "turbanet-seal v1\ncrc32 %08x\nbytes %zu\n",
                static_cast<unsigned>(libdeflate_crc32(0, b.data() + 512, n)), n);
  std::copy(header, header + 512, b.begin());
  put_bytes(path, b);
}

// Zeroes the seal: the file reads as one written before files were sealed.
inline void unseal(const std::string& path) {
  std::vector<char> b = file_bytes(path);
  std::fill(b.begin(), b.begin() + std::min<std::size_t>(512, b.size()), '\0');
  put_bytes(path, b);
}

}  // namespace tn::test
