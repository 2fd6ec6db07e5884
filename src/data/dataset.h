// An in-memory dataset: loaded once, shared read-only by every member (members hold
// indices into it, never copies).
#pragma once
#include <stdexcept>
#include <string>
#include <vector>

#include "config/config.h"
#include "util/user_error.h"

namespace tn {

// A problem with input data (missing file, ragged row, non-numeric cell, NaN, wrong labels).
// what() says where (file:line, column name, row) and how to fix it.
struct DataError : UserError {
  using UserError::UserError;
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
  // Sources with their own test set (idx/hdf5/npy test files) append it after the training
  // samples: rows [n - predefined_test, n) are the test split. 0 = none.
  int predefined_test = 0;
  // group_by: group index of every sample (0..groups-1, groups sorted by value) and the names.
  std::vector<int> group;
  std::vector<std::string> group_names;
  // Long-format tables (sequence data): the time label of every row as written (ISO dates for
  // random_walk), empty without a time column; the time and group column names (for writing the
  // table back); csv: the file line of every row, for messages.
  std::vector<std::string> time;
  std::string time_column, group_column;
  std::vector<long> lines;
  // csv read with id columns (predict --id): each named column's text, [columns][n].
  std::vector<std::string> id_columns;
  std::vector<std::vector<std::string>> ids;
  // csv: how each feature column is read (numeric, onehot or ordinal; [F]), and for a
  // categorical column its distinct values in first-seen order, X holding the value's index
  // there (a float); empty for numeric columns. Missing values filled later (data.missing mean
  // or median) are NaN in X. Columns are encoded into model inputs by data/encode.h.
  std::vector<Encoding> encodings;
  std::vector<std::vector<std::string>> levels;
};

// How load_csv reads feature columns: per-column encodings (data.features; auto for columns
// not named) and what a missing value does (data.missing).
struct CsvColumns {
  std::vector<FeatureSetting> settings;
  Missing missing = Missing::Error;
  std::vector<std::string> drop;  // header columns left out of the features (data.drop)
};

// Two interleaved spirals (classes 0 and 1), deterministic in source.seed.
Dataset make_spirals(const SourceConfig& source);

// Reads a CSV file with a header row (or source.columns naming them), in source's dialect:
// delimiter (detected from the first line when '\0', and logged), quote and comment character.
// `classification`: the target column holds class
// labels (integers 0..K-1 are kept as they are; any other values are mapped to indices
// in sorted order and named in class_names); otherwise it holds numbers. With an empty
// source.target and listed source.features it reads only those columns (inputs to
// predict): targets = 0, y empty, and one data row is enough. `source.features_from/to`
// select a range of header columns instead. A non-empty `group_column` (per_member group_by)
// fills group/group_names; it must be neither the target nor a feature.
// `columns` says how feature columns are read (see CsvColumns and Dataset::encodings).
// `id_columns` are kept as text in ids (any columns of the header, used or not). Text (the
// header's names, class labels, categories, groups, times, ids) must be UTF-8: a byte that is
// not is a DataError at file:line:column naming the column.
Dataset load_csv(const SourceConfig& source, bool classification, const std::string& group_column = "",
                 const CsvColumns& columns = {}, const std::vector<std::string>& id_columns = {});

// Reads a long-format table for sequence data from the CSV file source.path (in its dialect): the numeric
// `columns` as X [n, C] (feature_names = columns, targets 0, y empty), `group_column` (if not
// empty) into group/group_names as load_csv does, and `time_column` (if not empty) as text into
// time, with each row's line in lines. keys[i] is the config key naming columns[i] in messages.
Dataset load_csv_table(const SourceConfig& source, const std::vector<std::string>& columns,
                       const std::vector<std::string>& keys, const std::string& group_column,
                       const std::string& time_column, const std::vector<std::string>& id_columns = {});

// Builds the dataset a config asks for. With data.sequence it is the long-format table
// described above (random_walk or csv): the sequence's feature columns, then its target
// column when that is not a feature.
// `id_columns` (csv sources only; DataError otherwise) are kept as text, as load_csv does.
Dataset load_dataset(const DataConfig& data, bool classification, const std::vector<std::string>& id_columns = {});

}  // namespace tn
