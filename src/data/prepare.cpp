// Splitting and normalization.
#include "data/prepare.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "swarm/sampler.h"
#include "data/encode.h"
#include "data/sequence.h"
#include "data/sequence_units.h"
#include "math/quantile.h"
#include "math/rng.h"

namespace tn {
namespace {

SplitData take_rows(const Dataset& d, const std::vector<std::uint32_t>& perm, int begin, int end,
                    const char* name) {
  SplitData s;
  s.name = name;
  s.n = end - begin;
  s.X.resize(static_cast<std::size_t>(s.n) * d.features);
  s.y.resize(static_cast<std::size_t>(s.n) * d.targets);
  for (int i = 0; i < s.n; ++i) {
    const std::uint32_t r = perm[begin + i];
    s.rows.push_back(static_cast<int>(r));
    if (!d.group.empty()) s.group.push_back(d.group[r]);
    // Pointer arithmetic, not &v[k]: a dataset may have no features or targets (empty arrays).
    std::copy_n(d.X.data() + static_cast<std::size_t>(r) * d.features, d.features,
                s.X.data() + static_cast<std::size_t>(i) * d.features);
    std::copy_n(d.y.data() + static_cast<std::size_t>(r) * d.targets, d.targets,
                s.y.data() + static_cast<std::size_t>(i) * d.targets);
  }
  return s;
}

// robust: the median and the interquartile range (25th to 75th percentile) of column f of the
// rows of group g, as scikit-learn's RobustScaler fits them.
std::pair<double, double> median_and_iqr(const std::vector<float>& X, int n, const std::vector<int>& group, int F,
                                         int f, int g) {
  std::vector<double> v;
  for (int i = 0; i < n; ++i)
    if (g < 0 || group[i] == g) v.push_back(X[static_cast<std::size_t>(i) * F + f]);
  if (v.empty()) return {0.0, 0.0};
  std::sort(v.begin(), v.end());
  return {quantile_of_sorted(v, 0.5), quantile_of_sorted(v, 0.75) - quantile_of_sorted(v, 0.25)};
}

// Statistics of the training rows whose group is g (all rows when g < 0) into mean/std at
// offset `at`: standard and log1p (of values already log1p'd) mean and std, minmax (min,
// max − min), robust (median, interquartile range); a constant column gets 1 so it is only
// shifted.
void fit(const std::vector<float>& X, int n, const std::vector<int>& group, int F, Normalize method, int g,
         std::vector<float>& mean, std::vector<float>& std, std::size_t at) {
  for (int f = 0; f < F; ++f) {
    if (method == Normalize::Robust) {
      const auto [median, iqr] = median_and_iqr(X, n, group, F, f, g);
      mean[at + f] = static_cast<float>(median);
      std[at + f] = iqr > 1e-12 ? static_cast<float>(iqr) : 1.0f;
      continue;
    }
    double a = 0, b = 0, lo = INFINITY, hi = -INFINITY;
    long count = 0;
    for (int i = 0; i < n; ++i) {
      if (g >= 0 && group[i] != g) continue;
      const double x = X[static_cast<std::size_t>(i) * F + f];
      a += x;
      lo = std::min(lo, x);
      hi = std::max(hi, x);
      ++count;
    }
    const double m = count ? a / count : 0.0;
    for (int i = 0; i < n; ++i) {
      if (g >= 0 && group[i] != g) continue;
      const double dx = X[static_cast<std::size_t>(i) * F + f] - m;
      b += dx * dx;
    }
    const double sd = count ? std::sqrt(b / count) : 0.0;
    const bool standard = method != Normalize::MinMax;
    const double offset = standard ? m : (count ? lo : 0.0), scale = standard ? sd : (count ? hi - lo : 0.0);
    mean[at + f] = static_cast<float>(offset);
    std[at + f] = scale > 1e-12 ? static_cast<float>(scale) : 1.0f;
  }
}

// scikit-learn's _approximate_mode: `draws` samples spread over classes of sizes `counts` in
// proportion, floor(counts_k / n · draws) each, the rest one each to the largest remainders
// (ties: lower class index first, where scikit-learn picks at random).
std::vector<long> approximate_mode(const std::vector<long>& counts, long draws) {
  long total = 0;
  for (long c : counts) total += c;
  std::vector<long> out(counts.size());
  std::vector<double> rest(counts.size());
  long given = 0;
  for (std::size_t k = 0; k < counts.size(); ++k) {
    const double exact = static_cast<double>(counts[k]) / static_cast<double>(total) * static_cast<double>(draws);
    out[k] = static_cast<long>(std::floor(exact));
    rest[k] = exact - std::floor(exact);
    given += out[k];
  }
  std::vector<std::size_t> order(counts.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return rest[a] > rest[b]; });
  for (std::size_t i = 0; given < draws && i < order.size(); ++i, ++given) ++out[order[i]];
  return out;
}

// data.split.stratify: rows of the pool [0, n_pool) into train, val and test with per-class
// counts as scikit-learn's train_test_split(stratify=y) gives them when test is split off first
// (test_size = n_test) and val then from the rest (test_size = n_val). Each class's rows are
// drawn by its own permutation (split seed, stream 1 + class); every split keeps file order.
// Returns train, val, test rows concatenated (a predefined test set keeps its rows).
std::vector<std::uint32_t> stratified_order(const Dataset& d, int n_pool, int n_val, int n_test,
                                            std::uint64_t seed) {
  if (d.num_classes < 1 || d.targets != 1)
    throw DataError("data.split.stratify: " + d.origin + " has no class labels to stratify by; "
                    "remove stratify or use a classification source");
  const auto K = static_cast<std::size_t>(d.num_classes);
  std::vector<std::vector<std::uint32_t>> rows(K);
  for (int i = 0; i < n_pool; ++i) rows[static_cast<std::size_t>(d.y[i])].push_back(static_cast<std::uint32_t>(i));
  std::vector<long> count(K), test(K, 0), val(K, 0);
  for (std::size_t k = 0; k < K; ++k) count[k] = static_cast<long>(rows[k].size());
  const bool split_test = d.predefined_test == 0 && n_test > 0;
  if (split_test) {
    const std::vector<long> kept = approximate_mode(count, n_pool - n_test);
    for (std::size_t k = 0; k < K; ++k) test[k] = count[k] - kept[k], count[k] = kept[k];
  }
  if (n_val > 0) {
    long rest = 0;
    for (long c : count) rest += c;
    const std::vector<long> kept = approximate_mode(count, rest - n_val);
    for (std::size_t k = 0; k < K; ++k) val[k] = count[k] - kept[k];
  }
  std::vector<std::uint32_t> in_train, in_val, in_test;
  for (std::size_t k = 0; k < K; ++k) {
    std::vector<std::uint32_t> perm(rows[k].size());
    random_permutation(seed, Purpose::Split, static_cast<std::uint32_t>(k + 1), static_cast<std::uint32_t>(perm.size()),
                       perm.data());
    for (std::size_t j = 0; j < perm.size(); ++j) {
      const std::uint32_t r = rows[k][perm[j]];
      const long at = static_cast<long>(j);
      (at < test[k] ? in_test : at < test[k] + val[k] ? in_val : in_train).push_back(r);
    }
  }
  for (int i = n_pool; i < d.n; ++i) in_test.push_back(static_cast<std::uint32_t>(i));
  std::vector<std::uint32_t> order;
  for (std::vector<std::uint32_t>* part : {&in_train, &in_val, &in_test}) {
    std::sort(part->begin(), part->end());
    order.insert(order.end(), part->begin(), part->end());
  }
  return order;
}

// data.normalize_target log1p: every split's targets y → log1p(y); a value ≤ −1, which has no
// logarithm, is a DataError naming its place (file:line or row) and column.
void log1p_targets(PreparedData& p, const Dataset& d, const DataConfig& cfg) {
  const int T = p.targets;
  for (SplitData* s : {&p.train, &p.val, &p.test})
    for (std::size_t j = 0; j < s->y.size(); ++j) {
      float& y = s->y[j];
      if (y > -1.0f) {
        y = std::log1p(y);
        continue;
      }
      const int row = s->rows[j / static_cast<std::size_t>(T)];
      const int column = static_cast<int>(j % static_cast<std::size_t>(T));
      const std::string name = T == 1 && !cfg.source.target.empty() ? "column '" + cfg.source.target + "'"
                                                                      : "target column " + std::to_string(column);
      throw DataError(row_location(d, row) + name + ": target " + fmt::format("{}", y) +
                      " is at most -1, which log1p cannot take (data.normalize_target: log1p); use standard or "
                      "robust for targets that can be -1 or less, or shift the target column");
    }
}

// data.normalize_target: each target column scaled by the training split's statistics, [T]
// shared by every member, or [G, T] per member group with normalize_per_member (group_by: each
// member's statistics from its own group's training rows, applied to its group's rows of every split).
void normalize_targets(PreparedData& p, const Dataset& d, const DataConfig& cfg) {
  const Normalize method = cfg.normalize_target;
  const int T = p.targets;
  if (method == Normalize::Log1p) log1p_targets(p, d, cfg);
  p.target_scaling = method;
  if (member_target_statistics(cfg)) return;  // each member's own, from its rows (make_member_sets)
  const int G = cfg.normalize_per_member ? static_cast<int>(p.group_names.size()) : 1;
  p.target_mean.assign(static_cast<std::size_t>(G) * T, 0.0f);
  p.target_std.assign(static_cast<std::size_t>(G) * T, 1.0f);
  for (int g = 0; g < G; ++g)
    fit(p.train.y, p.train.n, p.train.group, T, method, cfg.normalize_per_member ? g : -1, p.target_mean, p.target_std,
        static_cast<std::size_t>(g) * T);
  for (SplitData* s : {&p.train, &p.val, &p.test}) apply_normalization(s->y, T, p.target_mean, p.target_std, s->group);
}

}  // namespace

bool member_target_statistics(const DataConfig& cfg) {
  const PerMember m = cfg.per_member;
  return cfg.normalize_target != Normalize::None && !cfg.sequence.enabled() &&
         (m == PerMember::Bootstrap || m == PerMember::Subsample || m == PerMember::Shards);
}

void fit_target_statistics(const std::vector<float>& y, int T, Normalize method, std::vector<float>& mean,
                           std::vector<float>& std, std::size_t at) {
  fit(y, static_cast<int>(y.size() / static_cast<std::size_t>(T)), {}, T, method, -1, mean, std, at);
}

void apply_normalization(std::vector<float>& X, int F, const std::vector<float>& mean,
                         const std::vector<float>& std, const std::vector<int>& group) {
  if (mean.empty()) return;
  const std::size_t n = X.size() / F;
  const bool per_group = mean.size() > static_cast<std::size_t>(F);
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t at = per_group ? static_cast<std::size_t>(group[i]) * F : 0;
    for (int f = 0; f < F; ++f) X[i * F + f] = (X[i * F + f] - mean[at + f]) / std[at + f];
  }
}

void targets_to_original(std::vector<float>& v, int T, Normalize method, const std::vector<float>& target_mean,
                         const std::vector<float>& target_std, const std::vector<int>& group) {
  if (method == Normalize::None) return;
  if (target_mean.empty()) {  // the splits of per-member statistics: f(y)
    if (method == Normalize::Log1p)
      for (float& x : v) x = std::expm1(x);
    return;
  }
  const auto w = static_cast<std::size_t>(T);
  const bool per_group = target_mean.size() > w;
  for (std::size_t j = 0; j < v.size(); ++j) {
    const std::size_t at = (per_group ? static_cast<std::size_t>(group[j / w]) * w : 0) + j % w;
    float& x = v[j];
    x = x * target_std[at] + target_mean[at];
    if (method == Normalize::Log1p) x = std::expm1(x);
  }
}

void member_targets_to_original(std::vector<float>& v, int S, int first_member, int T, Normalize method,
                                const std::vector<float>& target_mean, const std::vector<float>& target_std) {
  if (target_mean.empty() || method == Normalize::None || S == 0) return;
  if (target_mean.size() <= static_cast<std::size_t>(T))  // shared statistics: no member row needed
    return targets_to_original(v, T, method, target_mean, target_std, {});
  const std::size_t rows = v.size() / static_cast<std::size_t>(T) / static_cast<std::size_t>(S);
  std::vector<int> member(v.size() / static_cast<std::size_t>(T));
  for (std::size_t r = 0; r < member.size(); ++r) member[r] = first_member + static_cast<int>(r / rows);
  targets_to_original(v, T, method, target_mean, target_std, member);
}

std::string target_scaling_note(const PreparedData& p, const std::vector<float>& member_mean,
                                const std::vector<float>& member_std) {
  if (p.seq_len > 0 || p.target_scaling == Normalize::None) return "";
  const Normalize m = p.target_scaling;
  const char* what = m == Normalize::Standard ? "standardized with the training split's mean and std"
                     : m == Normalize::MinMax ? "scaled with the training split's minimum and range"
                     : m == Normalize::Robust ? "scaled with the training split's median and interquartile range"
                                              : "log1p'd, then standardized with the training split's mean and std";
  const bool per_member = p.target_mean.empty();
  std::string scaled = what;
  if (per_member) scaled.replace(scaled.find("the training split's"), 20, "each member's");
  const std::vector<float>& mean = per_member ? member_mean : p.target_mean;
  const std::vector<float>& sd = per_member ? member_std : p.target_std;
  const auto shown = static_cast<std::ptrdiff_t>(std::min<std::size_t>(mean.size(), 4));
  const bool per_group = !per_member && mean.size() > static_cast<std::size_t>(p.targets);
  return fmt::format("targets {}{} ({} / {}{}): data.normalize_target: {} (set none to train on raw targets); metrics "
                     "and predictions in original units",
                     scaled,
                     per_group    ? ", per member group (data.normalize_per_member: each group's own training rows)"
                     : per_member ? " from its own training rows (its data.per_member draws)"
                                  : "",
                     fmt::join(mean.begin(), mean.begin() + shown, " "), fmt::join(sd.begin(), sd.begin() + shown, " "),
                     mean.size() > 4 ? " ..." : "", to_string(m));
}

void targets_to_original(PreparedData& p) {
  if (p.seq_len > 0) return;
  for (SplitData* s : {&p.train, &p.val, &p.test})
    targets_to_original(s->y, p.targets, p.target_scaling, p.target_mean, p.target_std, s->group);
}

PreparedData prepare_data(Dataset d, const DataConfig& cfg) {
  if (cfg.sequence.enabled()) return prepare_sequences(d, cfg);
  PreparedData p;
  p.targets = d.targets;
  p.num_classes = d.num_classes;
  p.class_names = d.class_names;
  p.group_names = d.group_names;
  p.origin = d.origin;

  const int n_pool = d.n - d.predefined_test;  // samples that train, val (and test) are cut from
  const int n_val = static_cast<int>(std::lround(cfg.split.val * n_pool));
  const int n_test = d.predefined_test > 0 ? d.predefined_test : static_cast<int>(std::lround(cfg.split.test * n_pool));
  const int n_train = d.n - n_val - n_test;
  if (n_train < 1)
    throw DataError("data.split: " + d.origin + " has " + std::to_string(d.n) +
                    " samples, which leaves none for training; lower split.val/split.test");
  std::vector<std::uint32_t> perm(d.n);
  std::iota(perm.begin(), perm.end(), 0u);
  if (cfg.split.stratify)
    perm = stratified_order(d, n_pool, n_val, n_test, cfg.split.seed);
  else if (n_train < n_pool)
    random_permutation(cfg.split.seed, Purpose::Split, 0, n_pool, perm.data());
  p.encoding = fit_encoding(d, {perm.begin(), perm.begin() + n_train}, cfg.missing);
  apply_encoding(p.encoding, d);
  p.features = d.features;
  p.feature_names = d.feature_names;
  p.train = take_rows(d, perm, 0, n_train, "train");
  p.val = take_rows(d, perm, n_train, n_train + n_val, "val");
  p.test = take_rows(d, perm, n_train + n_val, d.n, "test");

  if (cfg.normalize != Normalize::None) {
    const int F = p.features;
    const int G = cfg.normalize_per_member ? static_cast<int>(p.group_names.size()) : 1;
    p.mean.assign(static_cast<std::size_t>(G) * F, 0.0f);
    p.std.assign(static_cast<std::size_t>(G) * F, 1.0f);
    for (int g = 0; g < G; ++g)
      fit(p.train.X, p.train.n, p.train.group, F, cfg.normalize, cfg.normalize_per_member ? g : -1, p.mean, p.std,
          static_cast<std::size_t>(g) * F);
    for (SplitData* s : {&p.train, &p.val, &p.test}) apply_normalization(s->X, F, p.mean, p.std, s->group);
  }
  if (cfg.normalize_target != Normalize::None && p.targets > 0) normalize_targets(p, d, cfg);
  return p;
}

}  // namespace tn
