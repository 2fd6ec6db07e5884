// Writes and reads the evaluation groups /eval/<split>/ (see docs/run-file.md).
#include "io/run_file_eval.h"

#include <algorithm>
#include <utility>

namespace tn::io {
namespace {

void write_if_present(hid_t file, const std::string& name, const Array& a) {
  if (a.size() > 0) h5::write_floats(file, name, a.shape, a.data.data());
}

void read_if_present(hid_t file, const std::string& name, Array& a) {
  if (h5::exists(file, name)) h5::read_floats(file, name, a.shape, a.data);
}

// A group whose attributes are the metric values (member_mean, member_std, ensemble).
void write_summary(hid_t file, const std::string& g, const std::vector<std::string>& metrics,
                   const std::vector<double>& values, const Array& confusion) {
  h5::Handle group = h5::create_group(file, g);
  for (std::size_t m = 0; m < metrics.size(); ++m)
    h5::set_double_attr(group.get(), g, metrics[m].c_str(), values[m]);
  group.close("group " + g);
  write_if_present(file, g + "/confusion", confusion);
}

std::vector<double> read_summary(hid_t file, const std::string& g,
                                 const std::vector<std::string>& metrics, Array* confusion) {
  h5::Handle group = h5::open_group(file, g);
  std::vector<double> values;
  for (const std::string& m : metrics) values.push_back(h5::get_double_attr(group.get(), g, m.c_str()));
  if (confusion) read_if_present(file, g + "/confusion", *confusion);
  return values;
}

constexpr double kLevels[7] = {0.0, 0.05, 0.25, 0.5, 0.75, 0.95, 1.0};

// Scores of a group_by evaluation under `base` ("/eval/<split>" or ".../original"), named
// <prefix>members/<metric> [S], <prefix>pooled (attributes), <prefix>quantiles/<metric> [7].
// The model's own members/<metric> are written with the record itself (with_members false).
void write_scores(hid_t file, const std::string& base, const std::string& prefix,
                  const std::vector<std::string>& metrics, const ScoreRecord& r, bool with_members) {
  const std::size_t M = metrics.size(), S = M ? r.members.size() / M : 0;
  for (std::size_t m = 0; m < M; ++m) {
    if (with_members) {
      std::vector<double> column(S);
      for (std::size_t s = 0; s < S; ++s) column[s] = r.members[s * M + m];
      h5::write_doubles(file, base + "/" + prefix + "members/" + metrics[m], column);
    }
    h5::write_doubles(file, base + "/" + prefix + "quantiles/" + metrics[m],
                      std::vector<double>(r.quantiles.begin() + static_cast<std::ptrdiff_t>(m * 7),
                                          r.quantiles.begin() + static_cast<std::ptrdiff_t>(m * 7 + 7)));
  }
  write_summary(file, base + "/" + prefix + "pooled", metrics, r.pooled, {});
}

ScoreRecord read_scores(hid_t file, const std::string& base, const std::string& prefix,
                        const std::vector<std::string>& metrics, std::size_t S) {
  ScoreRecord r;
  const std::size_t M = metrics.size();
  r.members.assign(S * M, 0.0);
  for (std::size_t m = 0; m < M; ++m) {
    const std::string name = base + "/" + prefix + "members/" + metrics[m];
    const std::vector<double> v = h5::read_doubles(file, name);
    if (v.size() != S) throw h5::Error(name + " does not have one value per member");
    for (std::size_t s = 0; s < S; ++s) r.members[s * M + m] = v[s];
    const std::vector<double> q = h5::read_doubles(file, base + "/" + prefix + "quantiles/" + metrics[m]);
    if (q.size() != 7) throw h5::Error(base + "/" + prefix + "quantiles/" + metrics[m] + " does not have 7 values");
    r.quantiles.insert(r.quantiles.end(), q.begin(), q.end());
  }
  r.pooled = read_summary(file, base + "/" + prefix + "pooled", metrics, nullptr);
  return r;
}

// The prefix of a naive forecast's scores: baseline_ for persistence (the one baseline of files
// before seasonal naive and drift), else <kind>_.
std::string baseline_prefix(const std::string& kind) { return kind == "persistence" ? "baseline_" : kind + "_"; }

EvalRecord read_eval(hid_t file, const std::string& split) {
  const std::string g = "/eval/" + split;
  EvalRecord e;
  e.split = split;
  {
    h5::Handle group = h5::open_group(file, g);
    e.source = h5::get_string_attr(group.get(), g, "source");
    e.task = h5::get_string_attr(group.get(), g, "task");
    e.combine = h5::get_string_attr(group.get(), g, "combine");
    e.n_samples = static_cast<int>(h5::get_int_attr(group.get(), g, "n_samples"));
  }
  e.metrics = h5::read_strings(file, g + "/metrics");
  e.member = h5::read_ints(file, g + "/members/member");
  const std::size_t S = e.member.size(), M = e.metrics.size();
  e.members.assign(S * M, 0.0);
  for (std::size_t m = 0; m < M; ++m) {
    const std::vector<double> v = h5::read_doubles(file, g + "/members/" + e.metrics[m]);
    if (v.size() != S) throw h5::Error(g + "/members/" + e.metrics[m] + " does not have one value per member");
    for (std::size_t s = 0; s < S; ++s) e.members[s * M + m] = v[s];
  }
  read_if_present(file, g + "/members/confusion", e.member_confusion);
  e.member_mean = read_summary(file, g + "/member_mean", e.metrics, &e.member_mean_confusion);
  e.member_std = read_summary(file, g + "/member_std", e.metrics, nullptr);
  if (e.per_group()) {
    e.member_samples = h5::read_ints(file, g + "/members/n_samples");
    const ScoreRecord own = read_scores(file, g, "", e.metrics, S);
    e.pooled = own.pooled;
    e.quantiles = own.quantiles;
    std::vector<std::string> kinds;
    if (h5::exists(file, g + "/baselines")) {
      kinds = h5::read_strings(file, g + "/baselines");
    } else {
      h5::Handle group = h5::open_group(file, g);
      if (h5::has_attr(group.get(), g, "baseline")) kinds = {h5::get_string_attr(group.get(), g, "baseline")};
    }
    const bool original = h5::exists(file, g + "/original");
    if (original) e.original = read_scores(file, g + "/original", "", e.metrics, S);
    for (const std::string& kind : kinds) {
      if (kind != "persistence" && kind != "seasonal_naive" && kind != "drift")
        throw h5::Error(g + "/baselines names '" + kind + "', not persistence, seasonal_naive or drift");
      EvalRecord::Baseline b{kind, read_scores(file, g, baseline_prefix(kind), e.metrics, S), {}};
      if (original) b.original = read_scores(file, g + "/original", baseline_prefix(kind), e.metrics, S);
      e.baselines.push_back(std::move(b));
    }
  } else {
    e.ensemble = read_summary(file, g + "/ensemble", e.metrics, &e.ensemble_confusion);
  }
  e.excluded = h5::read_ints(file, g + "/excluded_members");
  read_if_present(file, g + "/per_sample/ensemble", e.ensemble_prediction);
  read_if_present(file, g + "/per_sample/entropy", e.entropy);
  read_if_present(file, g + "/per_sample/mutual_information", e.mutual_information);
  read_if_present(file, g + "/per_sample/disagreement", e.disagreement);
  e.selection = read_selection(file, g + "/selection");
  {
    h5::Handle group = h5::open_group(file, g);
    if (h5::has_attr(group.get(), g, "threshold_from")) {
      e.threshold_from = h5::get_string_attr(group.get(), g, "threshold_from");
      e.threshold = h5::get_double_attr(group.get(), g, "threshold");
      e.member_threshold = h5::read_doubles(file, g + "/members/threshold");
      if (e.member_threshold.size() != S) throw h5::Error(g + "/members/threshold does not have one value per member");
    }
  }
  return e;
}

}  // namespace

void write_eval(hid_t file, const EvalRecord& e) {
  const std::string g = "/eval/" + e.split;
  {
    h5::Handle group = h5::create_group(file, g);
    h5::set_string_attr(group.get(), g, "split", e.split);
    h5::set_string_attr(group.get(), g, "source", e.source);
    h5::set_string_attr(group.get(), g, "task", e.task);
    h5::set_string_attr(group.get(), g, "combine", e.combine);
    h5::set_int_attr(group.get(), g, "n_samples", e.n_samples, H5T_STD_I32LE);
    const bool persistence = std::any_of(e.baselines.begin(), e.baselines.end(),
                                         [](const EvalRecord::Baseline& b) { return b.kind == "persistence"; });
    if (persistence) h5::set_string_attr(group.get(), g, "baseline", "persistence");  // as files before drift
    if (!e.threshold_from.empty()) {
      h5::set_string_attr(group.get(), g, "threshold_from", e.threshold_from);
      h5::set_double_attr(group.get(), g, "threshold", e.threshold);
    }
    group.close("group " + g);
  }
  if (!e.threshold_from.empty()) h5::write_doubles(file, g + "/members/threshold", e.member_threshold);
  write_selection(file, g + "/selection", e.selection);
  h5::write_strings(file, g + "/metrics", e.metrics);
  h5::write_ints(file, g + "/members/member", e.member);
  const std::size_t S = e.member.size(), M = e.metrics.size();
  for (std::size_t m = 0; m < M; ++m) {
    std::vector<double> column(S);
    for (std::size_t s = 0; s < S; ++s) column[s] = e.members[s * M + m];
    h5::write_doubles(file, g + "/members/" + e.metrics[m], column);
  }
  write_if_present(file, g + "/members/confusion", e.member_confusion);
  write_summary(file, g + "/member_mean", e.metrics, e.member_mean, e.member_mean_confusion);
  write_summary(file, g + "/member_std", e.metrics, e.member_std, {});
  if (e.per_group()) {
    h5::write_ints(file, g + "/members/n_samples", e.member_samples);
    h5::write_doubles(file, g + "/quantile_levels", std::vector<double>(kLevels, kLevels + 7));
    write_scores(file, g, "", e.metrics, {e.members, e.pooled, e.quantiles}, false);
    if (!e.original.empty()) write_scores(file, g + "/original", "", e.metrics, e.original, true);
    std::vector<std::string> kinds;
    for (const EvalRecord::Baseline& b : e.baselines) {
      kinds.push_back(b.kind);
      write_scores(file, g, baseline_prefix(b.kind), e.metrics, b.scores, true);
      if (!b.original.empty()) write_scores(file, g + "/original", baseline_prefix(b.kind), e.metrics, b.original, true);
    }
    if (!kinds.empty()) h5::write_strings(file, g + "/baselines", kinds);
  } else {
    write_summary(file, g + "/ensemble", e.metrics, e.ensemble, e.ensemble_confusion);
  }
  h5::write_ints(file, g + "/excluded_members", e.excluded);
  write_if_present(file, g + "/per_sample/ensemble", e.ensemble_prediction);
  write_if_present(file, g + "/per_sample/entropy", e.entropy);
  write_if_present(file, g + "/per_sample/mutual_information", e.mutual_information);
  write_if_present(file, g + "/per_sample/disagreement", e.disagreement);
}

std::vector<EvalRecord> read_evals(hid_t file) {
  std::vector<EvalRecord> all;
  if (!h5::exists(file, "/eval")) return all;
  for (const std::string& split : h5::list_group(file, "/eval")) all.push_back(read_eval(file, split));
  return all;
}

void write_selection(hid_t file, const std::string& g, const SelectionRecord& s) {
  if (!s.present()) return;
  {
    h5::Handle group = h5::create_group(file, g);
    h5::set_string_attr(group.get(), g, "select", s.method);
    h5::set_int_attr(group.get(), g, "k", s.k, H5T_STD_I32LE);
    h5::set_string_attr(group.get(), g, "metric", s.metric);
    h5::set_string_attr(group.get(), g, "split", s.split);
    h5::set_double_attr(group.get(), g, "value", s.value);
    group.close("group " + g);
  }
  h5::write_ints(file, g + "/member", s.member);
  h5::write_doubles(file, g + "/weight", s.weight);
}

SelectionRecord read_selection(hid_t file, const std::string& g) {
  SelectionRecord s;
  if (!h5::exists(file, g)) return s;
  {
    h5::Handle group = h5::open_group(file, g);
    s.method = h5::get_string_attr(group.get(), g, "select");
    s.k = static_cast<int>(h5::get_int_attr(group.get(), g, "k"));
    s.metric = h5::get_string_attr(group.get(), g, "metric");
    s.split = h5::get_string_attr(group.get(), g, "split");
    s.value = h5::get_double_attr(group.get(), g, "value");
  }
  s.member = h5::read_ints(file, g + "/member");
  s.weight = h5::read_doubles(file, g + "/weight");
  if (s.member.size() != s.weight.size() || s.member.empty())
    throw h5::Error(g + "/member and " + g + "/weight must name the same members, at least one");
  return s;
}

}  // namespace tn::io
