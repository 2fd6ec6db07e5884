// The run file: one HDF5 file per training run, readable with h5py. Its in-memory form is
// io/run_records.h; io/run_file.cpp and run_file_read.cpp lay it out in HDF5 (through io/h5.*; only
// src/io/ knows HDF5). The layout is documented in docs/run-file.md; what a trained swarm
// puts here and reads back is run/swarm_file.h.
#pragma once
#include <string>

#include "io/run_file_error.h"
#include "io/run_records.h"

namespace tn {

// Writes `run` to `path` atomically: the data goes to a temporary file beside `path`, which
// is flushed and renamed over `path` only when complete, so an existing file is either kept
// intact or replaced whole. Throws RunFileError (the temporary file is removed).
// With replace false an existing file is never replaced, not even one created while this
// process worked (the result is then kept beside it, see io/atomic_file.h).
void write_run_file(const std::string& path, const RunFile& run, bool replace = true);

// Reads a file written by write_run_file. Throws RunFileError naming what is missing.
RunFile read_run_file(const std::string& path);
// All but the bulk of the file, for readers that draw or summarize it (turbanet report): the
// parameter tensors (/params, /init_params, /architectures/*/params) and the training state's
// tensors (/train_state/opt1, ...) and the members' own predictions (/predictions/*/members) are
// checked for as read_run_file does but left empty; TrainState::data_fingerprint still says
// whether the file holds a training state. Throws as read_run_file.
RunFile read_run_records(const std::string& path);
// Its /meta and /config alone (whether it was interrupted, which shard it holds, what it
// trained), without the arrays.
struct RunHead {
  RunMeta meta;
  std::string config_yaml;
};
RunHead read_run_head(const std::string& path);

}  // namespace tn
