// Sequence data: sliding windows over the series of a long-format table (one row per series
// and time point), split chronologically. These rules are fixed; docs/data.md repeats them and
// benchmark scripts outside this program reproduce them exactly:
//
//  1. Series: the groups of data.per_member group_by, numbered in sorted order of their values
//     (as group_by numbers groups); without group_by the whole table is one series (index 0).
//     Within a series the rows are in file order, or sorted by the data.sequence.time column when
//     it is given: numerically when every time value is a number, else as text (ISO dates sort
//     chronologically). Two rows of one series at the same time are an error.
//  2. Split of a series of L time points: n_val = round(split.val·L), n_test = round(split.test·L)
//     (halves round away from zero), n_train = L − n_val − n_test; train is points [0, n_train),
//     val the next n_val points, test the last n_test. Never shuffled (split.seed is not used).
//  3. Windows, with W = window, h = horizon, s = stride: a window starting at point t has the
//     inputs of points t..t+W−1 (the data.sequence.features columns) and its target is the
//     target column at point t+W−1+h. Inputs and target lie inside one range [b, e) of the
//     split: t = b, b+s, b+2s, ... while t+W−1+h < e. Every range whose split fraction is
//     nonzero (train always) must hold at least one window (W + h points); otherwise a
//     DataError names the series and the range.
//  4. Normalization (data.normalize standard | minmax, data.sequence.scale series): statistics of
//     the points of the training range, per input column and for the target column; per series
//     with normalize_per_member, else over the training ranges of all series together. standard:
//     mean and population std; minmax: min and max − min; a constant column gets scale 1. Inputs
//     x' = (x − mean)/std and targets y' = (y − target_mean[g])/target_std[g] (in float32, as
//     apply_normalization). With a transform (rule 6), x and y are the changes, and the statistics
//     are those of the training range's changes (inputs: points 1 .. n_train − 1; target: points
//     h .. n_train − 1).
//  5. Output: samples series by series in series order, and within a series by window start.
//     X row: the window [W, F_step] row-major (time step major, then feature, in
//     data.sequence.features order); y: [1] (regression, num_classes 0); rows: the table row of
//     the target value; group: the series index; time: the time label of the target row (only
//     with data.sequence.time).
//  6. Transform (data.sequence.transform diff | log_diff | pct_change): the change from a to b is
//     b − a, ln(b/a) or b/a − 1 (computed in double, stored as float). An input at point i is its
//     column's change from point i − 1; the target is the change from the window's last step to
//     the target point (over h steps). A series' first point has no change, so windows start at
//     point 1 (the train range then needs W + h + 1 points). log_diff and pct_change need every
//     value of the columns positive (DataError naming file:line, series, column and value). A
//     model output v is a change: the forecast is apply_change(last observed target value, v).
//  7. Window scaling (data.sequence.scale window; data.normalize must be none): each window's
//     inputs are standardized per column by the mean and population std of that column over the
//     window's W steps (std ≤ 1e-12 gives 1), and its target by those of the target column's
//     steps (its values, or its one-step changes with a transform); undone on the output.
//  8. Naive forecasts of each window, in original units, from the target column: persistence,
//     the value at the window's last step T; seasonal naive (data.sequence.season m), the value
//     at T + h − m·⌈h/m⌉ (NaN when that is before the series); drift, y_T + h·(y_T − y_0)/T
//     with y_0 the series' first point (NaN for T = 0). They use the series from its first
//     point, which is the past of every window.
#pragma once
#include <vector>

#include "config/config.h"
#include "data/dataset.h"
#include "data/prepared.h"

namespace tn {

// The windows of `table` (load_dataset with cfg.sequence) by the rules above, with each split's
// target units and naive forecasts. Throws DataError.
PreparedData prepare_sequences(const Dataset& table, const DataConfig& cfg);

// Rule 1: the table rows of each series (its groups, or the whole table as series 0), in time
// order. Throws DataError for two rows of a series at the same time.
std::vector<std::vector<int>> series_rows(const Dataset& table, const SequenceConfig& q);

// Columns of `table` (indices into its X rows) of the data.sequence.features, then of the
// target. Throws DataError naming a column the table does not have.
std::vector<int> sequence_columns(const Dataset& table, const SequenceConfig& q);

}  // namespace tn
