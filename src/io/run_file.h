// The run file: one HDF5 file per training run, readable with h5py. This header is the
// in-memory form; io/run_file.cpp is the only code that knows HDF5. The layout is
// documented in docs/run-file.md.
#pragma once
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace tn {

// A failure to read or write a run file (missing file, not HDF5, missing group, disk full).
struct RunFileError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A dense float32 array in row-major order.
struct Array {
  std::vector<std::uint64_t> shape;
  std::vector<float> data;
  std::uint64_t size() const;
};

// One dense layer of the whole swarm: W [S, in, out] (y = x·W + b), b [S, out].
struct LayerParams {
  Array W, b;
};

struct RunMeta {
  std::string version;       // turbanet version that wrote the file
  std::string name;          // config name
  std::string device;        // "cpu" (later "cuda:0", ...)
  std::string kernel;        // how the backend ran the swarm (e.g. "cpu-blocked, 8 members/block")
  int threads = 1;
  int swarm_size = 0;        // S
  int first_member = 0;      // members are [first_member, first_member + S)
  int epochs = 0;
  std::int64_t steps = 0;    // optimizer steps per member
  double wall_seconds = 0;   // whole command
  double train_seconds = 0;  // training loop only
  std::string created;       // ISO-8601 UTC time
};

struct Predictions {
  std::string split;    // "test", "val" or "train"
  Array members;        // [S, N, outputs]: probabilities (classification) or values
  Array ensemble_mean;  // [N, outputs]
  Array ensemble_std;   // [N, outputs]
  Array targets;        // [N] class labels (classification) or [N, outputs] values
};

struct Normalization {
  Array mean, std;  // [features]; empty when normalize: none
};

struct RunFile {
  std::string config_yaml;  // the resolved configuration
  RunMeta meta;
  std::vector<LayerParams> params;       // /params/layer_<i>/{W,b}
  std::vector<LayerParams> init_params;  // /init_params/layer_<i>/{W,b}
  Array train_loss;                      // /history/train_loss [S, epochs]
  Array val_loss;                        // /history/val_loss [S, epochs], empty if no val split
  Array train_accuracy;                  // /history/train_accuracy [S, epochs], classification
  Array val_accuracy;                    // /history/val_accuracy [S, epochs], classification with val
  std::vector<int> diverged_epoch;       // /members/diverged_epoch [S], -1 = never
  Normalization normalization;           // /data/normalization/{mean,std}
  std::optional<Predictions> predictions;  // /predictions/<split>/...
};

// Writes `run` to `path` atomically: the data goes to a temporary file beside `path`, which
// is flushed and renamed over `path` only when complete, so an existing file is either kept
// intact or replaced whole. Throws RunFileError (the temporary file is removed).
void write_run_file(const std::string& path, const RunFile& run);

// Reads a file written by write_run_file. Throws RunFileError naming what is missing.
RunFile read_run_file(const std::string& path);

}  // namespace tn
