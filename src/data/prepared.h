// What training needs from a dataset: train/val/test splits (contiguous copies, shared by all
// members) and the normalization fitted on the training split. Made by data/prepare.h (and, for
// sequence data, data/sequence.h).
#pragma once
#include <string>
#include <vector>

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
  // Non-sequence data with data.normalize_target (target_scaling), target_mean/target_std are
  // [T], per target column, or [G, T] per group with normalize_per_member (group g's from its
  // own training rows, applied to its rows of every split) (minmax: the minimum and the range; robust: the median and the
  // interquartile range; log1p: mean and std of log1p(y)), and every split's y is scaled,
  // y' = (f(y) − target_mean[t]) / target_std[t] with f = log1p for log1p, else the identity;
  // the model learns in these units.
  Normalize target_scaling = Normalize::None;
};

}  // namespace tn
