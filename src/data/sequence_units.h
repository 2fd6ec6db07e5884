// What a sequence model sees and outputs, and how its outputs become the target in original
// units (rules 6 to 8 of data/sequence.h): series transforms (data.sequence.transform), window
// scaling (data.sequence.scale: window), each sample's target units, and the naive forecasts
// (persistence, seasonal naive, drift) every sequence run is compared with.
#pragma once
#include <string>
#include <vector>

#include "data/dataset.h"

namespace tn {

// The change from `from` to `to` (rule 6): to (none), to − from (diff), ln(to / from) (log_diff),
// to / from − 1 (pct_change).
double series_change(SeriesTransform t, double from, double to);
// Its inverse: the value that change `c` from `from` leads to (none: c).
double apply_change(SeriesTransform t, double from, double c);

// How each sample's model output v becomes the target in original units:
//   y = apply_change(transform, level[i], v·scale[i] + offset[i])
// (offset and scale empty: v itself is the change). identity(): the model's units are the
// target's (no transform, no scaling), so nothing is converted.
struct TargetUnits {
  SeriesTransform transform = SeriesTransform::None;
  std::vector<float> level;          // [n] the target column at the window's last step (original units)
  std::vector<float> offset, scale;  // [n] the target's scaling, or empty
  bool identity() const { return transform == SeriesTransform::None && offset.empty(); }
  // Sample i's model output v in original units, and an original value x in model units (NaN
  // when the change is undefined, e.g. log_diff of a non-positive forecast). float in and out,
  // in float arithmetic for the scaling (as the inputs were scaled).
  float original(float v, std::size_t i) const;
  float model_units(float x, std::size_t i) const;
  // The same for [n] or [n, O] values (O outputs per sample).
  std::vector<float> original(const std::vector<float>& v) const;
  std::vector<float> model_units(const std::vector<float>& x) const;
  void append(const TargetUnits& other);
};

// The naive forecasts of each sample in original units (rule 8): the last value (persistence),
// the value one season before the target (seasonal naive, NaN without data.sequence.season or
// without that much history) and the line from the series' first point through its last
// observed one (drift, NaN for a window starting the series with one point).
struct NaiveForecasts {
  std::vector<float> persistence, seasonal, drift;  // [n]
  void append(const NaiveForecasts& other);
  // By kind, in naive_forecast_kinds() order.
  const std::vector<float>& of(std::size_t kind) const;
};
// "persistence", "seasonal_naive", "drift": the names of the forecasts in reports and run files.
const std::vector<std::string>& naive_forecast_kinds();

// One series of a long-format table as the model sees it before scaling.
struct SeriesValues {
  int L = 0, K = 0;          // points; columns: the data.sequence.features, then the target
  std::vector<float> raw;    // [L, K] as read
  // [L, K] after the transform: an input column's change over one step, the target column's
  // change over the horizon (NaN where the earlier point is before the series). raw for none.
  std::vector<float> value;
  int first = 0;             // the first point whose inputs are defined: 1 with a transform, else 0
  float at(long i, int k) const { return raw[static_cast<std::size_t>(i) * K + k]; }
  float changed(long i, int k) const { return value[static_cast<std::size_t>(i) * K + k]; }
};

// `rows` (one series in time order) of the table columns `cols` (features, then target). With
// log_diff or pct_change every value must be positive: DataError naming the file:line (or row),
// the series (`series_name`), the column and the value, and what to use instead.
SeriesValues series_values(const Dataset& d, const std::vector<int>& rows, const std::vector<int>& cols,
                           const SequenceConfig& q, const std::string& series_name);

// "file:line: " or "origin: row r: " for table row `row`.
std::string row_location(const Dataset& d, int row);

// What cut_window appends to.
struct WindowSink {
  std::vector<float>& X;
  TargetUnits& units;
  NaiveForecasts& naive;
};

// Appends the window of `s` starting at point t (t ≥ s.first, t + W − 1 < L): its inputs [W, F]
// scaled by column_offset/column_scale ([K] each, scale: series; null: unscaled) or by the
// window's own statistics (scale: window, rule 7), its target units and naive forecasts. Returns
// the target in model units, or NaN when the target point t + W − 1 + h is past the series' end
// (a forecast).
float cut_window(const SeriesValues& s, long t, const SequenceConfig& q, const float* column_offset,
                 const float* column_scale, WindowSink out);

// Mean and population std (standard) or minimum and range (minmax) of `v`; a range or std of
// at most 1e-12 gives scale 1.
void fit_scaling(const std::vector<float>& v, Normalize method, float& offset, float& scale);

}  // namespace tn
