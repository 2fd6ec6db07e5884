// sec-metrics of `turbanet report`: the distribution of the members' final metrics, the best
// member, and the ensemble beside the members' mean, from the stored evaluation.
#include <algorithm>
#include <cmath>

#include "eval/by_hparam.h"
#include "report/chart.h"
#include "report/markup.h"
#include "run/report_sections.h"

namespace tn {
namespace {

// Metrics drawn as histograms: the headline one and the loss's, when stored.
std::vector<std::size_t> drawn_metrics(const ReportView& v) {
  std::vector<std::size_t> r;
  if (v.metric >= 0) r.push_back(static_cast<std::size_t>(v.metric));
  for (const char* name : {"log_loss", "mae", "r2", "f1_macro"})
    for (std::size_t i = 0; i < v.eval->metrics.size(); ++i)
      if (v.eval->metrics[i] == name && std::find(r.begin(), r.end(), i) == r.end() && r.size() < 3) r.push_back(i);
  return r;
}

std::vector<double> member_values(const EvalRecord& e, std::size_t m) {
  std::vector<double> x;
  const std::size_t M = e.metrics.size();
  for (std::size_t i = m; i < e.members.size(); i += M) x.push_back(e.members[i]);
  return x;
}

double median_of(std::vector<double> x) {
  x.erase(std::remove_if(x.begin(), x.end(), [](double a) { return !std::isfinite(a); }), x.end());
  if (x.empty()) return NAN;
  std::sort(x.begin(), x.end());
  const std::size_t n = x.size();
  return n % 2 ? x[n / 2] : (x[n / 2 - 1] + x[n / 2]) / 2;
}

// The local index of the best finite value, -1 if none.
int best_of(const std::vector<double>& x, bool higher) {
  int b = -1;
  for (std::size_t i = 0; i < x.size(); ++i)
    if (std::isfinite(x[i]) && (b < 0 || (higher ? x[i] > x[static_cast<std::size_t>(b)] : x[i] < x[static_cast<std::size_t>(b)])))
      b = static_cast<int>(i);
  return b;
}

double at(const std::vector<double>& x, std::size_t i) { return i < x.size() ? x[i] : NAN; }

}  // namespace

void add_metric_section(const ReportView& v, Sections& out) {
  if (!v.eval) {
    out.push_back({"metrics", "Final metrics",
                   report::missing_note("No evaluation is stored (a checkpoint or an interrupted run has none): "
                                        "turbanet eval " + v.path + " --save test stores one.")});
    return;
  }
  const EvalRecord& e = *v.eval;
  const int first = v.file->meta.first_member;
  std::string body = report::paragraph("Evaluation '" + e.split + "': " + e.source + ", " + std::to_string(e.n_samples) +
                                       " samples, ensemble rule " + e.combine + ".");
  std::string others;
  for (const EvalRecord& r : v.file->evals)
    if (&r != &e) others += (others.empty() ? "" : ", ") + r.split + " (" + r.source + ")";
  if (!others.empty()) body += report::paragraph("Also stored, not drawn: " + others + ".");
  const bool per_group = e.per_group();
  if (per_group)
    body += report::missing_note("One member per group (group_by): there is no ensemble across groups; 'pooled' "
                                 "scores every sample with its own group's member.");
  if (!e.excluded.empty())
    body += report::missing_note(std::to_string(e.excluded.size()) + " members are left out (non-finite predictions, "
                                 "diverged): their metrics are n/a.");
  std::vector<std::vector<std::string>> rows;
  for (std::size_t m = 0; m < e.metrics.size(); ++m) {
    const std::vector<double> x = member_values(e, m);
    const int b = best_of(x, higher_is_better(e.metrics[m]));
    rows.push_back({e.metrics[m], report::value_text(per_group ? at(e.pooled, m) : at(e.ensemble, m)),
                    report::value_text(at(e.member_mean, m)) + " ± " + report::value_text(at(e.member_std, m)),
                    report::value_text(median_of(x)),
                    b < 0 ? "n/a" : report::value_text(x[static_cast<std::size_t>(b)]) + " (member " + std::to_string(first + b) + ")"});
  }
  body += report::table({"metric", per_group ? "pooled" : "ensemble", "members' mean ± std", "members' median", "best member"},
                        rows);
  if (!e.original.empty()) {
    // group_by sequence runs whose model units are not the target's: the same in original units.
    const std::size_t M = e.metrics.size();
    std::vector<std::vector<std::string>> orig;
    for (std::size_t m = 0; m < M; ++m) {
      std::vector<double> x;
      for (std::size_t i = m; i < e.original.members.size(); i += M) x.push_back(e.original.members[i]);
      const int b = best_of(x, higher_is_better(e.metrics[m]));
      orig.push_back({e.metrics[m], report::value_text(at(e.original.pooled, m)), report::value_text(median_of(x)),
                      b < 0 ? "n/a" : report::value_text(x[static_cast<std::size_t>(b)]) + " (member " + std::to_string(first + b) + ")"});
    }
    body += "<h3>In the target's original units</h3>\n" +
            report::table({"metric", "pooled", "members' median", "best member"}, orig);
  }
  if (e.selection.present())
    body += report::paragraph("The ensemble is a selection: " + e.selection.method + " by " + e.selection.metric + " on the " +
                              e.selection.split + " split, " + std::to_string(e.selection.member.size()) + " members.");
  std::vector<std::string> charts;
  for (const std::size_t m : drawn_metrics(v)) {
    const std::vector<double> x = member_values(e, m);
    report::Chart c;
    c.title = e.metrics[m] + " of the members";
    c.x.label = e.metrics[m];
    c.y.label = "members";
    c.y.integer = true;
    c.bars = report::histogram(x, std::clamp(static_cast<int>(std::sqrt(static_cast<double>(x.size()))) + 1, 4, 40), kTrainColour);
    const double ens = per_group ? at(e.pooled, m) : at(e.ensemble, m);
    c.rules.push_back({true, ens, kEnsembleColour, per_group ? "pooled" : "ensemble", false});
    c.rules.push_back({true, at(e.member_mean, m), kMeanColour, "members' mean", true});
    const int b = best_of(x, higher_is_better(e.metrics[m]));
    if (b >= 0) c.rules.push_back({true, x[static_cast<std::size_t>(b)], kBestColour, "best member", true});
    charts.push_back(report::render(c));
  }
  body += report::figures(charts);
  out.push_back({"metrics", "Final metrics", body});
}

}  // namespace tn
