// Series transforms, window scaling, target units and naive forecasts (see sequence_units.h).
#include "data/sequence_units.h"

#include <cmath>
#include <cstdio>
#include <limits>

namespace tn {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

std::string short_number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

// Mean and population std of `n` values at v[0], v[stride], ... (double sums, as fit_scaling).
void window_stats(const float* v, int n, int stride, float& offset, float& scale) {
  double a = 0, b = 0;
  for (int i = 0; i < n; ++i) a += v[static_cast<std::size_t>(i) * stride];
  const double m = a / n;
  for (int i = 0; i < n; ++i) {
    const double d = v[static_cast<std::size_t>(i) * stride] - m;
    b += d * d;
  }
  const double s = std::sqrt(b / n);
  offset = static_cast<float>(m);
  scale = s > 1e-12 ? static_cast<float>(s) : 1.0f;
}

}  // namespace

double series_change(SeriesTransform t, double from, double to) {
  switch (t) {
    case SeriesTransform::None: return to;
    case SeriesTransform::Diff: return to - from;
    case SeriesTransform::LogDiff: return std::log(to / from);
    case SeriesTransform::PctChange: return to / from - 1.0;
  }
  return to;
}

double apply_change(SeriesTransform t, double from, double c) {
  switch (t) {
    case SeriesTransform::None: return c;
    case SeriesTransform::Diff: return from + c;
    case SeriesTransform::LogDiff: return from * std::exp(c);
    case SeriesTransform::PctChange: return from * (1.0 + c);
  }
  return c;
}

float TargetUnits::original(float v, std::size_t i) const {
  const float c = offset.empty() ? v : v * scale[i] + offset[i];
  if (transform == SeriesTransform::None) return c;
  return static_cast<float>(apply_change(transform, level[i], c));
}

float TargetUnits::model_units(float x, std::size_t i) const {
  float c = x;
  if (transform != SeriesTransform::None) {
    const double d = series_change(transform, level[i], x);
    if (!std::isfinite(d)) return kNaN;
    c = static_cast<float>(d);
  }
  return offset.empty() ? c : (c - offset[i]) / scale[i];
}

std::vector<float> TargetUnits::original(const std::vector<float>& v) const {
  const std::size_t n = std::max<std::size_t>(level.size(), offset.size()), O = n ? v.size() / n : 1;
  std::vector<float> r(v.size());
  for (std::size_t j = 0; j < v.size(); ++j) r[j] = original(v[j], j / O);
  return r;
}

std::vector<float> TargetUnits::model_units(const std::vector<float>& x) const {
  const std::size_t n = std::max<std::size_t>(level.size(), offset.size()), O = n ? x.size() / n : 1;
  std::vector<float> r(x.size());
  for (std::size_t j = 0; j < x.size(); ++j) r[j] = model_units(x[j], j / O);
  return r;
}

void TargetUnits::append(const TargetUnits& o) {
  transform = o.transform;
  level.insert(level.end(), o.level.begin(), o.level.end());
  offset.insert(offset.end(), o.offset.begin(), o.offset.end());
  scale.insert(scale.end(), o.scale.begin(), o.scale.end());
}

void NaiveForecasts::append(const NaiveForecasts& o) {
  persistence.insert(persistence.end(), o.persistence.begin(), o.persistence.end());
  seasonal.insert(seasonal.end(), o.seasonal.begin(), o.seasonal.end());
  drift.insert(drift.end(), o.drift.begin(), o.drift.end());
}

const std::vector<float>& NaiveForecasts::of(std::size_t kind) const {
  return kind == 0 ? persistence : kind == 1 ? seasonal : drift;
}

const std::vector<std::string>& naive_forecast_kinds() {
  static const std::vector<std::string> kinds = {"persistence", "seasonal_naive", "drift"};
  return kinds;
}

std::string row_location(const Dataset& d, int row) {
  if (!d.lines.empty()) return d.origin + ":" + std::to_string(d.lines[row]) + ": ";
  return d.origin + ": row " + std::to_string(row) + ": ";
}

SeriesValues series_values(const Dataset& d, const std::vector<int>& rows, const std::vector<int>& cols,
                           const SequenceConfig& q, const std::string& series_name) {
  SeriesValues s;
  s.L = static_cast<int>(rows.size());
  s.K = static_cast<int>(cols.size());
  const int K = s.K, F = K - 1;
  s.raw.resize(static_cast<std::size_t>(s.L) * K);
  for (int i = 0; i < s.L; ++i)
    for (int k = 0; k < K; ++k)
      s.raw[static_cast<std::size_t>(i) * K + k] = d.X[static_cast<std::size_t>(rows[i]) * d.features + cols[k]];
  if (q.transform == SeriesTransform::None) {
    s.value = s.raw;
    return s;
  }
  if (q.transform == SeriesTransform::LogDiff || q.transform == SeriesTransform::PctChange)
    for (int i = 0; i < s.L; ++i)
      for (int k = 0; k < K; ++k)
        if (!(s.at(i, k) > 0))
          throw DataError(row_location(d, rows[i]) + "data.sequence.transform " + to_string(q.transform) + ": " +
                          series_name + " has " + (k < F ? q.features[k] : q.target) + " = " +
                          short_number(s.at(i, k)) + "; " + to_string(q.transform) +
                          " needs positive values (prices, quantities, levels). Use transform: diff, which "
                          "takes any numbers, or leave the series out");
  s.first = 1;
  s.value.assign(s.raw.size(), kNaN);
  for (int i = 0; i < s.L; ++i)
    for (int k = 0; k < K; ++k) {
      const long from = i - (k < F ? 1 : q.horizon);
      if (from >= 0)
        s.value[static_cast<std::size_t>(i) * K + k] =
            static_cast<float>(series_change(q.transform, s.at(from, k), s.at(i, k)));
    }
  return s;
}

float cut_window(const SeriesValues& s, long t, const SequenceConfig& q, const float* column_offset,
                 const float* column_scale, WindowSink out) {
  const int W = q.window, K = s.K, F = K - 1;
  const long last = t + W - 1, target = last + q.horizon;
  const bool window = q.scale == SeriesScale::Window;
  std::vector<float> offset(K, 0.0f), scale(K, 1.0f);
  if (window) {
    for (int k = 0; k < F; ++k) window_stats(&s.value[static_cast<std::size_t>(t) * K + k], W, K, offset[k], scale[k]);
    // The target column's own steps: its change over one step (or its values), as an input's.
    std::vector<float> steps(W);
    for (int i = 0; i < W; ++i)
      steps[i] = q.transform == SeriesTransform::None
                     ? s.at(t + i, F)
                     : static_cast<float>(series_change(q.transform, s.at(t + i - 1, F), s.at(t + i, F)));
    window_stats(steps.data(), W, 1, offset[F], scale[F]);
  } else if (column_offset) {
    offset.assign(column_offset, column_offset + K);
    scale.assign(column_scale, column_scale + K);
  }
  const bool scaled = window || column_offset;
  for (long i = t; i <= last; ++i)
    for (int k = 0; k < F; ++k) {
      const float v = s.changed(i, k);
      out.X.push_back(scaled ? (v - offset[k]) / scale[k] : v);
    }
  out.units.transform = q.transform;
  out.units.level.push_back(s.at(last, F));
  if (scaled) {
    out.units.offset.push_back(offset[F]);
    out.units.scale.push_back(scale[F]);
  }
  const double level = s.at(last, F);
  out.naive.persistence.push_back(s.at(last, F));
  float seasonal = kNaN;
  if (q.season > 0) {
    const long back = q.season * ((q.horizon + q.season - 1) / q.season);  // whole seasons covering h
    if (target - back >= 0) seasonal = s.at(target - back, F);
  }
  out.naive.seasonal.push_back(seasonal);
  out.naive.drift.push_back(last > 0 ? static_cast<float>(level + q.horizon * (level - s.at(0, F)) / last) : kNaN);
  if (target >= s.L) return kNaN;
  const float y = s.changed(target, F);
  return scaled ? (y - offset[F]) / scale[F] : y;
}

void fit_scaling(const std::vector<float>& v, Normalize method, float& offset, float& scale) {
  double a = 0, b = 0, lo = INFINITY, hi = -INFINITY;
  for (float x : v) {
    a += x;
    lo = std::min(lo, static_cast<double>(x));
    hi = std::max(hi, static_cast<double>(x));
  }
  const double n = static_cast<double>(v.size()), m = a / n;
  for (float x : v) b += (x - m) * (x - m);
  const bool standard = method == Normalize::Standard;
  const double o = standard ? m : lo, s = standard ? std::sqrt(b / n) : hi - lo;
  offset = static_cast<float>(o);
  scale = s > 1e-12 ? static_cast<float>(s) : 1.0f;
}

}  // namespace tn
