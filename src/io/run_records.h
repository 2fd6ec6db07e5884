// The run file's in-memory form, one struct per part of its layout (docs/run-file.md):
// io/run_file.h writes and reads it whole, io/run_file_eval.h its evaluations and selections.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace tn {

// A dense float32 array in row-major order.
struct Array {
  std::vector<std::uint64_t> shape;
  std::vector<float> data;
  std::uint64_t size() const;
};

// One layer of the whole swarm: its tensors in parameter order, member axis first. Dense:
// W [S, in, out] (y = x·W + b), b [S, out]; lstm: Wx [S, in, 4H], Wh [S, H, 4H], b [S, 4H];
// gru: Wx [S, in, 3H], Wh [S, H, 3H], bx [S, 3H], bh [S, 3H] (model/shape.h, math/recurrent_cells.h).
struct LayerParams {
  std::vector<std::pair<std::string, Array>> tensors;
  // The tensor called `name`; throws RunFileError when the layer has none.
  Array& operator[](const std::string& name);
  const Array& operator[](const std::string& name) const;
};
// Order of a layer's tensors when read back (every layer kind's order is a subsequence).
const std::vector<std::string>& layer_tensor_order();

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
  bool interrupted = false;  // @interrupted: training was stopped by a signal before train.epochs
  // A shard (`train --shard k/K`, run/shard.h): @shard_index k and @shard_count K, and the whole
  // swarm's members [@shard_swarm_first, + @shard_swarm_size) that the K shards train together.
  // Absent (shard_count 0) in a file that holds a whole swarm.
  int shard_index = 0, shard_count = 0;
  int shard_swarm_first = 0, shard_swarm_size = 0;
  // @command: the command line that made the run (util/command_line.h); "" when not recorded
  // (files from before it, and runs trained by a program calling the service directly).
  std::string command;
};

// Predictions of every member on one set of samples: /predictions/<split>/.
struct Predictions {
  std::string split;    // "test", "val", "train", "all" (every sample) or "data" (eval --data)
  Array members;        // [S, N, outputs]: probabilities (classification) or values
  Array ensemble_mean;  // [N, outputs]
  Array ensemble_std;   // [N, outputs]
  Array targets;        // [N] class labels (classification) or [N, outputs] values
  // group_by runs: each sample is predicted by its own group's member only, so `members`,
  // `ensemble_mean` and `ensemble_std` are empty and these hold the predictions.
  std::vector<int> member;     // [N] global index of the member that predicted each sample
  // A group_by shard's file (train --shard): it predicts its own members' samples only, and
  // sample [N] holds each one's position in the split; empty otherwise.
  std::vector<int> sample;
  Array per_group;             // [N, outputs] that member's prediction (dataset "own")
  // Sequence data with a normalized or transformed target: the same in the target's original units.
  Array per_group_original, targets_original;  // datasets "own_original", "targets_original"
  // Sequence data: the naive forecasts (kind persistence, seasonal_naive, drift), /<kind> in the
  // model's units and /<kind>_original in original units, [N, outputs] each.
  struct Naive {
    std::string kind;
    Array values, original;
  };
  std::vector<Naive> naive;
};

// x' = (x − mean) / std per feature ([F]), or per member group ([G, F], group_by with
// normalize_per_member). For method "minmax", mean holds the minimum and std the range.
// Sequence data: F is the number of step features, and the target is normalized too,
// y' = (y − target_mean[g]) / target_std[g] per series g.
// /data/encoding: how CSV columns became the model's inputs (data/encode.h's FeatureEncoding
// as stored; run/swarm_file.h converts). Empty when the file has none.
struct EncodingRecord {
  std::string missing;  // @missing: error | drop_rows | mean | median
  std::vector<std::string> columns, kinds;  // [C]; kinds: numeric | onehot | ordinal
  std::vector<std::string> categories;      // every column's categories, concatenated
  std::vector<int> category_counts;         // [C]
  std::vector<float> fill;                  // [C]
  bool empty() const { return columns.empty(); }
};

struct Normalization {
  std::string method;  // "standard" or "minmax"; empty when normalize: none
  Array mean, std;
  Array target_mean, target_std;  // sequence data: [G]; data.normalize_target: [T], or [G, T] per member group; else empty
  // data.normalize_target with per_member bootstrap, subsample or shards: [S, T], row s member
  // first_member + s's statistics from its own training rows (target_mean/std then empty); else empty
  Array member_target_mean, member_target_std;
};

// One split of the prepared data (/data/splits/<name>): which source rows it holds and,
// when small (at most 2^20 input values), the inputs after normalization and the targets,
// so the run can be checked or re-plotted without the original data.
struct DataSplit {
  std::string name;       // "train", "val", "test"
  std::vector<int> rows;  // [n] row of each sample in the source data (after the split permutation)
  Array X;                // [n, F] as the model saw it (normalized), or empty
  Array y;                // [n] class labels or [n, T] values, or empty
  // Sequence data: X is [n, seq_len, step_features]; time holds the time label of each
  // sample's target (with data.sequence.time), written with X.
  std::vector<std::string> time;
};

// What each member trained on (/members): enough to recompute every member's samples.
// bootstrap and subsample sets follow from (seed in /config, member, sample_count) through
// the documented counter-based functions; shards and group_by store their rows.
struct MemberData {
  std::string per_member;                // shared | bootstrap | subsample | shards | group_by
  double fraction = 1.0;                 // bootstrap and subsample
  std::vector<int> sample_count;         // [S] samples per member per epoch
  std::vector<int> set_offset;           // shards, group_by: [S + 1] start of member s in set_rows
  std::vector<int> set_rows;             // shards, group_by: training-split indices of each member's samples
  std::vector<std::string> group_names;  // group_by: [S] the group of each member
  std::string group_by;                  // group_by: the column
  // Per-member hyperparameters (/members/hparams/<key>, [S] float64 each), e.g. "optimizer.lr".
  std::vector<std::pair<std::string, std::vector<double>>> hparams;
  // Text-valued ones (/members/hparams/<key>, [S] strings), e.g. "model.hidden": "[64, 64]",
  // "model.layers.0.activation": "relu".
  std::vector<std::pair<std::string, std::vector<std::string>>> hparam_text;
  // Per-member architectures: /members/architecture [S], each member's a in /architectures/arch_<a>.
  std::vector<int> architecture;
  // Warm starts (model.init_from): /members@init_from, the source run file's absolute path, and
  // /members/init_from [S], the source member (its global index there) each member started from.
  std::string init_from_path;
  std::vector<int> init_from;
};

// What the inputs and outputs mean: /data/feature_names, /data/class_names, /data@target.
// Empty in files written before turbanet 0.1.0 had eval/predict.
struct DataInfo {
  std::vector<std::string> feature_names;  // [F], the model's inputs in order
  std::vector<std::string> class_names;    // [K], classification: label k means class_names[k]
  std::string target;                      // target column of a CSV source, else ""
  // Sequence data (/data@seq_len, /data@step_features): the window length and the inputs per
  // time step (feature_names are then the step features); 0 otherwise.
  int seq_len = 0, step_features = 0;
  // /data@base_dir: the absolute directory that relative data file paths in /config are
  // relative to (train's working directory; paths are stored as resolved there). "" in files
  // written before it was recorded.
  std::string base_dir;
  // Sequence data (/data@transform, /data@scale): data.sequence.transform and scale, which say
  // what the model's inputs and outputs are ("none" and "series" in files without them).
  std::string transform = "none", scale = "series";
};

// Scores of every member on its own samples, pooled, and their distribution across members
// (group_by evaluations: the persistence baseline and the original units).
struct ScoreRecord {
  std::vector<double> members;    // [S, metrics]
  std::vector<double> pooled;     // [metrics]
  std::vector<double> quantiles;  // [metrics, 7] at levels 0, 5, 25, 50, 75, 95, 100 %
  bool empty() const { return members.empty(); }
};

// How the ensemble was chosen among the members (eval/select.h): /ensemble holds the run's
// own (config `ensemble`, chosen when it trained), /eval/<split>/selection an evaluation's,
// /selection a prediction file's. Absent (method "") when the ensemble is every member alike.
struct SelectionRecord {
  std::string method;          // @select: "top", "greedy" (or "all" when asked for)
  int k = 0;                   // @k: top's members, greedy's rounds
  std::string metric;          // @metric: what the members were chosen by
  std::string split;           // @split: the split they were chosen on ("val"; "train" without one)
  double value = 0;            // @value: the chosen ensemble's metric on that split
  std::vector<int> member;     // member [n]: global indices, distinct
  std::vector<double> weight;  // weight [n] float64: each member's share of the ensemble, summing to 1
  bool present() const { return !method.empty(); }
};

// One evaluation: /eval/<split>/. Metric values are indexed like `metrics`; a member left
// out of the ensemble (a non-finite prediction) has NaN values.
struct EvalRecord {
  std::string split;    // as Predictions::split
  std::string source;   // what was evaluated, e.g. "test split of spirals(n=512)" or a path
  std::string task;     // "classification" or "regression"
  std::string combine;  // "mean_prob", "vote" or "mean_logit"; "mean" for regression
  int n_samples = 0;
  std::vector<std::string> metrics;                       // names, in report order
  std::vector<int> member;                                // [S] global member indices
  std::vector<double> members;                            // [S, metrics]
  std::vector<double> member_mean, member_std, ensemble;  // [metrics]
  std::vector<int> excluded;                              // global indices left out
  Array member_confusion;                                 // [S, K, K] (classification)
  Array member_mean_confusion, ensemble_confusion;        // [K, K] (classification)
  Array ensemble_prediction;                              // [N, K] probabilities or [N, O]
  Array entropy, mutual_information, disagreement;        // [N] (classification)
  // group_by runs (combine "own"): `members` are the scores on each member's own samples and
  // member_mean/member_std summarize them; there is no ensemble across groups (`ensemble` and
  // the per-sample arrays are empty). Instead:
  std::vector<int> member_samples;  // [S] own samples of each member
  std::vector<double> pooled;       // [metrics] every sample with its own member's prediction
  std::vector<double> quantiles;    // [metrics, 7] of `members` across members
  ScoreRecord original;             // in the target's original units, or empty
  // Sequence data: the naive forecasts scored the same way (kind persistence, seasonal_naive,
  // drift), in the model's units and in original units (empty when `original` is).
  struct Baseline {
    std::string kind;
    ScoreRecord scores, original;
  };
  std::vector<Baseline> baselines;
  // The ensemble's members when they are a selection (/eval/<split>/selection), else absent.
  SelectionRecord selection;
  // Two-class runs decided by thresholds (eval --threshold): @threshold of the ensemble and
  // member_threshold [S] (class 1 from the threshold on; NaN: the more probable class), and
  // @threshold_from: "fixed" or the split the F1-maximizing ones were chosen on. Else empty.
  std::string threshold_from;
  double threshold = 0;
  std::vector<double> member_threshold;
  bool per_group() const { return combine == "own"; }  // a group_by evaluation (combine "own")
};

// The training state of a checkpoint (/train_state): with /params and the histories, all a
// run needs to continue exactly where it stopped. Absent (opt1 empty) in run files.
struct TrainState {
  int epoch = 0;                         // @epoch: epochs trained
  // /train_state/params/...: the parameters training continues from, when /params hold the
  // best epochs' instead (an interrupted run file with restore_best); else empty: /params.
  std::vector<LayerParams> params;
  std::vector<LayerParams> opt1, opt2;   // /train_state/opt1|opt2/layer_<i>/<tensor>, shaped as /params
  std::vector<LayerParams> best_params;  // /train_state/best_params/...: early stopping with restore_best
  std::vector<double> best_value;        // /train_state/best_value [S]: early stopping, else empty
  std::string data_fingerprint;          // @data_fingerprint: the training data and member sets
  std::string kernel_target;             // @kernel_target: device and SIMD target that trained it
  // /train_state/partial_epoch/...: an epoch interrupted between steps (epoch @epoch, 0-based),
  // else empty: each member's next step, its loss and correct sums so far [S].
  std::vector<int> next_step;
  std::vector<double> partial_loss, partial_correct;
  // Members of several architectures: /train_state/arch_<a>/, one state per architecture of
  // /architectures (its @epoch, params, opt1, opt2, best_params, partial_epoch; members in
  // that architecture's order), and the fields above that hold parameters are empty. Each
  // architecture trains on its own, so their epochs may differ (an interrupted run).
  std::vector<TrainState> architectures;
  bool present() const { return !opt1.empty() || !architectures.empty(); }
};

// /search: what a search inside the swarm (config `search`) did; absent (type "") without one.
struct SearchRecord {
  std::string type, metric;         // /search@type ("halving" or "pbt"), @metric
  std::vector<int> epochs;          // /search/epochs [R]: the epochs after which each rung or round ran
  std::vector<int> rung;            // /search/rung [S] (halving): rung member k stopped at, 0: trained to the end
  std::vector<int> source;          // /search/source [R, S] (pbt): whose state member k took in round r (k: kept)
  std::vector<std::string> keys;    // perturbed keys (pbt), in search.perturb order
  std::vector<std::vector<double>> values;  // /search/values/<key> [R + 1, S]: at the start, after each round
  bool present() const { return !type.empty(); }
};

// Members of several architectures (per-member model.hidden, model.layers.<i>.units, ...):
// /architectures/arch_<a>/, one per architecture, instead of /params and /init_params.
struct ArchitectureParams {
  std::string name;                      // @architecture, e.g. "dense 64 relu, dense 3"
  std::vector<int> members;              // members [S_a]: global indices, increasing
  std::vector<LayerParams> params;       // params/layer_<i>/... [S_a, ...]
  std::vector<LayerParams> init_params;  // init_params/layer_<i>/...
};

struct RunFile {
  std::string config_yaml;  // the resolved configuration
  RunMeta meta;
  std::vector<LayerParams> params;       // /params/layer_<i>/{W,b}; empty with `architectures`
  std::vector<LayerParams> init_params;  // /init_params/layer_<i>/{W,b}
  std::vector<ArchitectureParams> architectures;  // /architectures/arch_<a>/..., or empty
  Array train_loss;                      // /history/train_loss [S, epochs]
  Array val_loss;                        // /history/val_loss [S, epochs], empty if no val split
  Array train_accuracy;                  // /history/train_accuracy [S, epochs], classification
  Array val_accuracy;                    // /history/val_accuracy [S, epochs], classification with val
  std::vector<int> diverged_epoch;       // /members/diverged_epoch [S], -1 = never
  std::vector<int> stopped_epoch;        // /members/stopped_epoch [S], -1 = never (early stopping)
  std::vector<int> best_epoch;           // /members/best_epoch [S], 0 = none (early stopping)
  TrainState state;                      // /train_state (checkpoints)
  SearchRecord search;                   // /search (config `search`)
  MemberData members;                    // /members/...
  std::vector<DataSplit> splits;         // /data/splits/<name>/...
  Normalization normalization;           // /data/normalization/{mean,std,target_mean,target_std}
  DataInfo data;                         // /data/{feature_names,class_names}, /data@target
  EncodingRecord encoding;               // /data/encoding/... (csv categories and fills), may be empty
  std::vector<Predictions> predictions;  // /predictions/<split>/..., one per split
  std::vector<EvalRecord> evals;         // /eval/<split>/..., one per split
  SelectionRecord ensemble;              // /ensemble (config `ensemble`), or absent: every member

  // The entry for `split`, or null.
  const Predictions* find_predictions(const std::string& split) const;
  Predictions* find_predictions(const std::string& split);
  // Adds `p`, replacing an entry of the same split; likewise for evaluations.
  void put(Predictions p);
  void put(EvalRecord e);
};

}  // namespace tn
