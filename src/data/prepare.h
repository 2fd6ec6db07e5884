// From a loaded dataset to what training needs: train/val/test splits (contiguous copies,
// shared by all members) and normalization fitted on the training split only.
#pragma once
#include <string>
#include <vector>

#include "data/dataset.h"
#include "data/encode.h"
#include "data/sequence_units.h"

namespace tn {

struct SplitData {
  std::string name;        // "train", "val", "test"
  int n = 0;
  std::vector<float> X;    // [n, F]
  std::vector<float> y;    // [n, T]
  std::vector<int> rows;   // index of each sample in the source dataset (sequence data: the
                           // table row of the sample's target value)
  std::vector<int> group;  // group_by: the group of each sample, else empty (sequence data: the
                           // series of each sample, 0 when the table is one series)
  std::vector<std::string> time;  // sequence data with data.sequence.time: the time of each
                                  // sample's target value, else empty
  // Sequence data: how each sample's model output becomes the target in original units, and its
  // naive forecasts (data/sequence.h rules 6 to 8); empty otherwise.
  TargetUnits units;
  NaiveForecasts naive;
};

struct PreparedData {
  int features = 0, targets = 1, num_classes = 0;
  std::vector<std::string> feature_names, class_names, group_names;
  std::string origin;
  // csv: how the raw columns became the inputs (categories, missing-value fills), fitted on
  // the training split; empty when every column is a number used as it is.
  FeatureEncoding encoding;
  SplitData train, val, test;
  // Normalization x' = (x − mean) / std, fitted on the training split: [F], or [G, F] per
  // group with normalize_per_member. For minmax, mean holds the minimum and std the range
  // (max − min). Empty with normalize: none.
  std::vector<float> mean, std;
  // Sequence data (data/sequence.h): each X row is a window [seq_len, step_features], time step
  // major; mean/std above are then per step feature, [step_features] or [G, step_features].
  int seq_len = 0;        // sequence data: window length T (0 = not sequence data)
  int step_features = 0;  // sequence data: features per time step; features == seq_len * step_features
  std::vector<float> target_mean, target_std;  // [G] per-series target normalization (empty when none); y' = (y - mean)/std
  // Non-sequence data with data.normalize_target, target_mean/target_std are [1] (minmax: the
  // minimum and the range) and every split's y is scaled; the model learns in these units.
};

// Splits `d` and normalizes. The split uses the split seed: a shared random permutation,
// then consecutive ranges of sizes round(val·n), round(test·n), and the rest for train; a
// source with its own test set (d.predefined_test) keeps it as the test split and carves
// val from the rest. With split.stratify the same split sizes are cut from each class in
// proportion, the per-class counts of scikit-learn's train_test_split(stratify=y) (test split
// off first, then val from the rest; ties between classes go to the lower class index), each
// split in file order. Throws DataError when the training split would be empty.
// CSV columns are encoded (data/encode.h) with categories and fills fitted on the training split.
// With cfg.normalize_target the (one) target column is scaled by the training split's statistics
// (DataError with more target columns).
// With cfg.sequence, `d` is a long-format table and the windows are cut by prepare_sequences.
PreparedData prepare_data(Dataset d, const DataConfig& cfg);

// Values in the model's units back in the target's original units, y = v·target_std + target_mean
// (float arithmetic), for non-sequence data with data.normalize_target ([1] statistics);
// unchanged otherwise. Sequence data convert per sample with TargetUnits.
void targets_to_original(std::vector<float>& v, const std::vector<float>& target_mean,
                         const std::vector<float>& target_std);
// Every split's y of non-sequence data back in original units (after training: for metrics
// and the run file); unchanged without data.normalize_target.
void targets_to_original(PreparedData& p);

// Applies normalization statistics to X [n, F] in place: per feature with mean/std [F], or
// per sample's group (group[i]) with [G, F] statistics.
void apply_normalization(std::vector<float>& X, int F, const std::vector<float>& mean,
                         const std::vector<float>& std, const std::vector<int>& group = {});

}  // namespace tn
