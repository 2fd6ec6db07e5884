// sec-halving and sec-pbt of `turbanet report`: what a search inside the swarm did, from
// /search. Halving: members training after each rung and how the members cut at each rung
// scored; PBT: who copied whom in each round, the perturbed values, the best member's lineage.
#include <algorithm>
#include <cmath>

#include "report/chart.h"
#include "report/markup.h"
#include "report/ticks.h"
#include "run/lineage.h"
#include "run/report_sections.h"

namespace tn {
namespace {

constexpr std::size_t kCopies = 3000;      // PBT copies drawn
constexpr std::size_t kValueMembers = 60;  // members whose perturbed values are drawn faint

void add_halving(const ReportView& v, Sections& out) {
  const SearchRecord& r = v.file->search;
  std::string body = report::paragraph("Successive halving by " + r.metric + ": at each rung the members that ranked "
                                       "worst stopped training.");
  if (r.epochs.empty()) {
    out.push_back({"halving", "Successive halving", body + report::missing_note("No rung has run yet (the run stopped "
                                                                                "before the first).")});
    return;
  }
  const std::vector<int> counts = halving_counts(r.epochs, r.rung, v.file->diverged_epoch);
  std::vector<std::vector<std::string>> rows;
  report::Chart c;
  c.title = "Members training";
  c.y.label = "members";
  c.y.integer = true;
  c.x.label = "";
  c.x.categories.push_back("start");
  c.bars.push_back({0, 0, static_cast<double>(counts.front()), kTrainColour, "start: " + std::to_string(counts.front())});
  for (std::size_t i = 0; i < r.epochs.size() && i + 1 < counts.size(); ++i) {
    const std::string name = "rung " + std::to_string(i + 1) + " (epoch " + std::to_string(r.epochs[i]) + ")";
    c.x.categories.push_back(name);
    c.bars.push_back({static_cast<double>(i + 1), static_cast<double>(i + 1), static_cast<double>(counts[i + 1]), kTrainColour,
                      name + ": " + std::to_string(counts[i + 1]) + " left"});
    rows.push_back({std::to_string(i + 1), std::to_string(r.epochs[i]), std::to_string(counts[i]),
                    std::to_string(counts[i] - counts[i + 1]), std::to_string(counts[i + 1])});
  }
  body += report::table({"rung", "after epoch", "training before", "stopped", "training after"}, rows);
  std::vector<std::string> charts = {report::render(c)};
  if (v.eval) {
    // The headline metric of the members by the rung that stopped them.
    report::Chart s;
    s.title = v.metric_name + " by the rung that stopped the member";
    s.y.label = v.metric_name;
    s.x.label = "stopped at";
    s.pad = true;
    for (std::size_t i = 0; i < r.epochs.size(); ++i) s.x.categories.push_back("rung " + std::to_string(i + 1));
    s.x.categories.push_back("trained to the end");
    const int R = static_cast<int>(r.epochs.size());
    for (int k = 0; k < v.S && k < static_cast<int>(r.rung.size()); ++k) {
      const int g = r.rung[static_cast<std::size_t>(k)] > 0 ? r.rung[static_cast<std::size_t>(k)] - 1 : R;
      s.points.push_back({g + (static_cast<double>((k * 37) % 101) / 100.0 - 0.5) * 0.5, v.member_metric(k),
                          g == R ? kBestColour : kTrainColour, false,
                          "member " + std::to_string(v.file->meta.first_member + k) + ": " + report::value_text(v.member_metric(k))});
    }
    charts.push_back(report::render(s));
  }
  body += report::figures(charts);
  out.push_back({"halving", "Successive halving", body});
}

void add_pbt(const ReportView& v, Sections& out) {
  const SearchRecord& r = v.file->search;
  const int S = v.S, R = static_cast<int>(r.epochs.size());
  std::string body = report::paragraph("Population-based training by " + r.metric + ": in each round the worst members "
                                       "copied a better member's state (exploit) and perturbed its values (explore).");
  if (R == 0 || r.source.size() != static_cast<std::size_t>(R) * static_cast<std::size_t>(S)) {
    out.push_back({"pbt", "Population-based training", body + report::missing_note("No round has run yet.")});
    return;
  }
  // Who copied whom: a segment from the source member at round r to the member at round r + 1.
  report::Chart c;
  c.title = "Copies per round (who copied whom)";
  c.x.label = "round";
  c.x.integer = c.y.integer = true;
  c.y.label = "member";
  c.height = 400;
  std::size_t copies = 0;
  std::vector<std::vector<std::string>> per_round;
  for (int q = 0; q < R; ++q) {
    int n = 0;
    for (int k = 0; k < S; ++k) {
      const int src = r.source[static_cast<std::size_t>(q) * S + k];
      if (src == k) continue;
      ++n;
      if (++copies <= kCopies) c.lines.push_back({{double(q), double(q + 1)}, {double(src), double(k)}, kTrainColour, 1, 0.35, "", false});
    }
    per_round.push_back({std::to_string(q + 1), std::to_string(r.epochs[static_cast<std::size_t>(q)]), std::to_string(n)});
  }
  const int best = v.best >= 0 ? v.best : 0;
  report::Line path{{}, {}, kBestColour, 2.5, 1, "lineage of member " + std::to_string(v.file->meta.first_member + best), false};
  std::vector<int> at(static_cast<std::size_t>(R) + 1);
  at[static_cast<std::size_t>(R)] = best;
  for (int q = R - 1; q >= 0; --q) at[static_cast<std::size_t>(q)] = r.source[static_cast<std::size_t>(q) * S + at[static_cast<std::size_t>(q) + 1]];
  for (int q = 0; q <= R; ++q) path.x.push_back(q), path.y.push_back(at[static_cast<std::size_t>(q)]);
  c.lines.push_back(std::move(path));
  std::vector<std::string> charts = {report::render(c)};
  // Each perturbed key over the rounds: faint members, the lineage's values bold.
  for (std::size_t key = 0; key < r.keys.size() && key < r.values.size(); ++key) {
    const std::vector<double>& x = r.values[key];
    if (x.size() != static_cast<std::size_t>(R + 1) * static_cast<std::size_t>(S)) continue;
    report::Chart k;
    k.title = r.keys[key] + " per round";
    k.x.label = "round";
    k.x.integer = true;
    k.y.label = r.keys[key];
    k.y.log = report::wants_log_axis(x);
    for (const std::size_t s : report::downsample(static_cast<std::size_t>(S), kValueMembers)) {
      report::Line l{{}, {}, kTrainColour, 0.8, 0.3, "", false};
      for (int q = 0; q <= R; ++q) l.x.push_back(q), l.y.push_back(x[static_cast<std::size_t>(q) * S + s]);
      k.lines.push_back(std::move(l));
    }
    report::Line l{{}, {}, kBestColour, 2.5, 1, "lineage of the best member", false};
    for (int q = 0; q <= R; ++q) l.x.push_back(q), l.y.push_back(x[static_cast<std::size_t>(q) * S + static_cast<std::size_t>(best)]);
    k.lines.push_back(std::move(l));
    charts.push_back(report::render(k));
  }
  body += report::figures(charts);
  if (copies > kCopies) body += report::paragraph("The first " + std::to_string(kCopies) + " of " + std::to_string(copies) + " copies are drawn.");
  body += "<h3>Rounds</h3>\n" + report::table({"round", "after epoch", "members that copied another"}, per_round);
  std::vector<std::vector<std::string>> lineage;
  for (const LineageStep& st : pbt_lineage(r, best, v.E)) {
    std::string values;
    for (std::size_t i = 0; i < st.values.size() && i < r.keys.size(); ++i)
      values += (i ? ", " : "") + r.keys[i] + " = " + report::value_text(st.values[i]);
    lineage.push_back({std::to_string(st.first_epoch) + "-" + std::to_string(st.last_epoch),
                       std::to_string(v.file->meta.first_member + st.member), values});
  }
  body += "<h3>Lineage of member " + std::to_string(v.file->meta.first_member + best) + (v.best >= 0 ? " (the best)" : "") +
          "</h3>\n" + report::table({"epochs", "state of member", "values"}, lineage);
  out.push_back({"pbt", "Population-based training", body});
}

}  // namespace

void add_search_section(const ReportView& v, Sections& out) {
  const SearchRecord& r = v.file->search;
  if (r.type == "halving") add_halving(v, out);
  else if (r.type == "pbt") add_pbt(v, out);
}

}  // namespace tn
