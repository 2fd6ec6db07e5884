// load_idx: MNIST-style IDX image and label files, plain or gzip (zlib reads both), read in
// whole buffers and converted to a Dataset through dataset_from_arrays.
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <utility>
#include <vector>

#include "data/sources.h"

namespace tn {
namespace {

constexpr std::uint32_t kImagesMagic = 0x00000803, kLabelsMagic = 0x00000801;
constexpr std::size_t kReadStep = std::size_t{64} << 20;  // buffers grow only as data arrives
constexpr std::uint64_t kMaxBytes = std::uint64_t{1} << 36;

std::string hex(std::uint32_t v, int digits = 8) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%0*X", digits, v);
  return buf;
}

// Bytes of an array of shape `dims`, or kMaxBytes + 1 when larger than kMaxBytes.
std::uint64_t byte_count(const std::vector<std::uint64_t>& dims) {
  std::uint64_t n = 1;
  for (std::uint64_t d : dims) {
    if (d != 0 && n > kMaxBytes / d) return kMaxBytes + 1;
    n *= d;
  }
  return n;
}

// One IDX file open through zlib (gzip or plain), with messages naming the file and key.
class IdxFile {
 public:
  IdxFile(std::string path, std::string key) : path_(std::move(path)), key_(std::move(key)) {
    file_ = gzopen(path_.c_str(), "rb");
    if (!file_)
      fail(std::string("cannot open the file: ") + (errno ? std::strerror(errno) : "out of memory"));
    gzbuffer(file_, 1 << 20);
  }
  ~IdxFile() { gzclose(file_); }
  IdxFile(const IdxFile&) = delete;
  IdxFile& operator=(const IdxFile&) = delete;

  [[noreturn]] void fail(const std::string& problem) const {
    throw DataError(path_ + " (" + key_ + "): " + problem);
  }

  // Reads the magic number and dimensions; the magic must be `magic` (unsigned bytes).
  std::vector<std::uint64_t> header(std::uint32_t magic) {
    unsigned char m[4];
    if (read(m, 4) < 4) fail("the file is empty or too short to be an IDX file");
    const std::uint32_t got = big_endian(m);
    const bool images = magic == kImagesMagic;
    if (got == (images ? kLabelsMagic : kImagesMagic))
      fail(std::string("this is an IDX ") + (images ? "label" : "image") + " file (magic " +
           hex(got) + "), expected " + (images ? "images" : "labels") + " (magic " + hex(magic) +
           "); are data.source.images and labels swapped?");
    if (m[0] != 0 || m[1] != 0 || m[2] < 0x08 || m[2] > 0x0E)
      fail("not an IDX file: it starts with " + hex(got) + " instead of the magic number " +
           hex(magic) + " (" + kind() + "); give the MNIST-style file, plain or .gz");
    if (m[2] != 0x08)
      fail("holds IDX element type " + hex(m[2], 2) + "; only unsigned bytes (type 0x08, "
           "magic " + hex(magic) + ") are supported");
    if (m[3] != (magic & 0xFF))
      fail("has " + std::to_string(m[3]) + " dimensions (magic " + hex(got) + "), expected " +
           std::to_string(magic & 0xFF) + " (magic " + hex(magic) + ", " + kind() + ")");
    std::vector<std::uint64_t> dims(m[3]);
    for (std::uint64_t& d : dims) {
      unsigned char b[4];
      if (read(b, 4) < 4) fail("truncated: the file ends inside its header");
      d = big_endian(b);
    }
    return dims;
  }

  // The `count` data bytes after the header; fails when fewer or more follow.
  std::vector<unsigned char> body(std::uint64_t count, const std::string& declared) {
    if (count > kMaxBytes) fail("the header declares " + declared + ", which is implausibly large");
    std::vector<unsigned char> data;
    while (data.size() < count) {
      const std::size_t have = data.size();
      data.resize(std::min<std::uint64_t>(count, have + kReadStep));
      const std::size_t got = read(data.data() + have, data.size() - have);
      if (got < data.size() - have)
        fail("truncated: the header declares " + declared + " (" + std::to_string(count) +
             " bytes) but only " + std::to_string(have + got) + " bytes follow" + cut_off() +
             "; download or write the file again");
    }
    unsigned char extra;
    if (read(&extra, 1) > 0)
      fail("has more data than the header declares (" + declared +
           "); the file is damaged or its header is wrong");
    return data;
  }

 private:
  static std::uint32_t big_endian(const unsigned char* b) {
    return std::uint32_t{b[0]} << 24 | std::uint32_t{b[1]} << 16 | std::uint32_t{b[2]} << 8 | b[3];
  }
  std::string kind() const { return key_.find("images") != std::string::npos ? "images" : "labels"; }
  std::string cut_off() const {
    int err = Z_OK;
    gzerror(file_, &err);
    return err == Z_BUF_ERROR ? " (the gzip stream is cut off)" : "";
  }

  // Reads up to `len` bytes; fewer only at the end of the data.
  std::size_t read(unsigned char* out, std::size_t len) {
    std::size_t done = 0;
    while (done < len) {
      const unsigned chunk = static_cast<unsigned>(std::min<std::size_t>(len - done, 1u << 30));
      const int got = gzread(file_, out + done, chunk);
      if (got < 0) {
        int err = Z_OK;
        const char* msg = gzerror(file_, &err);
        fail(std::string("cannot read it: ") + (err == Z_ERRNO ? std::strerror(errno) : msg) +
             (err == Z_DATA_ERROR ? " (the gzip data is corrupt)" : ""));
      }
      if (got == 0) break;
      done += static_cast<std::size_t>(got);
    }
    return done;
  }

  std::string path_, key_;
  gzFile file_ = nullptr;
};

struct Images {
  NumericArray pixels;
  std::uint64_t rows = 0, cols = 0;
};

Images read_images(const std::string& path, const std::string& key) {
  IdxFile f(path, key);
  const std::vector<std::uint64_t> d = f.header(kImagesMagic);
  if (d[0] == 0) f.fail("the file holds no images");
  const std::string declared = std::to_string(d[0]) + " images of " + std::to_string(d[1]) +
                               "x" + std::to_string(d[2]) + " pixels";
  const std::vector<unsigned char> bytes = f.body(byte_count(d), declared);
  Images im{{path, key, {d[0], d[1] * d[2]}, std::vector<float>(bytes.size())}, d[1], d[2]};
  std::transform(bytes.begin(), bytes.end(), im.pixels.values.begin(),
                 [](unsigned char b) { return static_cast<float>(b) / 255.0f; });
  return im;
}

NumericArray read_labels(const std::string& path, const std::string& key, const Images& images) {
  IdxFile f(path, key);
  const std::uint64_t n = f.header(kLabelsMagic)[0];
  const std::vector<unsigned char> bytes = f.body(n, std::to_string(n) + " labels");
  if (n != images.pixels.shape[0])
    f.fail("holds " + std::to_string(n) + " labels but " + images.pixels.origin + " holds " +
           std::to_string(images.pixels.shape[0]) + " images; give the matching pair of files");
  return {path, key, {n}, std::vector<float>(bytes.begin(), bytes.end())};
}

}  // namespace

Dataset load_idx(const SourceConfig& s) {
  Images train = read_images(s.images, "data.source.images");
  SourceArrays a;
  a.y = read_labels(s.labels, "data.source.labels", train);
  if (!s.test_images.empty()) {
    Images test = read_images(s.test_images, "data.source.test_images");
    if (test.rows != train.rows || test.cols != train.cols)
      throw DataError(s.test_images + " (data.source.test_images): the test images are " +
                      std::to_string(test.rows) + "x" + std::to_string(test.cols) +
                      " pixels, the training images (" + s.images + ") " +
                      std::to_string(train.rows) + "x" + std::to_string(train.cols));
    a.test_y = read_labels(s.test_labels, "data.source.test_labels", test);
    a.test_X = std::move(test.pixels);
  }
  a.X = std::move(train.pixels);
  Dataset d = dataset_from_arrays(std::move(a), true, s.images);
  for (int f = 0; f < d.features; ++f) d.feature_names[f] = "pixel" + std::to_string(f + 1);
  return d;
}

}  // namespace tn
