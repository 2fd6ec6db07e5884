// .npy headers and data, and the zip archive around them (npz.h).
#include "export/npz.h"

#include <zip.h>

#include <cstring>
#include <memory>
#include <stdexcept>

namespace tn {
namespace {

// UTF-8 → code points; throws on a malformed sequence.
std::u32string utf32(const std::string& s) {
  std::u32string out;
  for (std::size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    const int extra = c < 0x80 ? 0 : (c >> 5) == 0x6 ? 1 : (c >> 4) == 0xE ? 2 : (c >> 3) == 0x1E ? 3 : -1;
    if (extra < 0 || i + extra >= s.size())
      throw std::invalid_argument("not valid UTF-8: '" + s + "'");
    char32_t cp = extra == 0 ? c : c & (0x3F >> extra);
    for (int k = 1; k <= extra; ++k) {
      const unsigned char d = static_cast<unsigned char>(s[i + k]);
      if ((d >> 6) != 0x2) throw std::invalid_argument("not valid UTF-8: '" + s + "'");
      cp = (cp << 6) | (d & 0x3F);
    }
    out.push_back(cp);
    i += 1 + extra;
  }
  return out;
}

void put_le32(std::string& out, std::uint32_t v) {
  for (int k = 0; k < 4; ++k) out.push_back(static_cast<char>((v >> (8 * k)) & 0xFF));
}

std::string shape_text(const std::vector<std::uint64_t>& shape) {  // (), (3,), (2, 3)
  std::string t = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) t += (i ? ", " : "") + std::to_string(shape[i]);
  return t + (shape.size() == 1 ? ",)" : ")");
}

template <class T>
std::string raw(const std::vector<T>& v) {
  std::string out(v.size() * sizeof(T), '\0');
  if (!v.empty()) std::memcpy(out.data(), v.data(), out.size());  // little-endian, as in memory
  return out;
}

struct ZipSourceFree {
  void operator()(zip_source_t* s) const { zip_source_free(s); }
};

[[noreturn]] void zip_failed(const std::string& what, zip_error_t* e) {
  const std::string msg = zip_error_strerror(e);
  throw std::runtime_error("cannot build the .npz archive: " + what + ": " + msg);
}

}  // namespace

std::string npy_bytes(const NpyArray& a) {
  std::uint64_t n = 1;
  for (std::uint64_t d : a.shape) n *= d;
  std::string descr, body;
  std::size_t count = 0;
  if (const auto* f = std::get_if<std::vector<float>>(&a.data)) {
    descr = "<f4", body = raw(*f), count = f->size();
  } else if (const auto* i = std::get_if<std::vector<std::int32_t>>(&a.data)) {
    descr = "<i4", body = raw(*i), count = i->size();
  } else {
    const auto& strings = std::get<std::vector<std::string>>(a.data);
    std::vector<std::u32string> wide;
    std::size_t longest = 1;
    for (const std::string& s : strings) longest = std::max(longest, (wide.push_back(utf32(s)), wide.back().size()));
    descr = "<U" + std::to_string(longest);
    for (const std::u32string& w : wide)
      for (std::size_t k = 0; k < longest; ++k) put_le32(body, k < w.size() ? static_cast<std::uint32_t>(w[k]) : 0);
    count = strings.size();
  }
  if (count != n)
    throw std::invalid_argument("array '" + a.name + "': " + std::to_string(count) + " values for shape " + shape_text(a.shape));
  std::string header = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape_text(a.shape) + ", }";
  // Magic (6) + version (2) + length (2) + header, padded with spaces to a multiple of 64 and
  // ending in a newline.
  const std::size_t total = (10 + header.size() + 1 + 63) / 64 * 64;
  header.append(total - 10 - header.size() - 1, ' ');
  header += '\n';
  std::string out = "\x93NUMPY";
  out += '\x01';
  out += '\x00';
  out.push_back(static_cast<char>(header.size() & 0xFF));
  out.push_back(static_cast<char>(header.size() >> 8));
  return out + header + body;
}

std::string npz_bytes(const std::vector<NpyArray>& arrays) {
  zip_error_t err;
  zip_error_init(&err);
  std::unique_ptr<zip_source_t, ZipSourceFree> mem(zip_source_buffer_create(nullptr, 0, 0, &err));
  if (!mem) zip_failed("an in-memory buffer", &err);
  zip_source_keep(mem.get());  // the archive's close must not free it: its bytes are read below
  zip_t* za = zip_open_from_source(mem.get(), ZIP_TRUNCATE, &err);
  if (!za) zip_failed("opening it", &err);
  std::vector<std::string> entries;  // libzip reads them at zip_close
  entries.reserve(arrays.size());
  for (const NpyArray& a : arrays) {
    entries.push_back(npy_bytes(a));
    zip_source_t* s = zip_source_buffer(za, entries.back().data(), entries.back().size(), 0);
    const zip_int64_t idx = s ? zip_file_add(za, (a.name + ".npy").c_str(), s, ZIP_FL_ENC_UTF_8) : -1;
    if (idx < 0) {
      if (s) zip_source_free(s);
      const std::string msg = zip_strerror(za);
      zip_discard(za);
      throw std::runtime_error("cannot build the .npz archive: adding '" + a.name + "': " + msg);
    }
    zip_set_file_compression(za, static_cast<zip_uint64_t>(idx), ZIP_CM_STORE, 0);
  }
  if (zip_close(za) != 0) {
    const std::string msg = zip_strerror(za);
    zip_discard(za);
    throw std::runtime_error("cannot build the .npz archive: " + msg);
  }
  zip_source_t* src = mem.get();
  if (zip_source_open(src) != 0) zip_failed("reading it back", zip_source_error(src));
  zip_source_seek(src, 0, SEEK_END);
  const zip_int64_t size = zip_source_tell(src);
  zip_source_seek(src, 0, SEEK_SET);
  std::string out(static_cast<std::size_t>(size < 0 ? 0 : size), '\0');
  const zip_int64_t got = out.empty() ? 0 : zip_source_read(src, out.data(), out.size());
  zip_source_close(src);
  if (size < 0 || got != size) throw std::runtime_error("cannot build the .npz archive: reading it back failed");
  return out;
}

}  // namespace tn
