// read_npy / load_npy: NumPy .npy files (format 1.0-3.0), little-endian numeric dtypes in C
// order, converted to float32 while reading.
#include <algorithm>
#include <bit>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string_view>
#include <utility>

#include "data/sources.h"

namespace tn {
namespace {

static_assert(std::endian::native == std::endian::little, "npy reading assumes a little-endian host");

constexpr std::string_view kMagic = "\x93NUMPY";
constexpr std::size_t kChunk = std::size_t{1} << 20;

struct Dtype {
  const char* descr;  // as NumPy writes it ('|' for one-byte types)
  std::size_t size;
  void (*convert)(const unsigned char* in, std::size_t count, float* out);
};

template <class T>
void convert(const unsigned char* in, std::size_t count, float* out) {
  for (std::size_t i = 0; i < count; ++i) {
    T v;
    std::memcpy(&v, in + i * sizeof(T), sizeof(T));
    out[i] = static_cast<float>(v);
  }
}

constexpr Dtype kDtypes[] = {
    {"<f4", 4, convert<float>},         {"<f8", 8, convert<double>},
    {"|i1", 1, convert<std::int8_t>},   {"<i2", 2, convert<std::int16_t>},
    {"<i4", 4, convert<std::int32_t>},  {"<i8", 8, convert<std::int64_t>},
    {"|u1", 1, convert<std::uint8_t>},  {"<u2", 2, convert<std::uint16_t>},
    {"<u4", 4, convert<std::uint32_t>}, {"<u8", 8, convert<std::uint64_t>},
    {"|b1", 1, convert<std::uint8_t>},
};

struct Header {
  std::string descr;
  bool fortran = false;
  std::vector<std::uint64_t> shape;
};

// Parser of the header: a Python dict literal such as
// {'descr': '<f4', 'fortran_order': False, 'shape': (3, 2), }
class HeaderParser {
 public:
  HeaderParser(std::string_view text, const std::string& where) : s_(text), where_(where) {}

  Header parse() {
    Header h;
    bool descr = false, fortran = false, shape = false;
    expect('{');
    while (!take('}')) {
      const std::string key = quoted();
      expect(':');
      if (key == "descr") {
        if (peek() == '[')
          fail("the array has a structured dtype (a list of named fields); save a plain "
               "numeric array, e.g. one field: arr['x']");
        h.descr = quoted(), descr = true;
      } else if (key == "fortran_order") {
        h.fortran = word() == "True", fortran = true;
      } else if (key == "shape") {
        h.shape = tuple(), shape = true;
      } else {
        fail("unexpected key '" + key + "'");
      }
      if (!take(',') && peek() != '}') fail("expected ',' or '}'");
    }
    if (!descr || !fortran || !shape) fail("it lacks one of 'descr', 'fortran_order', 'shape'");
    return h;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw DataError(where_ + "the .npy header is malformed: " + what + "; header: " +
                    std::string(s_.substr(0, 200)));
  }
  void skip_space() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  char peek() {
    skip_space();
    return pos_ < s_.size() ? s_[pos_] : '\0';
  }
  bool take(char c) {
    if (peek() != c) return false;
    ++pos_;
    return true;
  }
  void expect(char c) {
    if (!take(c)) fail(std::string("expected '") + c + "'");
  }
  std::string quoted() {
    const char q = peek();
    if (q != '\'' && q != '"') fail("expected a quoted string");
    const std::size_t end = s_.find(q, ++pos_);
    if (end == std::string_view::npos) fail("unterminated string");
    std::string out(s_.substr(pos_, end - pos_));
    pos_ = end + 1;
    return out;
  }
  std::string word() {
    skip_space();
    const std::size_t begin = pos_;
    while (pos_ < s_.size() && std::isalpha(static_cast<unsigned char>(s_[pos_]))) ++pos_;
    std::string w(s_.substr(begin, pos_ - begin));
    if (w != "True" && w != "False") fail("expected True or False");
    return w;
  }
  std::vector<std::uint64_t> tuple() {
    std::vector<std::uint64_t> dims;
    expect('(');
    while (!take(')')) {
      skip_space();
      const std::size_t begin = pos_;
      std::uint64_t v = 0;
      while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) {
        if (v > (UINT64_MAX - 9) / 10) fail("a dimension is too large");
        v = v * 10 + static_cast<std::uint64_t>(s_[pos_++] - '0');
      }
      if (pos_ == begin) fail("expected a dimension (a whole number)");
      take('L');  // Python 2 long
      dims.push_back(v);
      if (!take(',') && peek() != ')') fail("expected ',' or ')' in the shape");
    }
    return dims;
  }

  std::string_view s_;
  std::string where_;
  std::size_t pos_ = 0;
};

struct Closer {
  void operator()(std::FILE* f) const { std::fclose(f); }
};

const Dtype& find_dtype(std::string descr, const std::string& where) {
  if (descr.size() == 3 && descr[2] == '1' && (descr[0] == '<' || descr[0] == '>'))
    descr[0] = '|';  // byte order is meaningless for one-byte types
  if (descr.size() > 1 && descr[0] == '=') descr[0] = '<';  // native, and the host is little-endian
  for (const Dtype& d : kDtypes)
    if (descr == d.descr) return d;
  std::string why = "has dtype '" + descr + "', which turbanet does not read";
  if (!descr.empty() && descr[0] == '>') why = "is big-endian (dtype '" + descr + "')";
  throw DataError(where + why + "; convert it, e.g. numpy.save(path, arr.astype('<f4')) "
                  "(readable: little-endian float32/64, int8/16/32/64, uint8/16/32/64, bool)");
}

}  // namespace

NumericArray read_npy(const std::string& path, const std::string& key) {
  const std::string where = path + " (" + key + "): ";
  std::unique_ptr<std::FILE, Closer> file(std::fopen(path.c_str(), "rb"));
  if (!file) throw DataError(where + "cannot open the file: " + std::strerror(errno));
  std::FILE* f = file.get();
  unsigned char pre[12];
  const std::size_t got = std::fread(pre, 1, 10, f);
  if (got < 10 || std::string_view(reinterpret_cast<const char*>(pre), 6) != kMagic)
    throw DataError(where + "not a .npy file (it does not start with \\x93NUMPY); write it "
                            "with numpy.save");
  const int major = pre[6];
  if (major < 1 || major > 3)
    throw DataError(where + "unsupported .npy format version " + std::to_string(major) + "." +
                    std::to_string(pre[7]) + "; versions 1.0 to 3.0 are read");
  std::size_t header_len = pre[8] | std::size_t{pre[9]} << 8;
  if (major >= 2) {
    if (std::fread(pre + 10, 1, 2, f) < 2) throw DataError(where + "truncated .npy header");
    header_len |= std::size_t{pre[10]} << 16 | std::size_t{pre[11]} << 24;
  }
  // The length comes from the file: bounded (numpy writes a few hundred bytes) and checked
  // against the file's size before anything is allocated for it.
  std::error_code size_ec;
  const std::uint64_t size_on_disk = std::filesystem::file_size(path, size_ec);
  if (header_len > (std::size_t{1} << 24) || (!size_ec && header_len > size_on_disk))
    throw DataError(where + "truncated .npy header (it claims " + std::to_string(header_len) + " bytes)");
  std::string text(header_len, '\0');
  if (std::fread(text.data(), 1, header_len, f) < header_len) throw DataError(where + "truncated .npy header");
  const Header h = HeaderParser(text, where).parse();
  const Dtype& dtype = find_dtype(h.descr, where);
  if (h.fortran && h.shape.size() > 1)
    throw DataError(where + "the array is in Fortran (column-major) order; save a C-order copy: "
                            "numpy.save(path, numpy.ascontiguousarray(arr))");
  std::uint64_t count = 1;
  for (std::uint64_t d : h.shape) {
    if (d != 0 && count > (std::uint64_t{1} << 34) / d)
      throw DataError(where + "the array is too large (shape " + shape_text(h.shape) + ")");
    count *= d;
  }
  std::error_code ec;
  const std::uint64_t file_size = std::filesystem::file_size(path, ec);
  const std::uint64_t offset = (major >= 2 ? 12 : 10) + header_len, bytes = count * dtype.size;
  if (!ec && file_size - offset != bytes)
    throw DataError(where + (file_size - offset < bytes ? "truncated: " : "damaged: ") +
                    "the header declares shape " + shape_text(h.shape) + " of " + h.descr + " (" +
                    std::to_string(bytes) + " bytes of data) but " +
                    std::to_string(file_size - offset) + " bytes follow the header; write the "
                    "file again with numpy.save");
  NumericArray a{path, key, h.shape, std::vector<float>(count)};
  std::vector<unsigned char> buf(kChunk * dtype.size);
  for (std::uint64_t done = 0; done < count;) {
    const std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(kChunk, count - done));
    if (std::fread(buf.data(), dtype.size, want, f) < want)
      throw DataError(where + "cannot read the array data: " +
                      (std::ferror(f) ? std::strerror(errno) : "the file ends early"));
    dtype.convert(buf.data(), want, a.values.data() + done);
    done += want;
  }
  return a;
}

Dataset load_npy(const SourceConfig& s, bool classification) {
  SourceArrays a;
  a.X = read_npy(s.x_path, "data.source.x_path");
  a.y = read_npy(s.y_path, "data.source.y_path");
  if (!s.test_x_path.empty()) {
    a.test_X = read_npy(s.test_x_path, "data.source.test_x_path");
    a.test_y = read_npy(s.test_y_path, "data.source.test_y_path");
  }
  return dataset_from_arrays(std::move(a), classification, s.x_path);
}

}  // namespace tn
