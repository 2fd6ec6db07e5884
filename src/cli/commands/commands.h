// Subcommands as ordinary functions taking typed options and returning the exit code, so
// tests call them without a shell. Exit codes: util/exit_codes.h.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "util/log.h"
#include "util/exit_codes.h"

namespace CLI {
class App;
}  // namespace CLI

namespace tn {

struct TrainOptions {
  std::string config_path;
  std::vector<std::string> set;  // "key.path=value" overrides, in order
  std::optional<std::string> out;
  std::optional<int> swarm;
  std::optional<std::uint64_t> seed;
  int threads = 0;  // 0 = all cores
  bool force = false;
  std::string resume;  // checkpoint or interrupted run file to continue from, or ""
  std::optional<std::string> shard;  // "k/K": train shard k of K's members only (run/shard.h)
  std::optional<std::string> trials;      // FILE.csv|json: one member per trial row (config/trials.h)
  std::optional<std::string> trials_out;  // RESULTS.json: each trial's results (run/trial_results.h)
  Verbosity verbosity = Verbosity::Normal;
};

int run_train(const TrainOptions& opt);
// A --seed value: a whole number in [0, 2^64 - 1] written in decimal digits; nullopt for
// anything else (a sign, a fraction, other characters, or a number out of range).
std::optional<std::uint64_t> parse_seed(const std::string& text);

struct EvalOptions {
  std::string run_path;
  std::optional<std::string> split;  // test | val | train | all; default test (train if none)
  std::optional<std::string> data;   // evaluate this config's data or CSV file instead
  std::string combine = "mean_prob";  // mean_prob | vote | mean_logit
  bool json = false;                  // one JSON object on stdout instead of the table
  std::optional<std::string> out;     // FILE.json, or FILE.h5 (a copy of the run with the results)
  // Write the results into the run file as the record /eval/<NAME> and /predictions/<NAME>;
  // without it the run file is only read.
  std::optional<std::string> save;
  bool force = false;                 // replace an existing --out file, or a record --save names
  int threads = 0;
  // The ensemble: all | top:K | greedy[:K] chosen on the validation split by --select-by (a
  // metric; default: the loss's); without --select the run's own (config `ensemble`).
  std::optional<std::string> select, select_by;
  std::optional<std::string> threshold;  // two-class runs: auto (F1-maximizing on val) or a probability
  Verbosity verbosity = Verbosity::Normal;
};

// `turbanet eval`: metrics of every member and of the ensemble, printed; written into the run
// file only with --save, into other files only with --out.
int run_eval(const EvalOptions& opt);

struct PredictOptions {
  std::string run_path;
  std::string input;               // CSV with the feature columns, or a config (its data)
  std::optional<std::string> out;  // FILE.csv or FILE.h5; default: CSV on stdout
  bool force = false;              // replace an existing --out file
  std::string combine = "mean_prob";
  std::vector<std::string> ids;    // --id: input columns carried through to the output
  int threads = 0;
  std::optional<std::string> select, select_by;  // as EvalOptions
  Verbosity verbosity = Verbosity::Normal;
};

// `turbanet predict`: ensemble and member predictions with per-sample uncertainty.
int run_predict(const PredictOptions& opt);

struct MergeOptions {
  std::string out;                 // the run file to write, as one run of the whole swarm would
  std::vector<std::string> parts;  // the K shards' run files (train --shard k/K), in any order
  bool force = false;              // replace an existing OUT
  Verbosity verbosity = Verbosity::Normal;
};

// `turbanet merge`: joins the run files of a sharded swarm into one (run/merge_runs.h).
int run_merge(const MergeOptions& opt);

struct ExportOptions {
  std::string run_path;
  std::optional<std::string> format;  // onnx | npz; default: from the --out extension
  std::string out;                    // FILE.onnx or FILE.npz, written atomically
  std::optional<int> member;          // one member (global index); else the ensemble
  bool ensemble = false;              // every member in one graph (the default)
  bool force = false;                 // replace an existing --out file
  std::optional<std::string> select, select_by;  // as EvalOptions: the members the ensemble holds
  int threads = 0;                               // for choosing them (--select)
  Verbosity verbosity = Verbosity::Normal;
};

// `turbanet export`: a member or the ensemble as ONNX (docs/export.md) or NumPy arrays.
int run_export(const ExportOptions& opt);

struct SweepOptions {
  std::string config_path;
  std::string swarm = "1..128";       // A..B (powers of two), A..B:K (steps of K), or a list 1,3,17
  int repeats = 3;                    // timed runs per point, after one warm-up
  std::optional<int> epochs;          // train.epochs override
  std::vector<std::string> set;       // "key.path=value" overrides
  std::string mode = "swarm";         // swarm | sequential | both
  std::optional<std::string> out;     // FILE.csv or FILE.h5
  bool force = false;                 // replace an existing --out file
  int threads = 0;
  Verbosity verbosity = Verbosity::Normal;
  int peak_n = 2048;                  // size of the peak-rate sgemm (tests use a small one)
};
// `turbanet sweep`: training time against swarm size (swarm at once and/or members one after
// another), achieved GFLOP/s against the measured peak, peak memory; a table and CSV/HDF5.
int run_sweep(const SweepOptions& opt);
// "1..128" → 1,2,4,...,128; "8..128:8" → 8,16,...,128; "1,3,17". The end of a range is always
// included. Throws UsageError.
std::vector<int> parse_swarm_sizes(const std::string& spec);

struct ReportOptions {
  std::string run_path;            // the run file to draw
  std::optional<std::string> out;  // the HTML page; default: RUN.html beside the run file
  bool force = false;              // replace an existing --out file
  Verbosity verbosity = Verbosity::Normal;
};
// `turbanet report`: one self-contained HTML page of the run (run/report_run.h, docs/commands.md, "Reports").
int run_report(const ReportOptions& opt);

struct DataGenerateOptions {
  std::string config_path;
  std::string out;               // FILE.csv, written atomically
  bool force = false;            // replace an existing --out file
  std::vector<std::string> set;  // "key.path=value" overrides
  Verbosity verbosity = Verbosity::Normal;
};
// `turbanet data generate`: the config's built-in generator (random_walk, spirals, moons,
// sine) as CSV; random_walk as the long-format table date,ticker,close. Exit 2 for a config
// whose source is not a generator.
int run_data_generate(const DataGenerateOptions& opt);

struct GpuInfo;
// `turbanet devices`: the GPUs this build can use (name, memory, compute capability), or a
// line saying there are none; exit 0 either way.
int run_devices();
// The listing run_devices prints, for `gpus` (empty: "no CUDA device: <why>").
std::string format_devices(const std::vector<GpuInfo>& gpus, const std::string& why);

// What `turbanet --version` prints: "turbanet X.Y.Z", the git commit built ("unknown" outside a
// git checkout), the CPU targets compiled in and the one this CPU runs, and whether the CUDA
// backend is built, its module found (and where) and a GPU present; lines without a final newline.
std::string version_text();

// `turbanet completion bash|zsh|fish`: the completion script for `shell`, made from `app` (its
// commands, flags and their choices, walked now) and the config key table (config/keys.h).
std::string completion_script(const CLI::App& app, const std::string& shell);

}  // namespace tn
