// The measurement behind `turbanet sweep`: training time against swarm size, for the swarm
// trained at once and the same members trained one after another with the same code, with
// achieved GFLOP/s against the backend's measured peak. Times are the training loop only
// (TrainOutput::train_seconds). Under mpirun (run/world/world.h) the job measures together:
// rank r trains its block of each point's members, as `train` shards them (run/shard.h), a
// repeat's time is the slowest rank's, and the peak is every rank's sgemm rate summed.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "backend/peak.h"
#include "model/flops.h"
#include "run/command_files.h"

namespace tn {

struct SweepRequest {
  std::string config_path;
  std::vector<int> sizes;          // swarm sizes, in order
  std::vector<std::string> modes;  // "swarm" and/or "sequential", per size in this order
  int repeats = 3;                 // timed runs per point, after one warm-up
  std::optional<int> epochs;       // train.epochs override
  std::vector<std::string> set;    // "key.path=value" overrides
  int threads = 0;
  int peak_n = 2048;               // size of the peak-rate sgemm
};

struct SweepPoint {
  std::string mode;
  int S = 0;
  std::vector<double> seconds;  // per repeat
  double median = 0, min = 0, max = 0;
  TrainingWork work;
  double peak_rss_mb = -1;  // -1: not measurable here
  std::string kernel;
};

// One measured point, per size and mode, as the output columns hold it.
struct SweepRow {
  std::string config;  // the config's name
  std::string mode;    // "swarm" or "sequential"
  int swarm = 0, epochs = 0, repeats = 0;
  double seconds_median = 0, seconds_min = 0, seconds_max = 0, seconds_per_member = 0;
  double member_samples_per_s = 0;
  double gflop = 0, gflops = 0;  // work of one training run, and its rate at the median time
  double peak_fraction = 0;      // gflops / peak_gflops; NaN without a measured peak
  double peak_gflops = 0;
  double peak_rss_mb = -1;  // -1: not measurable here
  std::string device;       // the backend's name
  int threads = 0;
  std::string kernel;  // the step kernel that ran the point
  int processes = 1;   // mpirun ranks that trained it
};

// One output column: its name (CSV header, /sweep/<name> dataset) and a row's value, either
// text or a number (written to CSV as {:.6g}).
struct SweepColumn {
  const char* name;
  std::string (*text)(const SweepRow&) = nullptr;  // a text column
  double (*number)(const SweepRow&) = nullptr;     // a number column
  std::string cell(const SweepRow& r) const;       // the value as CSV text
};

// The output columns, in order: the one place that names them and says how each is written.
const std::vector<SweepColumn>& sweep_columns();

struct SweepResult {
  PeakRate peak;
  std::string device;
  std::vector<SweepRow> rows;  // per size and mode
};

// The files the sweep reads: the config file and its data files (run/command_files.h).
// Throws ConfigError.
std::vector<NamedFile> sweep_inputs(const SweepRequest& req);

// Loads the config once per size (validating overrides), trains every point `repeats` times
// after a warm-up and measures. Throws ConfigError, DataError, BackendError.
SweepResult run_sweep_measurements(const SweepRequest& req);

}  // namespace tn
