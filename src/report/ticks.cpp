// Axis arithmetic for the report's charts (report/ticks.h).
#include "report/ticks.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace tn::report {

std::vector<double> nice_ticks(double lo, double hi, int target, bool integer) {
  if (!std::isfinite(lo) || !std::isfinite(hi)) return {0, 1};
  if (hi < lo) std::swap(lo, hi);
  if (hi == lo) {
    const double unit = lo == 0 ? 1 : std::pow(10.0, std::floor(std::log10(std::fabs(lo))));
    lo -= unit;
    hi += unit;
  }
  const double raw = (hi - lo) / std::max(1, target);
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = mag;
  for (const double m : {1.0, 2.0, 5.0, 10.0})
    if (m * mag >= raw) {
      step = m * mag;
      break;
    }
  if (integer) step = std::max(step, 1.0);
  std::vector<double> t;
  const double first = std::floor(lo / step) * step;
  for (double v = first; v < hi + step * 0.5 && t.size() < 64; v += step)
    t.push_back(std::fabs(v) < step * 1e-9 ? 0.0 : v);
  if (t.back() < hi) t.push_back(t.back() + step);
  return t;
}

std::vector<double> log_ticks(double lo, double hi) {
  if (!(lo > 0) || !(hi > 0)) return {1, 10};
  if (hi < lo) std::swap(lo, hi);
  const int a = static_cast<int>(std::floor(std::log10(lo) + 1e-9));
  const int b = std::max(a + 1, static_cast<int>(std::ceil(std::log10(hi) - 1e-9)));
  std::vector<double> t;
  const bool fine = b - a < 3;
  for (int e = a; e <= b; ++e) {
    const double p = std::pow(10.0, e);
    t.push_back(p);
    if (fine && e < b) {
      t.push_back(2 * p);
      t.push_back(5 * p);
    }
  }
  return t;
}

std::string tick_text(double v) {
  if (v == 0) return "0";
  char buf[32];
  const double a = std::fabs(v);
  std::snprintf(buf, sizeof buf, a >= 1e5 || a < 1e-4 ? "%.3g" : "%.4g", v);
  return buf;
}

std::vector<std::size_t> downsample(std::size_t n, std::size_t keep) {
  std::vector<std::size_t> idx;
  keep = std::max<std::size_t>(keep, 2);
  if (n <= keep) {
    for (std::size_t i = 0; i < n; ++i) idx.push_back(i);
    return idx;
  }
  for (std::size_t j = 0; j < keep; ++j) idx.push_back(j * (n - 1) / (keep - 1));
  return idx;
}

bool wants_log_axis(const std::vector<double>& values) {
  double lo = INFINITY, hi = 0;
  for (const double v : values) {
    if (!std::isfinite(v)) continue;
    if (v <= 0) return false;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  return hi > 0 && hi / lo >= 20;
}

}  // namespace tn::report
