// From a loaded dataset to what training needs: train/val/test splits (contiguous copies,
// shared by all members) and normalization fitted on the training split only.
#pragma once
#include <string>
#include <vector>

#include "data/dataset.h"

namespace tn {

struct SplitData {
  std::string name;        // "train", "val", "test"
  int n = 0;
  std::vector<float> X;    // [n, F]
  std::vector<float> y;    // [n, T]
  std::vector<int> rows;   // index of each sample in the source dataset
};

struct PreparedData {
  int features = 0, targets = 1, num_classes = 0;
  std::vector<std::string> feature_names, class_names;
  std::string origin;
  SplitData train, val, test;
  std::vector<float> mean, std;  // [F] when normalize: standard, else empty
};

// Splits `d` with the split seed (a shared random permutation, then consecutive ranges of
// sizes round(val·n), round(test·n), and the rest for train) and normalizes. Throws DataError
// when the training split would be empty.
PreparedData prepare_data(Dataset d, const DataConfig& cfg);

// Applies stored normalization statistics to X [n, F] in place.
void apply_normalization(std::vector<float>& X, int F, const std::vector<float>& mean,
                         const std::vector<float>& std);

}  // namespace tn
