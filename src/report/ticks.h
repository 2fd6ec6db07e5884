// Axis arithmetic for the report's charts: "nice" tick values (1, 2, 5 times a power of ten),
// ticks of logarithmic axes, compact tick labels, and the indices a down-sampled curve keeps.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

namespace tn::report {

// About `target` ticks covering [lo, hi] on a linear axis, each a multiple of 1, 2 or 5 times a
// power of ten, increasing; the first at or below lo, the last at or above hi (so the axis
// spans whole steps). lo == hi gives a span of one unit around it.
// With `integer`, the step is at least 1 (whole-number ticks for counts and rounds).
std::vector<double> nice_ticks(double lo, double hi, int target = 6, bool integer = false);

// Ticks of a logarithmic axis covering [lo, hi] (both > 0): the powers of ten around them, with
// 2 and 5 times each when the range spans fewer than three decades.
std::vector<double> log_ticks(double lo, double hi);

// A tick label: at most 4 significant digits, no trailing zeros, exponent form for very
// large or small magnitudes ("0.001", "2.5", "1e+06", "-3").
std::string tick_text(double v);

// The indices a curve of n points keeps when drawn with at most `keep` points (keep >= 2):
// evenly spaced, always the first and the last; 0 .. n-1 when n <= keep.
std::vector<std::size_t> downsample(std::size_t n, std::size_t keep);

// Whether values (all > 0) are better drawn on a log axis: they span at least a factor 20.
bool wants_log_axis(const std::vector<double>& values);

}  // namespace tn::report
