// Fuzz harnesses: one function per input format turbanet reads, called on arbitrary bytes.
// Each feeds the bytes to the project's own readers the way the command line does and
// returns 0 when they either succeed or reject the input with a documented user error
// (ConfigError, DataError, RunFileError, UsageError, io::SourceError, BackendError: what the
// CLI turns into exit code 2). Anything else escapes: another exception, a crash or a
// sanitizer report is a finding.
//
// The same functions run under libFuzzer (tests/fuzz/fuzz_main.cpp, built with clang by
// TURBANET_FUZZ=ON, see scripts/fuzz.sh) and in the doctest suite, which replays every file
// of tests/fuzz/corpus/<harness>/ and tests/fuzz/regressions/<harness>/
// (tests/test_fuzz_replay.cpp).
#pragma once
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace tn::fuzz {

// A broken guarantee that is not an exception of the readers themselves (e.g. to_yaml output
// that does not parse back to the same configuration). Never caught by the harnesses.
struct Finding : std::logic_error {
  using std::logic_error::logic_error;
};

// YAML configuration and --set overrides: the text is the config file; every line that starts
// with "#--set " (a YAML comment, so seeds stay valid configs) is one --set argument. Parsed
// with parse_override and parse_config as `turbanet train` does (relative data paths resolve
// from configs/ of the source tree); a loaded config must survive to_yaml and parse back the same.
int config(const std::uint8_t* data, std::size_t size);

// A CSV file, loaded with load_dataset and prepare_data under several data settings derived
// from its header line: classification and regression on the last column, unlabeled features
// (predict inputs), group_by the first column, and sequence windows.
int csv(const std::uint8_t* data, std::size_t size);

// A .npy file: read_npy, then load_dataset/prepare_data with it as X (and a matching
// generated y), as y (with a generated X), and as the test pair.
int npy(const std::uint8_t* data, std::size_t size);

// An IDX file (images or labels, plain or gzip), as given and gzip-compressed, paired with a
// generated partner file of the matching count, through load_dataset and prepare_data.
int idx(const std::uint8_t* data, std::size_t size);

// A run file: load_swarm_with_own_data and load_swarm_model (what eval and predict start with: read_run_file, its /config, the
// model checked against the parameters) on the bytes as given, and again sealed anew for its
// bytes after the first 512 (the seal is a CRC anyone can recompute), so mutated HDF5 reaches
// the reader (a child process first, then this one) instead of stopping at the seal.
int run_file(const std::uint8_t* data, std::size_t size);

struct Harness {
  const char* name;  // also the directory name under tests/fuzz/corpus and regressions
  int (*run)(const std::uint8_t*, std::size_t);
};
const std::vector<Harness>& harnesses();

}  // namespace tn::fuzz
