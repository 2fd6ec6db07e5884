// Helpers shared by the data source tests: fixture files in a per-process temporary
// directory (plain or gzip-compressed) and the DataError message of a load.
#pragma once
#include <doctest/doctest.h>
#include <unistd.h>
#include <zlib.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "data/dataset.h"

namespace tn::test {

namespace fs = std::filesystem;
using Bytes = std::vector<unsigned char>;

#define CHECK_HAS(msg, part) CHECK_MESSAGE((msg).find(part) != std::string::npos, (msg))

// The per-process fixture directory, removed when the test program exits.
inline const fs::path& fixture_dir() {
  struct Dir {
    fs::path path = fs::temp_directory_path() /
                    ("turbanet_test_sources_" + std::to_string(::getpid()));
    Dir() { fs::create_directories(path); }
    ~Dir() {
      std::error_code ec;
      fs::remove_all(path, ec);
    }
  };
  static const Dir dir;
  return dir.path;
}

inline std::string write_bytes(const std::string& name, const Bytes& bytes) {
  const fs::path p = fixture_dir() / name;
  std::ofstream(p, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  return p.string();
}

inline std::string write_text(const std::string& name, const std::string& text) {
  return write_bytes(name, Bytes(text.begin(), text.end()));
}

// Writes `bytes` gzip-compressed through zlib.
inline std::string write_gz(const std::string& name, const Bytes& bytes) {
  const std::string p = (fixture_dir() / name).string();
  gzFile f = gzopen(p.c_str(), "wb");
  REQUIRE(f != nullptr);
  REQUIRE(gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size())) ==
          static_cast<int>(bytes.size()));
  REQUIRE(gzclose(f) == Z_OK);
  return p;
}

inline Bytes read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return Bytes(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// A source of `type` with string fields set, e.g.
// source_of("npy", {{&SourceConfig::x_path, "x.npy"}, {&SourceConfig::y_path, "y.npy"}}).
inline SourceConfig source_of(
    const char* type,
    std::initializer_list<std::pair<std::string SourceConfig::*, std::string>> fields) {
  SourceConfig s;
  s.type = type;
  for (const auto& [member, value] : fields) s.*member = value;
  return s;
}

// The DataError message of `load()`, or "<no error>".
template <class Load>
std::string data_error(Load load) {
  try {
    load();
  } catch (const DataError& e) {
    return e.what();
  }
  return "<no error>";
}

}  // namespace tn::test
