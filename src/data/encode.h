// Feature encoding of CSV columns: categories (one-hot or ordinal) and missing-value fills,
// fitted on the training split and applied the same way to every split and to new data.
#pragma once
#include <string>
#include <vector>

#include "config/config.h"
#include "data/dataset.h"

namespace tn {

// One source column. Categories are sorted (byte order), as scikit-learn's encoders sort them.
struct ColumnEncoding {
  std::string column;
  Encoding kind = Encoding::Numeric;    // numeric, onehot or ordinal (never auto)
  std::vector<std::string> categories;  // onehot, ordinal: the training split's categories
  // The value a missing cell takes (data.missing mean or median): the training mean or median
  // (numeric), else the index of the most frequent training category (ties: the first). NaN
  // when missing values are not filled.
  float fill = 0.0f;
  int width() const { return kind == Encoding::OneHot ? static_cast<int>(categories.size()) : 1; }
};

// How the raw CSV columns become the model's inputs. Empty when every column is a number used
// as it is (the inputs are then the raw columns; nothing is stored in the run file).
struct FeatureEncoding {
  Missing missing = Missing::Error;
  std::vector<ColumnEncoding> columns;  // the source columns, in input order
  bool empty() const { return columns.empty(); }
  int width() const;                          // model inputs
  std::vector<std::string> input_names() const;  // "color_red" for one-hot inputs, else the column
  std::vector<std::string> column_names() const;
};

// Fits the encoding of `raw` (a CSV dataset with raw columns, see Dataset::levels) on the rows
// `train` of it. Empty when no column is categorical and missing values are not filled.
// Logs each categorical column once (info) with its count of categories.
// Throws DataError when a filled column has no value in the training split, and when a one-hot
// column has more than 20 categories and more than half as many as training rows ("looks like an
// identifier": mostly categories seen once), with the estimate of its inputs' memory and the
// options that give it fewer inputs (data.drop, or ordinal).
FeatureEncoding fit_encoding(const Dataset& raw, const std::vector<std::uint32_t>& train, Missing missing);

// Replaces raw's columns by the encoded inputs (X, features, feature_names): one-hot columns
// become one 0/1 input per category, ordinal ones the category's index, missing values the fill.
// A category not among the encoding's (a value first seen outside the training split, or in new
// data) becomes all zeros (one-hot) or -1 (ordinal), with one warning per column naming the
// first few such values, how many there are and in how many rows. An empty encoding leaves numbers as they are and refuses a categorical column.
// Before it allocates, refuses (DataError) encoded data larger than the memory available
// (util/host_memory.h), with the estimate, the widest one-hot column and the same options.
void apply_encoding(const FeatureEncoding& e, Dataset& raw);

// How to read a CSV so that `e` applies to it: its columns with their kinds (numeric columns
// stay numbers, so text there is an error) and missing values read as NaN when `e` fills them
// (drop_rows is not applied to new data: every row gets a prediction). An empty `e` reads
// `numeric_columns` as numbers.
CsvColumns csv_columns(const FeatureEncoding& e, const std::vector<std::string>& numeric_columns);

}  // namespace tn
