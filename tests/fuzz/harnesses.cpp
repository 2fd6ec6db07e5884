// The fuzz harnesses (see harnesses.h): arbitrary bytes through the project's readers.
#include "harnesses.h"

#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string_view>

#include "backend/backend.h"
#include "config/config.h"
#include "data/dataset.h"
#include "data/prepare.h"
#include "data/sources.h"
#include "io/file_seal.h"
#include "io/numeric_array.h"
#include "io/run_file.h"
#include "run/errors.h"
#include "run/stored_swarm.h"
#include "util/utf8.h"

#ifndef TURBANET_SOURCE_DIR
#error "TURBANET_SOURCE_DIR must name the source tree (configs/ resolves the configs' data paths)"
#endif

namespace tn::fuzz {
namespace {

namespace fs = std::filesystem;

// Partner files are generated for at most this many samples; larger counts are paired with a
// one-sample partner (a mismatch the readers must report).
constexpr std::uint64_t kMaxGenerated = 1 << 16;

// Runs fn; true when it returned, false when it threw one of the documented user errors
// (the CLI's exit code 2). Every other exception propagates: it is a finding.
// With TURBANET_FUZZ_VERBOSE set, the message of every rejection goes to stderr (to see how
// far the seeds get).
template <class Fn>
bool accepted(Fn&& fn) {
  static const bool verbose = std::getenv("TURBANET_FUZZ_VERBOSE") != nullptr;
  const auto rejected = [](const std::exception& e) {
    if (verbose) std::fprintf(stderr, "rejected: %s\n", e.what());
    return false;
  };
  try {
    fn();
    if (verbose) std::fprintf(stderr, "accepted\n");
    return true;
  } catch (const ConfigError& e) {
    return rejected(e);
  } catch (const DataError& e) {
    return rejected(e);
  } catch (const RunFileError& e) {
    return rejected(e);
  } catch (const UsageError& e) {
    return rejected(e);
  } catch (const io::SourceError& e) {
    return rejected(e);
  } catch (const BackendError& e) {
    return rejected(e);
  }
}

// This process's scratch directory (under TMPDIR), removed at exit.
const fs::path& scratch() {
  static const fs::path dir = [] {
    fs::path d = fs::temp_directory_path() / ("turbanet-fuzz-" + std::to_string(::getpid()));
    fs::remove_all(d);
    fs::create_directories(d);
    std::atexit([] {
      std::error_code ec;
      fs::remove_all(scratch(), ec);
    });
    return d;
  }();
  return dir;
}

// Writes `bytes` to scratch()/name, replacing it; returns the path.
std::string put(const std::string& name, std::string_view bytes) {
  const std::string path = (scratch() / name).string();
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) throw std::runtime_error("fuzz harness: cannot create " + path);
  for (std::size_t done = 0; done < bytes.size();) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n <= 0) {
      ::close(fd);
      throw std::runtime_error("fuzz harness: cannot write " + path);
    }
    done += static_cast<std::size_t>(n);
  }
  ::close(fd);
  return path;
}

std::string_view as_text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// What `turbanet train` does with the data section after the config: load, split, normalize.
void load_and_prepare(const DataConfig& d, bool classification) {
  prepare_data(load_dataset(d, classification), d);
}

// ---- config ------------------------------------------------------------------------------

void check_round_trip(const Config& c, const std::string& origin) {
  const std::string text = to_yaml(c);
  std::string again;
  try {
    again = to_yaml(parse_config(text, origin));
  } catch (const ConfigError& e) {
    throw Finding(std::string("to_yaml output does not parse back: ") + e.what() + "\n--- to_yaml:\n" + text);
  }
  if (again != text)
    throw Finding("to_yaml -> parse_config -> to_yaml changed the configuration:\n--- first:\n" + text +
                  "--- second:\n" + again);
}

// ---- csv ---------------------------------------------------------------------------------

// The column names of the first line, split at commas outside double quotes, trimmed and
// unquoted: a guess at the header that the settings below are built from.
std::vector<std::string> header_names(std::string_view text) {
  if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);
  text = text.substr(0, text.find('\n'));
  std::vector<std::string> names(1);
  bool quoted = false;
  for (char ch : text) {
    if (ch == '"') quoted = !quoted;
    else if (ch == ',' && !quoted) names.emplace_back();
    else names.back() += ch;
  }
  for (std::string& n : names) {
    const auto first = n.find_first_not_of(" \t\r");
    n = first == std::string::npos ? "" : n.substr(first, n.find_last_not_of(" \t\r") - first + 1);
  }
  return names;
}

// ---- npy and idx partner files -----------------------------------------------------------

std::string npy_file(const std::string& descr, const std::vector<std::uint64_t>& shape, std::string_view body) {
  std::string dims;
  for (std::uint64_t d : shape) dims += std::to_string(d) + ", ";
  if (shape.size() > 1) dims.resize(dims.size() - 2);
  std::string header = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': (" + dims + "), }";
  header.append(63 - (10 + header.size()) % 64, ' ');  // NumPy pads so the data start is 64-aligned
  header += '\n';
  std::string out("\x93NUMPY\x01\x00", 8);
  out += static_cast<char>(header.size() & 0xFF);
  out += static_cast<char>(header.size() >> 8);
  return out + header + std::string(body);
}

// n int64 class labels 0, 1, 2, 0, ...
std::string npy_labels(std::uint64_t n) {
  std::string body;
  for (std::uint64_t i = 0; i < n; ++i) {
    const std::int64_t v = static_cast<std::int64_t>(i % 3);
    body.append(reinterpret_cast<const char*>(&v), sizeof v);
  }
  return npy_file("<i8", {n}, body);
}

// n float32 rows of 2 features.
std::string npy_features(std::uint64_t n) {
  std::string body;
  for (std::uint64_t i = 0; i < 2 * n; ++i) {
    const float v = static_cast<float>(i % 7) * 0.5f - 1.0f;
    body.append(reinterpret_cast<const char*>(&v), sizeof v);
  }
  return npy_file("<f4", {n, 2}, body);
}

std::string big_endian(std::uint32_t v) {
  return {static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8), static_cast<char>(v)};
}

std::string idx_labels(std::uint64_t n) {
  std::string out = big_endian(0x00000801) + big_endian(static_cast<std::uint32_t>(n));
  for (std::uint64_t i = 0; i < n; ++i) out += static_cast<char>(i % 3);
  return out;
}

std::string idx_images(std::uint64_t n) {  // n images of 2x2 pixels
  std::string out = big_endian(0x00000803) + big_endian(static_cast<std::uint32_t>(n)) + big_endian(2) + big_endian(2);
  for (std::uint64_t i = 0; i < 4 * n; ++i) out += static_cast<char>(i * 37 % 256);
  return out;
}

// The first 8 bytes of an IDX file (magic, first dimension) as zlib reads them (gzip or plain).
std::optional<std::pair<std::uint32_t, std::uint32_t>> idx_head(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  if (!f) return std::nullopt;
  unsigned char b[8];
  const int got = gzread(f, b, sizeof b);
  gzclose(f);
  if (got != static_cast<int>(sizeof b)) return std::nullopt;
  const auto word = [&](int i) {
    return std::uint32_t{b[i]} << 24 | std::uint32_t{b[i + 1]} << 16 | std::uint32_t{b[i + 2]} << 8 | b[i + 3];
  };
  return std::make_pair(word(0), word(4));
}

std::string gzip(std::string_view bytes, const std::string& name) {
  const std::string path = (scratch() / name).string();
  gzFile f = gzopen(path.c_str(), "wb1");
  if (!f) throw std::runtime_error("fuzz harness: cannot create " + path);
  if (!bytes.empty() && gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size())) <= 0) {
    gzclose(f);
    throw std::runtime_error("fuzz harness: cannot write " + path);
  }
  gzclose(f);
  return path;
}

// One IDX file at `path` (images, labels or neither), with a generated partner.
void idx_file(const std::string& path) {
  const auto head = idx_head(path);
  const bool labels = head && head->first == 0x00000801;
  std::uint64_t n = head && (labels || head->first == 0x00000803) ? head->second : 1;
  if (n == 0 || n > kMaxGenerated) n = 1;
  DataConfig d;
  d.source.type = "idx";
  d.split = {0.8, 0.2, 0.0, 1};
  if (labels) {
    d.source.images = put("partner-images.idx", idx_images(n));
    d.source.labels = path;
  } else {
    d.source.images = path;
    d.source.labels = put("partner-labels.idx", idx_labels(n));
  }
  if (!accepted([&] { load_and_prepare(d, true); })) return;
  d.source.test_images = d.source.images;  // the same pair as the test split
  d.source.test_labels = d.source.labels;
  accepted([&] { load_and_prepare(d, true); });
}

}  // namespace

int config(const std::uint8_t* data, std::size_t size) {
  const std::string text(as_text(data, size));
  std::vector<std::string> sets;
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t end = std::min(text.find('\n', at), text.size());
    const std::string_view line(text.data() + at, end - at);
    if (line.starts_with("#--set ")) sets.emplace_back(line.substr(7));
    at = end + 1;
  }
  // As if the file were configs/fuzz.yaml: relative data paths (../data/iris.csv) resolve.
  const std::string origin = TURBANET_SOURCE_DIR "/configs/fuzz.yaml";
  accepted([&] {
    std::vector<Override> ov;
    for (const std::string& s : sets) ov.push_back(parse_override(s));
    const Config c = parse_config(text, origin, ov);
    check_round_trip(c, origin);
  });
  return 0;
}

int csv(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = as_text(data, size);
  const std::string path = put("input.csv", text);
  const std::vector<std::string> names = header_names(text);
  const std::string& first = names.front();
  const std::string& last = names.back();

  DataConfig base;
  base.source.type = "csv";
  base.source.path = path;
  base.source.target = last;
  base.split = {0.7, 0.15, 0.15, 1};
  base.normalize = Normalize::Standard;

  // Classification on the last column, every other column a feature.
  accepted([&] { load_and_prepare(base, true); });

  // Regression on the last column from the first one, min-max scaled, everything in train.
  DataConfig reg = base;
  if (names.size() > 1) reg.source.features = {first};
  reg.normalize = Normalize::MinMax;
  reg.split = {1.0, 0.0, 0.0, 0};
  accepted([&] { load_and_prepare(reg, false); });

  // Prediction inputs: the listed feature columns, no target.
  DataConfig unlabeled = base;
  unlabeled.source.target.clear();
  unlabeled.source.features.assign(names.begin(), names.end() - (names.size() > 1 ? 1 : 0));
  accepted([&] { load_dataset(unlabeled, false); });

  if (names.size() < 2) return 0;
  // One member per value of the first column, statistics per group.
  DataConfig grouped = base;
  grouped.per_member = PerMember::GroupBy;
  grouped.group_by = first;
  grouped.normalize_per_member = true;
  accepted([&] { load_and_prepare(grouped, false); });

  // Windows over the last column, per series of the first column, ordered by the second.
  DataConfig seq = base;
  seq.sequence.window = 2;
  seq.sequence.target = last;
  seq.sequence.features = {last};
  seq.split = {0.6, 0.2, 0.2, 0};
  if (names.size() > 2) {
    seq.per_member = PerMember::GroupBy;
    seq.group_by = first;
    seq.sequence.time = names[1];
  }
  accepted([&] { load_and_prepare(seq, false); });
  return 0;
}

int npy(const std::uint8_t* data, std::size_t size) {
  const std::string path = put("input.npy", as_text(data, size));
  NumericArray a;
  if (!accepted([&] { a = read_npy(path, "data.source.x_path"); })) return 0;
  std::uint64_t n = a.shape.empty() ? 1 : a.shape[0];
  if (n == 0 || n > kMaxGenerated) n = 1;
  const std::string labels = put("labels.npy", npy_labels(n));
  const std::string features = put("features.npy", npy_features(n));

  DataConfig d;
  d.source.type = "npy";
  d.split = {0.7, 0.15, 0.15, 1};
  d.normalize = Normalize::Standard;
  // The input as X with class labels.
  d.source.x_path = path;
  d.source.y_path = labels;
  accepted([&] { load_and_prepare(d, true); });
  // The input as y, for classification and for regression.
  d.source.x_path = features;
  d.source.y_path = path;
  accepted([&] { load_and_prepare(d, true); });
  accepted([&] { load_and_prepare(d, false); });
  // The input as the test X.
  d.source.y_path = labels;
  d.source.test_x_path = path;
  d.source.test_y_path = labels;
  accepted([&] { load_and_prepare(d, true); });
  return 0;
}

int idx(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes = as_text(data, size);
  idx_file(put("input.idx", bytes));
  idx_file(gzip(bytes, "input.idx.gz"));
  return 0;
}

// A run file's text must be UTF-8 once it is read (io/h5.h checks every string): other bytes
// would reach JSON output or a terminal. Checks the texts the loaded swarm kept, a finding otherwise.
void check_text(const StoredSwarm& s) {
  const RunFile& f = s.file;
  std::vector<std::string_view> texts = {f.config_yaml, f.meta.version, f.meta.name, f.meta.device, f.meta.kernel,
                                         f.meta.created, f.data.target, f.data.base_dir};
  for (const auto* names : {&f.data.feature_names, &f.data.class_names, &s.class_names})
    texts.insert(texts.end(), names->begin(), names->end());
  for (std::string_view t : texts)
    if (invalid_utf8(t) != std::string_view::npos)
      throw Finding("a run file was read with text that is not UTF-8: '" + std::string(t.substr(0, 200)) + "'");
}

int run_file(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes = as_text(data, size);
  accepted([&] { check_text(load_swarm_with_own_data(put("run.h5", bytes))); });
  if (size < io::kSealBytes) return 0;
  // Sealed again for its bytes after the first 512: a mutation reaches HDF5 past the seal, as
  // a file edited and sealed again on purpose does (the reader's child process, then this one).
  std::vector<unsigned char> image(data + io::kSealBytes, data + size);
  io::seal_image(image);
  if (std::equal(image.begin(), image.end(), data)) return 0;  // sealed already: read above
  const std::string resealed = put("resealed.h5", as_text(image.data(), image.size()));
  if (accepted([&] { check_text(load_swarm_with_own_data(resealed)); })) accepted([&] { check_text(load_swarm_model(resealed)); });
  return 0;
}

const std::vector<Harness>& harnesses() {
  static const std::vector<Harness> all = {
      {"config", config}, {"csv", csv}, {"npy", npy}, {"idx", idx}, {"run_file", run_file}};
  return all;
}

}  // namespace tn::fuzz
