// An in-memory dataset: loaded once, shared read-only by every member (members hold
// indices into it, never copies).
#pragma once
#include <stdexcept>
#include <string>
#include <vector>

#include "config/config.h"

namespace tn {

// A problem with input data (missing file, ragged row, non-numeric cell, NaN, wrong labels).
// what() says where (file:line, column name, row) and how to fix it.
struct DataError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Dataset {
  int n = 0;          // samples
  int features = 0;   // F
  int targets = 1;    // values per sample in y: 1 for class labels, else regression outputs
  int num_classes = 0;                 // > 0 for classification (labels are 0..num_classes-1)
  std::vector<float> X;                // [n, F] row-major
  std::vector<float> y;                // [n, targets]; class labels stored as exact floats
  std::vector<std::string> feature_names;
  std::vector<std::string> class_names;  // label i means class_names[i] (classification)
  std::string origin;                    // for messages: "spirals(n=128)" or the file path
};

// Two interleaved spirals (classes 0 and 1), deterministic in source.seed.
Dataset make_spirals(const SourceConfig& source);

// Reads a CSV file with a header row. `classification`: the target column holds class
// labels (integers 0..K-1 are kept as they are; any other values are mapped to indices
// in sorted order and named in class_names); otherwise it holds numbers.
Dataset load_csv(const SourceConfig& source, bool classification);

// Builds the dataset a config asks for.
Dataset load_dataset(const DataConfig& data, bool classification);

}  // namespace tn
