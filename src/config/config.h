// Typed run configuration: the only description of a run that code below cli/ sees.
// Built and validated from YAML in config/load.cpp; nothing else includes yaml-cpp.
#pragma once
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "backend/device_choice.h"
#include "math/activations.h"
#include "math/losses.h"
#include "math/optimizers.h"
#include "swarm/shape.h"
#include "util/user_error.h"

namespace tn {

// Raised for every user error in a configuration; what() is the full message
// ("file:line:col: key.path: problem; expected ...; allowed: ...; did you mean 'x'?").
struct ConfigError : UserError {
  using UserError::UserError;
};

// A data file (or model.init_from's run file) that is in none of the places looked in; what()
// names them. `key` is the key path ("data.source.path"), `written` the path as written.
struct DataFileNotFound : ConfigError {
  DataFileNotFound(const std::string& what, std::string key_path, std::string path)
      : ConfigError(what), key(std::move(key_path)), written(std::move(path)) {}
  std::string key, written;
};

// GEMM precision on a GPU: fp32 (default, matches the CPU) or tf32 tensor cores (faster,
// 10-bit mantissa products). The CPU always computes in fp32.
enum class DevicePrecision { Fp32, Tf32 };

struct SwarmConfig {
  int size = 1;
  int first_member = 0;  // this run trains members [first_member, first_member + size)
  // Not from YAML: the global index of each member when they are not consecutive (the
  // sub-swarm of one architecture, train/architectures.h), which dropout masks follow;
  // empty: member s is first_member + s.
  std::vector<int> members;
  // group_by on a csv without swarm.size: one member per group, `size` set when the data are
  // read (resolve_group_swarm in data/member_sets.h); a given size must equal the groups.
  bool size_from_groups = false;
};

struct LayerConfig {
  std::string type = "dense";  // dense | lstm | gru (recurrent layers come first)
  int units = 0;
  Activation activation = Activation::Identity;  // dense only
  float leaky_slope = 0.01f;  // only for leaky_relu
  using Init = InitRule;
  Init init = Init::Auto;  // auto: He for relu-like, else Glorot
  double dropout = 0.0;    // dense: inverted dropout rate on the layer's output while training
  bool return_sequences = false;  // lstm, gru: every step's state (for a following recurrent layer)
  double forget_bias = 1.0;       // lstm: initial forget-gate bias
};

// Warm start (`model.init_from: {path: RUN.h5, members: [...] | all}`): members start from the
// trained parameters (/params) of members of another run file of the same model, instead of
// random ones; the optimizer state, schedule and early stopping start fresh. Member k (global
// index) takes the source run's member source_member(k) (its global index there).
struct InitFromConfig {
  std::string path;          // the source run file as found (like data files); "" = off
  bool all = true;           // members: all (member k takes member k)
  std::vector<int> members;  // else one source member per member 0 .. first_member + size - 1
  bool enabled() const { return !path.empty(); }
  int source_member(int k) const { return all ? k : members[static_cast<std::size_t>(k)]; }
};

struct ModelConfig {
  std::vector<LayerConfig> layers;
  double init_scale = 1.0;  // multiplies every initial weight (biases start at 0)
  InitFromConfig init_from;
};

struct OptimizerConfig {
  OptimizerType type = OptimizerType::Adam;
  double lr = 1e-3;
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8;  // adam, adamw; rmsprop uses eps
  double momentum = 0.0;                           // sgd, rmsprop
  bool nesterov = false;                           // sgd
  double alpha = 0.99;                             // rmsprop smoothing constant
  double weight_decay = 0.0;  // L2 added to the gradient (sgd, adam, rmsprop); decoupled (adamw)
  double l1 = 0.0;            // L1: l1·sign(w) added to the gradient (every optimizer, adamw too)
  double grad_clip = 0.0;     // per-member global gradient norm; 0 = off
  bool operator==(const OptimizerConfig&) const = default;
};

enum class ScheduleType { Constant, Step, Cosine, Linear };

struct ScheduleConfig {
  ScheduleType type = ScheduleType::Constant;
  double warmup_epochs = 0.0;  // linear warm-up from 0 to lr, any schedule type
  int step_every = 0;          // step: multiply by gamma every step_every epochs
  double gamma = 0.1;          // step
  double min_lr = 0.0;         // cosine and linear: final learning rate
};

// random_walk: `series` price series of `length` steps (data/sources.h, make_random_walk).
// Each series draws its drift, volatility, seasonal amplitude and phase and its start price
// uniformly from these ranges (start price log-uniformly); all per step of log price.
struct RandomWalkConfig {
  int series = 500;
  int length = 1000;
  double drift_lo = -2e-4, drift_hi = 6e-4;         // mean log return per step
  double volatility_lo = 0.005, volatility_hi = 0.03;  // std of the log return per step
  int season_period = 20;                           // steps per seasonal cycle
  double season_lo = 0.0, season_hi = 0.05;         // amplitude of the seasonal log-price term
  double start_lo = 20.0, start_hi = 200.0;         // price at step 0 (before seasonality)
  bool operator==(const RandomWalkConfig&) const = default;
};

struct SourceConfig {
  // spirals | moons | sine | random_walk (generators) | csv | idx | hdf5 | npy | arrays (memory)
  std::string type = "spirals";
  // generators
  int n = 128;
  double noise = 0.05;
  double rotations = 1.0;  // spirals
  std::uint64_t seed = 0;  // every generator
  RandomWalkConfig walk;   // random_walk
  // csv
  std::string path;                   // also the hdf5 file; resolved: absolute or relative to the working directory
  std::vector<std::string> features;  // empty = every column except the target (and group column)
  // or a range of header columns, inclusive, in header order (`features: {from: a, to: b}`)
  std::string features_from, features_to;
  std::string target;
  // csv dialect: field delimiter ('\0' = detected from the first line: the most frequent of
  // , ; tab | outside quotes, else ','), quote character, comment character ('\0' = none; a
  // line starting with it is skipped) and, for a file without a header row, its column names.
  char delimiter = '\0';
  char quote = '"';
  char comment = '\0';
  std::vector<std::string> columns;  // empty: the first row is the header
  // idx: MNIST-style image and label files (plain or .gz); the test pair is optional and,
  // when given, is the test split
  std::string images, labels, test_images, test_labels;
  // hdf5: dataset names inside `path` (test ones optional, as for idx)
  std::string x_dataset = "X", y_dataset = "y", test_x_dataset, test_y_dataset;
  // npy: one .npy file each (test ones optional, as for idx)
  std::string x_path, y_path, test_x_path, test_y_path;
};

// stratify (classification): every class is split in the proportions of the whole, with the
// per-class counts of scikit-learn's train_test_split(stratify=y) (prepare.h).
struct SplitConfig {
  double train = 1.0, val = 0.0, test = 0.0;
  std::uint64_t seed = 0;
  bool stratify = false;
};

// What each member trains on, drawn from the training split:
//   shared     every sample, the same batches for all members
//   bootstrap  round(fraction·n) draws with replacement, different per member (stratified:
//              round(fraction·n_c) draws from each class c's n_c samples)
//   subsample  round(fraction·n) distinct samples, different per member
//   shards     a partition of the training split into S disjoint parts; member k gets part k
//   group_by   one member per distinct value of a CSV column (groups sorted by value)
enum class PerMember { Shared, Bootstrap, Subsample, Shards, GroupBy };
// Feature scaling (`data.normalize`) takes none, standard and minmax; target scaling
// (`data.normalize_target`) also robust (median and interquartile range) and log1p
// (log(1 + y), then standardized).
enum class Normalize { None, Standard, MinMax, Robust, Log1p };

// How a CSV feature column becomes model inputs (`data.features: {COLUMN: {encoding: E}}`):
//   auto     numbers stay numbers; a column whose first value is text (not starting with a
//            digit, sign or point, e.g. red or true/false) is onehot
//   numeric  every value must be a number
//   onehot   one input per category seen in the training split (sorted), 1 for the row's category
//   ordinal  one input: the index of the row's category among the sorted training categories
enum class Encoding { Auto, Numeric, OneHot, Ordinal };
struct FeatureSetting {
  std::string column;
  Encoding encoding = Encoding::Auto;
  bool operator==(const FeatureSetting&) const = default;
};
// Missing CSV values (an empty cell, NA, N/A, NaN, nan, null, NULL) (`data.missing`): an error
// naming file:line (default), rows with any missing value dropped before the split, or filled
// with the training split's mean or median (categorical columns: the most frequent category).
enum class Missing { Error, DropRows, Mean, Median };

// What a sequence model learns (`data.sequence.transform`, rule 6 of data/sequence.h): the values
// themselves, or their changes: b − a (diff), ln(b/a) (log_diff), b/a − 1 (pct_change); every
// output is turned back into a level from the last observed value.
enum class SeriesTransform { None, Diff, LogDiff, PctChange };
// How sequence values are scaled (`data.sequence.scale`): by data.normalize's statistics of each
// series' training range (series), or each window by its own inputs' mean and std (window, rule 7).
enum class SeriesScale { Series, Window };

// Sequence data (`data.sequence`): sliding windows over each series (the groups of
// data.group_by, else the whole table), split chronologically; see data/sequence.h for the
// exact rules. window == 0: the data are not sequences.
struct SequenceConfig {
  int window = 0;                     // T: time steps per input window
  int horizon = 1;                    // the target is `horizon` steps after the window's last step
  int stride = 1;                     // steps between consecutive window starts
  std::string target;                 // column predicted
  std::vector<std::string> features;  // columns per time step; default [target]
  std::string time;                   // column to sort each series by; "" = file order
  SeriesTransform transform = SeriesTransform::None;
  SeriesScale scale = SeriesScale::Series;
  int season = 0;                     // steps per seasonal cycle for the seasonal naive forecast; 0 = none
  bool enabled() const { return window > 0; }
  bool operator==(const SequenceConfig&) const = default;
};

struct DataConfig {
  SourceConfig source;
  SequenceConfig sequence;
  SplitConfig split;
  PerMember per_member = PerMember::Shared;
  double member_fraction = 1.0;  // bootstrap and subsample
  bool bootstrap_stratify = false;  // bootstrap: round(fraction·n_c) draws within each class c
  std::string group_by;          // group_by: the column
  Normalize normalize = Normalize::None;
  bool normalize_per_member = false;  // group_by only: statistics per group (per series)
  // Regression targets of non-sequence data (`data.normalize_target`): the model learns
  // y' = (f(y) − offset) / scale per target column with the training split's statistics
  // (f = log1p for log1p, else identity); predictions and metrics are turned back into
  // original units. none: the targets as they are. Default: standard for a regression loss
  // on non-sequence data, none otherwise (and none for a run file's /config without the key).
  Normalize normalize_target = Normalize::None;
  std::vector<FeatureSetting> feature_settings;  // csv: per-column encodings, in the order given
  Missing missing = Missing::Error;              // csv
  // csv (`data.drop: [COLUMNS]`): columns left out of the features however those are chosen
  // (every column, a range or a list), e.g. an identifier
  std::vector<std::string> drop;
  Encoding encoding_of(const std::string& column) const {
    for (const FeatureSetting& f : feature_settings)
      if (f.column == column) return f.encoding;
    return Encoding::Auto;
  }
};

// The metrics early stopping and search rank members by, from the epoch histories: val_loss,
// val_accuracy, train_loss, train_accuracy; the accuracies are better when higher.
const std::vector<std::string>& ranking_metrics();
inline bool metric_maximized(const std::string& metric) { return metric == "val_accuracy" || metric == "train_accuracy"; }

// Per-member early stopping (`train.early_stopping`): a member whose `metric` has not improved
// by more than min_delta for `patience` epochs stops training (its parameters stay as they
// are; with restore_best they become those of its best epoch at the end). Off when metric is "".
struct EarlyStoppingConfig {
  std::string metric;  // val_loss | val_accuracy | train_loss | train_accuracy, or "" (off)
  int patience = 10;
  double min_delta = 0.0;
  bool restore_best = true;
  bool enabled() const { return !metric.empty(); }
  bool maximize() const { return metric_maximized(metric); }
};

// Checkpoints (`train.checkpoint`): every `every_epochs` epochs (0 = only when interrupted)
// the whole training state is written to `path` (default: output.path with .ckpt.h5).
struct CheckpointConfig {
  int every_epochs = 0;
  std::string path;
};

// What the TensorBoard logs (train.tensorboard) make a run of: every member, every group of
// members sharing their per-member values, only the swarm's summary curves, or (auto) members
// up to kTensorBoardAutoRuns of them, else groups up to that many, else the swarm.
enum class TensorBoardRuns { Auto, Members, Groups, Swarm };
inline constexpr int kTensorBoardAutoRuns = 100;

struct TrainConfig {
  int epochs = 1;
  int batch_size = 32;  // full batch when >= the training split size
  bool shuffle = true;
  int log_every = 0;    // epochs between progress lines; 0 = about 10 lines per run
  EarlyStoppingConfig early_stopping;
  CheckpointConfig checkpoint;
  // Live TensorBoard logs (run/tensorboard_log.h): their directory, "" for none, and its runs.
  std::string tensorboard;
  TensorBoardRuns tensorboard_runs = TensorBoardRuns::Auto;
};

// Search inside the swarm (`search`): successive halving stops the worse members at each
// rung; population-based training (PBT) lets the worse members take over the state of better
// ones and perturb their hyperparameters. Off when type is None. train/search.h has the rules.
struct SearchConfig {
  enum class Type { None, Halving, Pbt };
  Type type = Type::None;
  std::string metric = "val_loss";  // val_loss | val_accuracy | train_loss | train_accuracy
  // halving: after epoch rungs[i] (increasing, each < train.epochs) the members still
  // training keep the best ceil(keep·n) (at least 1); the others stop.
  std::vector<int> rungs;
  double keep = 1.0 / 3.0;
  // pbt: after every `every_epochs` epochs (not after the last), the bottom `quantile` of the
  // members copies the state of a member drawn from the top `quantile`, then each key of
  // `perturb` is resampled from its per-member values with `resample_probability`, else
  // multiplied by one of its factors drawn at random.
  int every_epochs = 0;
  double quantile = 0.25;
  struct Perturb {
    std::string key;              // an optimizer per-member key (member_value_keys())
    std::vector<double> factors;  // e.g. [0.8, 1.25]
    bool operator==(const Perturb&) const = default;
  };
  std::vector<Perturb> perturb;
  double resample_probability = 0.25;
  bool enabled() const { return type != Type::None; }
  bool maximize() const { return metric_maximized(metric); }
};

// Which members make the ensemble (`ensemble: {select, k, metric}`): chosen on the validation
// split (the training split without one) when training ends (eval/select.h), recorded in the
// run file (/ensemble) and used by eval, predict and export unless they are given --select.
struct EnsembleConfig {
  std::string select = "all";  // all | top | greedy
  int k = 0;                   // top: the members kept; greedy: the rounds (0: 20)
  std::string metric;          // a metric of the run's task; "": the loss's (log_loss, mse or mae)
  bool enabled() const { return select != "all"; }
};

struct OutputConfig {
  std::string path;  // default runs/<name>.h5
  // What /predictions/<split> keeps of the final evaluation: "members" (every member's output,
  // [S, N, O], and the ensemble's), "ensemble" (the ensemble's mean and spread and the targets:
  // an 8,000-member run need not store every member's), or "none".
  std::string predictions = "members";
};

// A hyperparameter that differs between members: a sweep inside one swarm, e.g.
//   optimizer: {lr: {logspace: [1.0e-4, 1.0e-1]}}        (num defaults to swarm.size)
//   optimizer: {lr: {logspace: {base: 10, exponents: [-4, -1]}}}   (NumPy's np.logspace, the same)
//   optimizer: {weight_decay: {values: [0, 1.0e-4, 1.0e-3]}}
// Member k (its global index) takes value((k / stride) % count()); stride > 1 only for keys
// of a `grid:` (cartesian product, the first grid key varying slowest). A linspace or
// logspace is kept as its ends and count, and each value computed when asked for, so a
// large num costs nothing until members use it.
struct MemberValues {
  enum class Form { Values, Linspace, Logspace };
  std::string key;  // "optimizer.lr", ... (member_value_keys())
  Form form = Form::Values;
  double lo = 0, hi = 0;  // linspace, logspace: the ends (inclusive)
  int num = 0;            // linspace, logspace: how many values
  std::vector<double> values;  // values: every value as given (empty for linspace, logspace)
  long long stride = 1;
  // Text-valued keys (model.hidden, model.layers.<i>.activation and .type): `values` are the
  // indices 0, 1, ... into `labels`, the values as written ("relu", "[64, 64]").
  std::vector<std::string> labels;
  long long count() const { return form == Form::Values ? static_cast<long long>(values.size()) : num; }
  // Value i (0 <= i < count()). Linspace and logspace ends are exact; the values in between are
  // rounded to 6 significant digits, as printed, so the run file's config reproduces them.
  double value(long long i) const;
  double at(long long member) const { return value((member / stride) % count()); }
  // Member's value as text: its label, or the number as printed (%.6g).
  std::string text(long long member) const;
};

// Keys that may be given per member: optimizer.lr, optimizer.weight_decay, optimizer.l1, optimizer.momentum,
// optimizer.beta1, optimizer.beta2, optimizer.eps, optimizer.alpha, model.init_scale.
const std::vector<std::string>& member_value_keys();

struct Config {
  std::string name = "run";
  std::uint64_t seed = 0;
  DeviceKind device = DeviceKind::Auto;
  DevicePrecision device_precision = DevicePrecision::Fp32;
  int device_index = -1;  // GPU ordinal named by device: cuda:N; -1: none (GPU 0, or an MPI rank's by local rank)
  SwarmConfig swarm;
  ModelConfig model;
  LossConfig loss;
  OptimizerConfig optimizer;
  ScheduleConfig schedule;
  DataConfig data;
  TrainConfig train;
  OutputConfig output;
  SearchConfig search;
  EnsembleConfig ensemble;
  std::vector<MemberValues> member_values;  // per-member hyperparameters, in key order
  std::vector<std::string> grid;            // keys combined as a cartesian product

  std::string source_file;  // the YAML file this was read from ("" when built in code)
};

// Per-member architectures: keys model.hidden and model.layers.<i>.units|activation|type.
bool is_architecture_key(const std::string& key);
// Whether members differ in architecture (any architecture key has per-member values).
bool per_member_architecture(const Config& c);
// Index of the first dense layer (after the recurrent ones); the dense layers before the last
// are the hidden ones that model.hidden replaces.
int hidden_dense_begin(const ModelConfig& m);
// model.hidden's text for a list of units: "[64, 64]", "[]"; and back (std::invalid_argument).
std::string hidden_label(const std::vector<int>& units);
std::vector<int> hidden_units(const std::string& label);
// Member k's model: model.layers with the member's architecture values applied, every per-
// member architecture key resolved (k is the global member index).
ModelConfig member_model(const Config& c, long long member);
// A model's architecture in one line, e.g. "dense 64 relu, dense 64 relu, dense 3": the
// name members are grouped by in reports.
std::string architecture_text(const ModelConfig& m);

// Member k's optimizer settings and initial-weight scale: the configured values with the
// member's per-member values applied (k is the global member index).
OptimizerConfig member_optimizer(const Config& c, long long member);
double member_init_scale(const Config& c, long long member);
// The field of `o` that per-member key `key` sets ("optimizer.lr" -> &o.lr), or nullptr for a
// key that is not an optimizer setting (model.init_scale).
double* optimizer_field(OptimizerConfig& o, const std::string& key);
// The per-member values of `key`, or nullptr when every member has the configured value.
const MemberValues* find_member_values(const Config& c, const std::string& key);

// Some of the members of `cfg` (indices 0 .. swarm.size - 1 of cfg, increasing) as a swarm of
// their own, in one of two forms:
//  - sub_swarm(cfg, m0, m1): the consecutive block [m0, m1). The members keep their global
//    index (first_member moves by m0; swarm.members, when set, is sliced), so per-member
//    values, seeds, draws and dropout masks follow them unchanged (chunks of one training
//    pass, shards of a job).
//  - sub_swarm(cfg, members): any members, numbered 0 .. n-1 in the sub-swarm: first_member
//    0, the per-member values gathered, the grid cleared (the gathered values are no longer
//    its product), swarm.members their global indices, which dropout masks follow (the group
//    of one architecture, halving's survivors).
Config sub_swarm(const Config& cfg, int m0, int m1);
Config sub_swarm(const Config& cfg, const std::vector<int>& members);

// One `--set key.path=value` override, applied to the YAML tree before validation.
struct Override {
  std::string key;    // e.g. "optimizer.lr" or "model.layers.0.units"
  std::string value;  // parsed as YAML, so "1e-3", "[a, b]" and "{type: sgd}" all work
};

// Reads, overrides and validates a configuration file. Throws ConfigError. Relative data
// file paths are looked up in the working directory, then in the file's directory.
Config load_config(const std::string& path, const std::vector<Override>& overrides = {});
// Same, from YAML text; `origin` names it in messages (used by tests and by run files).
// Relative data file paths are looked up in `data_dirs` in order ("" is the working
// directory); by default the working directory, then the directory of `origin`.
Config parse_config(const std::string& yaml_text, const std::string& origin,
                    const std::vector<Override>& overrides = {},
                    const std::optional<std::vector<std::string>>& data_dirs = std::nullopt);
// A run file's /config (or a checkpoint's): parse_config, except that a key whose default has
// changed since and that the text does not name reads with its old default, so a run from an
// older binary is rebuilt as it trained (data.normalize_target: none).
Config parse_stored_config(const std::string& yaml_text, const std::string& origin,
                           const std::vector<Override>& overrides = {},
                           const std::optional<std::vector<std::string>>& data_dirs = std::nullopt);
// A run file's name without its .h5: runs/x.h5 -> runs/x (any other name as it is).
std::string run_file_stem(const std::string& path);
// train.checkpoint.path's default: runs/x.h5 -> runs/x.ckpt.h5 (any other name: NAME.ckpt.h5);
// a name that would be longer than 255 bytes is cut (io::with_suffix).
std::string default_checkpoint_path(const std::string& output);
// Parses "key.path=value" as given to --set. Throws ConfigError on a malformed string.
Override parse_override(const std::string& arg);
// The resolved configuration as YAML (every key, defaults filled in); parse_config of
// this text gives back an equal Config.
std::string to_yaml(const Config& c);
// Key paths ("train.batch_size", "model.layers.0.units") whose resolved values differ
// between `a` and `b`, in document order (compared through to_yaml).
std::vector<std::string> config_differences(const Config& a, const Config& b);
// The same for two resolved configurations as stored (to_yaml's text, e.g. run files' /config),
// without reading their data. Throws ConfigError when either is not YAML.
std::vector<std::string> config_text_differences(const std::string& a, const std::string& b);

// Names used in YAML, messages and run files.
const char* to_string(DevicePrecision p);
const char* to_string(ScheduleType s);
const char* to_string(PerMember p);
const char* to_string(Normalize n);
const char* to_string(Encoding e);
const char* to_string(Missing m);
const char* to_string(SeriesTransform t);
const char* to_string(SeriesScale s);
const char* to_string(SearchConfig::Type t);
const char* to_string(TensorBoardRuns r);

}  // namespace tn
