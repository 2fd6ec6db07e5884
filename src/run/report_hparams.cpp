// sec-hparams, sec-grid and sec-architectures of `turbanet report`: the headline metric of
// every member against each per-member hyperparameter (log axes for values spanning decades,
// the mean per value), a heat map for each pair of keys swept as a grid, and per architecture.
#include <algorithm>
#include <cmath>
#include <map>

#include "report/chart.h"
#include "report/markup.h"
#include "report/ticks.h"
#include "run/report_sections.h"

namespace tn {
namespace {

constexpr std::size_t kPoints = 3000;     // members drawn per scatter
constexpr std::size_t kGroupLine = 60;    // most distinct values that get a line of means
constexpr std::size_t kGridSide = 40;     // most distinct values per heat-map axis

// A member's horizontal offset within its category, the same on every page.
double jitter(int s) { return (static_cast<double>((s * 37) % 101) / 100.0 - 0.5) * 0.5; }

std::string point_title(const ReportView& v, int s, const std::string& key, const std::string& value) {
  return "member " + std::to_string(v.file->meta.first_member + s) + ": " + key + " = " + value + ", " + v.metric_name +
         " = " + report::value_text(v.member_metric(s));
}

// The mean metric per distinct value (finite members only).
std::map<double, std::pair<double, int>> means_by_value(const ReportView& v, const std::vector<double>& x) {
  std::map<double, std::pair<double, int>> g;
  for (int s = 0; s < v.S && s < static_cast<int>(x.size()); ++s)
    if (const double m = v.member_metric(s); std::isfinite(m) && std::isfinite(x[static_cast<std::size_t>(s)])) {
      auto& [sum, n] = g[x[static_cast<std::size_t>(s)]];
      sum += m;
      ++n;
    }
  return g;
}

std::string numeric_chart(const ReportView& v, const std::string& key, const std::vector<double>& x) {
  report::Chart c;
  c.title = v.metric_name + " against " + key;
  c.pad = true;
  c.x.label = key;
  c.x.log = report::wants_log_axis(x);
  c.y.label = v.metric_name;
  for (const std::size_t s : report::downsample(x.size(), kPoints))
    c.points.push_back({x[s], v.member_metric(static_cast<int>(s)), kTrainColour, false,
                        point_title(v, static_cast<int>(s), key, report::value_text(x[s]))});
  const auto g = means_by_value(v, x);
  if (g.size() <= kGroupLine && g.size() < x.size()) {
    report::Line l{{}, {}, kMeanColour, 2.2, 1, "mean per value", false};
    for (const auto& [value, sn] : g) l.x.push_back(value), l.y.push_back(sn.first / sn.second);
    c.lines.push_back(std::move(l));
  }
  if (v.best >= 0 && v.best < static_cast<int>(x.size()))
    c.points.push_back({x[static_cast<std::size_t>(v.best)], v.member_metric(v.best), kBestColour, true,
                        point_title(v, v.best, key, report::value_text(x[static_cast<std::size_t>(v.best)])) + " (best)"});
  return report::render(c);
}

// Metric by category (text values, architectures): a strip of members per category, the mean as x.
std::string category_chart(const ReportView& v, const std::string& key, const std::vector<std::string>& text) {
  std::vector<std::string> names;
  std::vector<int> index(text.size());
  for (std::size_t s = 0; s < text.size(); ++s) {
    auto it = std::find(names.begin(), names.end(), text[s]);
    index[s] = static_cast<int>(it - names.begin());
    if (it == names.end()) names.push_back(text[s]);
  }
  report::Chart c;
  c.title = v.metric_name + " by " + key;
  c.pad = true;
  c.x.label = key;
  c.x.categories = names;
  c.y.label = v.metric_name;
  c.width = std::max(640, static_cast<int>(names.size()) * 28 + 120);
  c.height = names.size() > 8 ? 420 : 340;
  std::vector<double> sum(names.size(), 0), n(names.size(), 0);
  for (const std::size_t s : report::downsample(text.size(), kPoints))
    c.points.push_back({index[s] + jitter(static_cast<int>(s)), v.member_metric(static_cast<int>(s)), kTrainColour, false,
                        point_title(v, static_cast<int>(s), key, text[s])});
  for (std::size_t s = 0; s < text.size(); ++s)
    if (const double m = v.member_metric(static_cast<int>(s)); std::isfinite(m))
      sum[static_cast<std::size_t>(index[s])] += m, n[static_cast<std::size_t>(index[s])] += 1;
  for (std::size_t i = 0; i < names.size(); ++i)
    if (n[i] > 0)
      c.points.push_back({static_cast<double>(i), sum[i] / n[i], kMeanColour, true,
                          names[i] + ": mean " + report::value_text(sum[i] / n[i]) + " over " + report::fixed(n[i], 0) + " members"});
  c.keys.push_back({"members", kTrainColour});
  c.keys.push_back({"mean (x)", kMeanColour});
  return report::render(c);
}

std::vector<double> distinct(const std::vector<double>& x) {
  std::vector<double> d(x);
  std::sort(d.begin(), d.end());
  d.erase(std::unique(d.begin(), d.end()), d.end());
  return d;
}

// The heat map of keys a (rows) and b (columns) when their values form a full grid; "" if not.
std::string grid_map(const ReportView& v, const std::string& ka, const std::vector<double>& a, const std::string& kb,
                     const std::vector<double>& b) {
  const std::vector<double> ra = distinct(a), rb = distinct(b);
  if (ra.size() < 2 || rb.size() < 2 || ra.size() > kGridSide || rb.size() > kGridSide) return "";
  if (ra.size() * rb.size() > a.size()) return "";
  std::vector<double> sum(ra.size() * rb.size(), 0), n(sum.size(), 0);
  std::vector<char> seen(sum.size(), 0);
  for (std::size_t s = 0; s < a.size() && s < b.size(); ++s) {
    const std::size_t i = static_cast<std::size_t>(std::lower_bound(ra.begin(), ra.end(), a[s]) - ra.begin());
    const std::size_t j = static_cast<std::size_t>(std::lower_bound(rb.begin(), rb.end(), b[s]) - rb.begin());
    seen[i * rb.size() + j] = 1;
    if (const double m = v.member_metric(static_cast<int>(s)); std::isfinite(m)) sum[i * rb.size() + j] += m, n[i * rb.size() + j] += 1;
  }
  if (std::find(seen.begin(), seen.end(), 0) != seen.end()) return "";  // not every pair: not a grid
  report::HeatMap h;
  h.title = "mean " + v.metric_name + " over the grid";
  h.y_label = ka;
  h.x_label = kb;
  for (const double x : ra) h.rows.push_back(report::tick_text(x));
  for (const double x : rb) h.cols.push_back(report::tick_text(x));
  for (std::size_t i = 0; i < sum.size(); ++i) h.values.push_back(n[i] > 0 ? sum[i] / n[i] : NAN);
  h.high_is_good = v.higher_better;
  return report::render(h);
}

}  // namespace

void add_hparam_sections(const ReportView& v, Sections& out) {
  const RunFile& f = *v.file;
  const MemberData& md = f.members;
  const bool architectures = !f.architectures.empty();
  const bool any = !md.hparams.empty() || (!md.hparam_text.empty() && !architectures);
  if (any && !v.eval) {
    out.push_back({"hparams", "Hyperparameters",
                   report::missing_note("No evaluation is stored, so there is no metric to draw against the "
                                        "hyperparameters: turbanet eval " + v.path + " --save test stores one.")});
    return;
  }
  if (any) {
    std::vector<std::string> charts;
    for (const auto& [key, x] : md.hparams) charts.push_back(numeric_chart(v, key, x));
    if (!architectures)
      for (const auto& [key, text] : md.hparam_text) charts.push_back(category_chart(v, key, text));
    std::string body = report::paragraph("The headline metric (" + v.metric_name + ", '" + v.eval->split +
                                         "') of every member against its own value of each per-member key.");
    if (f.search.type == "pbt")
      body += report::paragraph("Population-based training changed these values as it went: they are the ones "
                                "members started with; the PBT section follows them round by round.");
    out.push_back({"hparams", "Hyperparameters", body + report::figures(charts)});
  }
  if (v.eval) {
    std::vector<std::string> maps;
    for (std::size_t i = 0; i < md.hparams.size(); ++i)
      for (std::size_t j = i + 1; j < md.hparams.size() && maps.size() < 3; ++j) {
        std::string m = grid_map(v, md.hparams[i].first, md.hparams[i].second, md.hparams[j].first, md.hparams[j].second);
        if (!m.empty()) maps.push_back(std::move(m));
      }
    if (!maps.empty()) out.push_back({"grid", "Grid of two keys", report::figures(maps)});
  }
  if (!architectures) return;
  std::vector<std::string> arch(static_cast<std::size_t>(v.S));
  std::vector<std::vector<std::string>> rows;
  for (const ArchitectureParams& a : f.architectures) {
    double sum = 0, n = 0, best = NAN;
    int best_member = -1;
    for (const int g : a.members) {
      const int s = g - f.meta.first_member;
      if (s < 0 || s >= v.S) continue;
      arch[static_cast<std::size_t>(s)] = a.name;
      const double m = v.member_metric(s);
      if (!std::isfinite(m)) continue;
      sum += m, n += 1;
      if (best_member < 0 || (v.higher_better ? m > best : m < best)) best = m, best_member = g;
    }
    rows.push_back({a.name, std::to_string(a.members.size()), n > 0 ? report::value_text(sum / n) : "n/a",
                    best_member < 0 ? "n/a" : report::value_text(best) + " (member " + std::to_string(best_member) + ")"});
  }
  std::string body = report::table({"architecture", "members", "mean " + v.metric_name, "best"}, rows);
  if (v.eval) body += report::figures({category_chart(v, "architecture", arch)});
  else body += report::missing_note("No evaluation is stored: the metric per architecture is not known.");
  out.push_back({"architectures", "Architectures", body});
}

}  // namespace tn
