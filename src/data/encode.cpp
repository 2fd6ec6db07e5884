// Fitting categories and missing-value fills on the training split, and encoding columns.
#include "data/encode.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <utility>

#include "math/saturate.h"
#include "util/host_memory.h"

namespace tn {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
// A one-hot column with more categories than this and than half its training rows is refused:
// most categories are then seen once or twice (an identifier, free text), nothing a model can
// learn from, and its inputs grow with the rows squared. Small enough to catch the identifier
// of a few hundred rows, large enough for a small table's ordinary categories.
constexpr std::size_t kFewCategories = 20;
// Unseen categories named in a column's warning; the rest are counted.
constexpr std::size_t kNamedUnseen = 3;

bool categorical(Encoding e) { return e == Encoding::OneHot || e == Encoding::Ordinal; }

// The training values of numeric column f (missing ones left out).
std::vector<double> present_values(const Dataset& raw, const std::vector<std::uint32_t>& train, int f) {
  std::vector<double> v;
  for (std::uint32_t r : train) {
    const float x = raw.X[static_cast<std::size_t>(r) * raw.features + f];
    if (!std::isnan(x)) v.push_back(x);
  }
  return v;
}

// numpy's mean and median (the middle value, or the mean of the two middle values).
float center(std::vector<double> v, Missing how) {
  if (how == Missing::Mean) {
    double sum = 0;
    for (double x : v) sum += x;
    return static_cast<float>(sum / static_cast<double>(v.size()));
  }
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return static_cast<float>(n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2);
}

// How to give `column` fewer inputs, with the options the configuration has.
std::string fewer_inputs(const std::string& column) {
  return "; drop it with `data.drop: [" + column + "]` or give it one input, the category's index: "
         "data.features: {" + column + ": ordinal}";
}

// The encoded data's estimated bytes: every row's inputs as floats, twice (the encoded table
// and the splits cut from it), with `width` inputs per row.
std::int64_t encoded_bytes(std::int64_t rows, std::int64_t width) {
  return sat_mul(rows, width, 2 * static_cast<std::int64_t>(sizeof(float)));
}

// Refuses an encoding whose encoded data would not fit in the memory available (MemAvailable;
// unknown: not checked), before it is allocated, naming the widest one-hot column.
void check_encoded_size(const FeatureEncoding& e, std::int64_t rows, const std::string& origin) {
  std::int64_t width = 0;
  const ColumnEncoding* widest = nullptr;
  for (const ColumnEncoding& c : e.columns) {
    width = sat_add(width, c.kind == Encoding::OneHot ? static_cast<std::int64_t>(c.categories.size()) : 1);
    if (c.kind == Encoding::OneHot && (!widest || c.categories.size() > widest->categories.size())) widest = &c;
  }
  const std::uint64_t available = available_memory();
  const std::int64_t bytes = encoded_bytes(rows, width);
  if (!widest || available == 0 || static_cast<std::uint64_t>(bytes) <= available) return;
  throw DataError(origin + ": column '" + widest->column + "' has " + std::to_string(widest->categories.size()) +
                  " categories, one input each: the encoded data (" + std::to_string(rows) + " rows of " +
                  std::to_string(width) + " inputs, held twice while the splits are cut) need an estimated " +
                  format_bytes(bytes) + ", more than the " +
                  format_bytes(static_cast<std::int64_t>(std::min<std::uint64_t>(available, kSaturated))) +
                  " available (MemAvailable)" + fewer_inputs(widest->column));
}

// One warning for column c of the data from `origin` naming its categories not in the training
// split, however many there are: the first few, with how many and in how many rows.
// `rows_of[l]` counts the rows of the data's category levels[l] not in the encoding.
void warn_unseen(const ColumnEncoding& c, const std::string& origin, const std::vector<std::string>& levels,
                 const std::vector<long>& rows_of) {
  std::string named;
  std::size_t count = 0;
  long rows = 0;
  for (std::size_t l = 0; l < rows_of.size(); ++l) {
    if (rows_of[l] == 0) continue;
    if (++count <= kNamedUnseen) named += (count > 1 ? ", '" : "'") + levels[l] + "'";
    rows += rows_of[l];
  }
  if (count == 0) return;
  const char* as = c.kind == Encoding::OneHot ? "all zeros" : "-1";
  if (count == 1)
    spdlog::warn("{}: column '{}': category {} was not in the training split; it is encoded as {} ({} {})", origin,
                 c.column, named, as, rows, rows == 1 ? "row" : "rows");
  else
    spdlog::warn("{}: column '{}': {} categories were not in the training split ({}{}), in {} rows; they are "
                 "encoded as {}", origin, c.column, count, named, count > kNamedUnseen ? ", ..." : "", rows, as);
}

}  // namespace

int FeatureEncoding::width() const {
  int w = 0;
  for (const ColumnEncoding& c : columns) w += c.width();
  return w;
}

std::vector<std::string> FeatureEncoding::input_names() const {
  std::vector<std::string> names;
  for (const ColumnEncoding& c : columns) {
    if (c.kind != Encoding::OneHot) {
      names.push_back(c.column);
      continue;
    }
    for (const std::string& v : c.categories) names.push_back(c.column + "_" + v);
  }
  return names;
}

std::vector<std::string> FeatureEncoding::column_names() const {
  std::vector<std::string> names;
  for (const ColumnEncoding& c : columns) names.push_back(c.column);
  return names;
}

FeatureEncoding fit_encoding(const Dataset& raw, const std::vector<std::uint32_t>& train, Missing missing) {
  FeatureEncoding e;
  const bool fill = missing == Missing::Mean || missing == Missing::Median;
  if (raw.encodings.empty()) return e;
  if (!fill && std::none_of(raw.encodings.begin(), raw.encodings.end(), categorical)) return e;
  e.missing = missing;
  for (int f = 0; f < raw.features; ++f) {
    ColumnEncoding c;
    c.column = raw.feature_names[f];
    c.kind = raw.encodings[f];
    c.fill = kNaN;
    if (!categorical(c.kind)) {
      if (fill) {
        const std::vector<double> v = present_values(raw, train, f);
        if (v.empty())
          throw DataError(raw.origin + ": column '" + c.column + "' has no values in the training split, so there is "
                          "no " + to_string(missing) + " to fill its missing values with; fill them in or drop the column");
        c.fill = center(v, missing);
      }
      e.columns.push_back(std::move(c));
      continue;
    }
    const std::vector<std::string>& levels = raw.levels[f];
    std::vector<long> seen(levels.size(), 0);
    for (std::uint32_t r : train) {
      const float x = raw.X[static_cast<std::size_t>(r) * raw.features + f];
      if (!std::isnan(x)) ++seen[static_cast<std::size_t>(x)];
    }
    std::set<std::string> sorted;
    for (std::size_t l = 0; l < levels.size(); ++l)
      if (seen[l] > 0) sorted.insert(levels[l]);
    c.categories.assign(sorted.begin(), sorted.end());
    if (c.categories.empty())
      throw DataError(raw.origin + ": column '" + c.column + "' has no categories in the training split; fill in "
                      "its values or drop the column");
    const std::size_t K = c.categories.size();
    if (c.kind == Encoding::OneHot && K > kFewCategories && K > train.size() / 2)
      throw DataError(raw.origin + ": column '" + c.column + "' looks like an identifier: " + std::to_string(K) +
                      " categories in " + std::to_string(train.size()) + " training rows, so most are seen once or "
                      "twice, which one-hot inputs cannot generalize from (its " + std::to_string(K) +
                      " inputs would take an estimated " + format_bytes(encoded_bytes(raw.n, static_cast<std::int64_t>(K))) +
                      ")" + fewer_inputs(c.column));
    spdlog::info("{}: column '{}': {} categories in the training split, {} ({})", raw.origin, c.column, K,
                 to_string(c.kind), c.kind == Encoding::OneHot ? std::to_string(K) + " inputs" : "one input");
    if (fill) {  // the most frequent category, the first in sorted order on a tie
      long best = -1;
      for (std::size_t l = 0; l < levels.size(); ++l) {
        const auto at = std::lower_bound(c.categories.begin(), c.categories.end(), levels[l]) - c.categories.begin();
        if (seen[l] > best || (seen[l] == best && at < c.fill)) best = seen[l], c.fill = static_cast<float>(at);
      }
    }
    e.columns.push_back(std::move(c));
  }
  return e;
}

CsvColumns csv_columns(const FeatureEncoding& e, const std::vector<std::string>& numeric_columns) {
  CsvColumns r;
  if (e.empty()) {
    for (const std::string& c : numeric_columns) r.settings.push_back({c, Encoding::Numeric});
    return r;
  }
  for (const ColumnEncoding& c : e.columns) r.settings.push_back({c.column, c.kind});
  r.missing = e.missing == Missing::Mean || e.missing == Missing::Median ? e.missing : Missing::Error;
  return r;
}

void apply_encoding(const FeatureEncoding& e, Dataset& raw) {
  if (e.empty()) {
    for (std::size_t f = 0; f < raw.encodings.size(); ++f)
      if (categorical(raw.encodings[f]))
        throw DataError(raw.origin + ": column '" + raw.feature_names[f] + "' holds categories ('" +
                        raw.levels[f].front() + "', ...), but the model was trained on numbers there; give it numbers");
    return;
  }
  if (static_cast<int>(e.columns.size()) != raw.features)
    throw DataError(raw.origin + ": " + std::to_string(raw.features) + " feature columns, the encoding has " +
                    std::to_string(e.columns.size()));
  check_encoded_size(e, raw.n, raw.origin);
  // Each raw category's index among the encoding's categories (-1: unseen), per column.
  std::vector<std::vector<int>> index(e.columns.size());
  for (std::size_t f = 0; f < e.columns.size(); ++f) {
    const ColumnEncoding& c = e.columns[f];
    if (!categorical(c.kind)) continue;
    const std::vector<std::string>& levels = f < raw.levels.size() ? raw.levels[f] : std::vector<std::string>{};
    for (const std::string& v : levels) {
      const auto it = std::lower_bound(c.categories.begin(), c.categories.end(), v);
      const bool known = it != c.categories.end() && *it == v;
      index[f].push_back(known ? static_cast<int>(it - c.categories.begin()) : -1);
    }
  }
  const int W = e.width();
  std::vector<float> X(static_cast<std::size_t>(raw.n) * W, 0.0f);
  std::vector<std::vector<long>> unseen(e.columns.size());  // rows per raw category not in the encoding
  for (std::size_t f = 0; f < e.columns.size(); ++f) unseen[f].assign(index[f].size(), 0);
  for (int i = 0; i < raw.n; ++i) {
    float* out = X.data() + static_cast<std::size_t>(i) * W;
    for (std::size_t f = 0; f < e.columns.size(); ++f) {
      const ColumnEncoding& c = e.columns[f];
      float x = raw.X[static_cast<std::size_t>(i) * raw.features + f];
      if (!categorical(c.kind)) {
        *out++ = std::isnan(x) ? c.fill : x;
        continue;
      }
      int k = !std::isnan(x) ? index[f][static_cast<std::size_t>(x)] : std::isnan(c.fill) ? -1 : static_cast<int>(c.fill);
      if (!std::isnan(x) && k < 0) ++unseen[f][static_cast<std::size_t>(x)];
      if (c.kind == Encoding::Ordinal) {
        *out++ = static_cast<float>(k);
        continue;
      }
      if (k >= 0) out[k] = 1.0f;
      out += c.width();
    }
  }
  for (std::size_t f = 0; f < e.columns.size() && f < raw.levels.size(); ++f)
    warn_unseen(e.columns[f], raw.origin, raw.levels[f], unseen[f]);
  raw.X = std::move(X);
  raw.features = W;
  raw.feature_names = e.input_names();
  raw.encodings.clear();
  raw.levels.clear();
}

}  // namespace tn
