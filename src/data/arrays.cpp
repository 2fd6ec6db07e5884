// Checked conversion of numeric arrays (npy, hdf5, idx) to a Dataset (see arrays.h).
#include "data/arrays.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <utility>

namespace tn {
namespace {

constexpr double kMaxIntegerClasses = 65536;

std::string count(std::uint64_t n, const char* word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

std::string fmt(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

[[noreturn]] void fail(const NumericArray& a, const std::string& problem) {
  throw DataError(a.origin + " (" + a.key + "): " + problem);
}

struct Table {
  std::uint64_t rows = 0, cols = 1;
};

// X as a table: [n, F], or [n] with F = 1.
Table x_table(const NumericArray& a) {
  const auto& s = a.shape;
  if (s.size() != 1 && s.size() != 2)
    fail(a, "X must be 2-D [samples, features] (or 1-D for one feature), got shape " +
                shape_text(s) + "; flatten each sample, e.g. numpy.save(path, arr.reshape(len(arr), -1))");
  const Table t{s[0], s.size() == 2 ? s[1] : 1};
  if (t.cols == 0) fail(a, "X has no features (shape " + shape_text(s) + ")");
  return t;
}

// y as a table: [n] or [n, T]; class labels one per sample.
Table y_table(const NumericArray& a, bool classification) {
  const auto& s = a.shape;
  const bool ok = s.size() == 1 || (s.size() == 2 && (!classification || s[1] == 1));
  if (ok && (s.size() == 1 || s[1] > 0)) return {s[0], s.size() == 2 ? s[1] : 1};
  if (classification)
    fail(a, "y must be 1-D [samples] of class labels, got shape " + shape_text(s) +
                "; for one-hot labels save arr.argmax(axis=1)");
  fail(a, "y must be 1-D [samples] or 2-D [samples, targets] with at least one target, got "
          "shape " + shape_text(s));
}

// "X[17, 3]" for a 2-D array, "y[17]" for a 1-D one.
std::string element(const NumericArray& a, const char* role, std::uint64_t i, std::uint64_t cols) {
  std::string e = std::string(role) + "[" + std::to_string(i / cols);
  if (a.shape.size() == 2) e += ", " + std::to_string(i % cols);
  return e + "]";
}

void check_finite(const NumericArray& a, const char* role, std::uint64_t cols) {
  const auto bad = std::find_if(a.values.begin(), a.values.end(),
                                [](float v) { return !std::isfinite(v); });
  if (bad == a.values.end()) return;
  const std::string at = element(a, role, static_cast<std::uint64_t>(bad - a.values.begin()), cols);
  if (std::isnan(*bad)) fail(a, at + " is NaN; remove or impute missing values");
  fail(a, at + " is infinite or too large for a 32-bit float; use finite values (rescale large ones)");
}

// Class labels must be whole numbers; non-negative ones must fit the class index limit.
void check_labels(const NumericArray& a) {
  for (std::size_t i = 0; i < a.values.size(); ++i) {
    const float v = a.values[i];
    if (v != std::floor(v))
      fail(a, element(a, "y", i, 1) + " = " + fmt(v) +
                  " is not a whole number; class labels must be integers (for real-valued "
                  "targets use a regression loss such as mse)");
    if (v >= kMaxIntegerClasses)
      fail(a, element(a, "y", i, 1) + " = " + fmt(v) +
                  " is too large: labels are kept as class indices 0..K-1 with K <= 65536; "
                  "renumber the classes");
  }
}

// Labels -> class indices and names (see dataset_from_arrays).
void number_classes(Dataset& d, const NumericArray& train_y) {
  if (d.y.empty()) return;
  const auto [lo, hi] = std::minmax_element(d.y.begin(), d.y.end());
  if (*lo == *hi)
    fail(train_y, "y has only one class (" + fmt(*lo) +
                      "); classification needs at least 2 distinct labels");
  if (*lo >= 0) {
    for (int k = 0; k <= static_cast<int>(*hi); ++k) d.class_names.push_back(std::to_string(k));
  } else {
    std::vector<float> values = d.y;
    std::sort(values.begin(), values.end());
    values.erase(std::unique(values.begin(), values.end()), values.end());
    for (float v : values) d.class_names.push_back(fmt(v));
    for (float& v : d.y)
      v = static_cast<float>(std::lower_bound(values.begin(), values.end(), v) - values.begin());
  }
  d.num_classes = static_cast<int>(d.class_names.size());
}

// Shapes and values of one X/y pair; returns its rows.
std::uint64_t check_pair(const NumericArray& X, const NumericArray& y, bool classification,
                         Table& x, Table& t) {
  x = x_table(X);
  t = y_table(y, classification);
  if (x.rows != t.rows)
    fail(y, "y has " + count(t.rows, "row") + " but X (" + X.origin + ") has " +
                std::to_string(x.rows) + "; they need one row per sample");
  check_finite(X, "X", x.cols);
  check_finite(y, "y", t.cols);
  if (classification) check_labels(y);
  return x.rows;
}

}  // namespace

std::string shape_text(const std::vector<std::uint64_t>& shape) {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

Dataset dataset_from_arrays(SourceArrays a, bool classification, const std::string& origin) {
  Table x, t;
  const std::uint64_t n = check_pair(a.X, a.y, classification, x, t);
  if (n < 2) fail(a.X, "X has " + count(n, "sample") + "; at least 2 are needed");
  std::uint64_t n_test = 0;
  if (a.test_X) {
    Table tx, tt;
    n_test = check_pair(*a.test_X, *a.test_y, classification, tx, tt);
    if (n_test == 0) fail(*a.test_X, "the test X has no samples");
    if (tx.cols != x.cols)
      fail(*a.test_X, "the test X has " + std::to_string(tx.cols) + " features per sample, the "
                      "training X (" + a.X.origin + ") " + std::to_string(x.cols));
    if (tt.cols != t.cols)
      fail(*a.test_y, "the test y has " + std::to_string(tt.cols) + " targets per sample, the "
                      "training y (" + a.y.origin + ") " + std::to_string(t.cols));
  }
  if (n + n_test > static_cast<std::uint64_t>(INT_MAX))
    fail(a.X, "too many samples (" + std::to_string(n + n_test) + "); at most " +
                  std::to_string(INT_MAX) + " are supported");
  Dataset d;
  d.n = static_cast<int>(n + n_test);
  d.features = static_cast<int>(x.cols);
  d.targets = static_cast<int>(t.cols);
  d.predefined_test = static_cast<int>(n_test);
  d.origin = origin;
  d.X = std::move(a.X.values);
  d.y = std::move(a.y.values);
  if (a.test_X) {
    d.X.insert(d.X.end(), a.test_X->values.begin(), a.test_X->values.end());
    d.y.insert(d.y.end(), a.test_y->values.begin(), a.test_y->values.end());
  }
  for (int f = 0; f < d.features; ++f) d.feature_names.push_back(std::string("x").append(std::to_string(f)));
  if (classification) number_classes(d, a.y);
  return d;
}

}  // namespace tn
