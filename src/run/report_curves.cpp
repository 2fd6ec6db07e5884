// sec-curves of `turbanet report`: every member's loss and accuracy per epoch drawn faint (a
// sample of them for large swarms), the members' mean and median bold over their 5-95 %
// range, the best member, and where members diverged or stopped.
#include <algorithm>
#include <cmath>
#include <string>

#include "math/quantile.h"
#include "report/chart.h"
#include "report/markup.h"
#include "report/ticks.h"
#include "run/report_sections.h"

namespace tn {
namespace {

constexpr std::size_t kEpochPoints = 300;  // points per drawn curve
constexpr std::size_t kFaintMembers = 60;  // member curves drawn faint
constexpr std::size_t kMarkers = 400;      // diverged or stopped marks per chart

// The members drawn faint: all, or kFaintMembers evenly spaced ones.
std::vector<std::size_t> faint_members(int S) { return report::downsample(static_cast<std::size_t>(S), kFaintMembers); }

// q-quantile of the finite values in `sorted` (math/quantile.h); NaN when there are none.
double quantile(const std::vector<double>& sorted, double q) { return sorted.empty() ? NAN : quantile_of_sorted(sorted, q); }

// Member s's last finite value of history h [S, E] at or before epoch index e, NaN if none.
double last_finite(const Array& h, int E, int s, int e) {
  for (; e >= 0; --e) {
    const float x = h.data[static_cast<std::size_t>(s) * static_cast<std::size_t>(E) + static_cast<std::size_t>(e)];
    if (std::isfinite(x)) return x;
  }
  return NAN;
}

std::string curve_chart(const ReportView& v, const Array& h, const std::string& title, const std::string& what,
                        const char* colour, bool loss, std::string& notes) {
  const RunFile& f = *v.file;
  const int S = static_cast<int>(h.shape[0]), E = static_cast<int>(h.shape[1]);
  const auto at = [&](int s, std::size_t e) { return static_cast<double>(h.data[static_cast<std::size_t>(s) * E + e]); };
  const std::vector<std::size_t> epochs = report::downsample(static_cast<std::size_t>(E), kEpochPoints);
  report::Chart c;
  c.title = title;
  c.x.label = "epoch";
  c.x.integer = true;
  c.y.label = what;
  report::Band band{{}, {}, {}, colour, "5-95 % of members"};
  report::Line mean{{}, {}, kMeanColour, 2.5, 1, "mean", false}, median{{}, {}, report::darker(colour), 2.5, 1, "median", true};
  std::vector<double> column, scale;
  for (const std::size_t e : epochs) {
    column.clear();
    double sum = 0;
    for (int s = 0; s < S; ++s)
      if (const double x = at(s, e); std::isfinite(x)) column.push_back(x), sum += x;
    const double x = static_cast<double>(e + 1);
    band.x.push_back(x), mean.x.push_back(x), median.x.push_back(x);
    mean.y.push_back(column.empty() ? NAN : sum / static_cast<double>(column.size()));
    std::sort(column.begin(), column.end());
    band.lo.push_back(quantile(column, 0.05));
    band.hi.push_back(quantile(column, 0.95));
    median.y.push_back(quantile(column, 0.5));
    scale.push_back(band.lo.back()), scale.push_back(band.hi.back());
  }
  c.y.log = loss && report::wants_log_axis(scale);
  const std::vector<std::size_t> faint = faint_members(S);
  const double opacity = std::clamp(6.0 / static_cast<double>(faint.size()), 0.08, 0.5);
  for (const std::size_t s : faint) {
    report::Line l{{}, {}, colour, 0.8, opacity, "", false};
    for (const std::size_t e : epochs) l.x.push_back(static_cast<double>(e + 1)), l.y.push_back(at(static_cast<int>(s), e));
    c.lines.push_back(std::move(l));
  }
  if (S > 1) c.bands.push_back(std::move(band));
  c.lines.push_back(std::move(mean));
  if (S > 2) c.lines.push_back(std::move(median));
  if (v.best >= 0 && v.best < S && S > 1) {
    report::Line b{{}, {}, kBestColour, 1.8, 1, "best member (" + std::to_string(f.meta.first_member + v.best) + ")", false};
    for (const std::size_t e : epochs) b.x.push_back(static_cast<double>(e + 1)), b.y.push_back(at(v.best, e));
    c.lines.push_back(std::move(b));
  }
  // Where members diverged (x at the epoch, at their last finite value) or stopped (dot).
  std::size_t diverged = 0, stopped = 0;
  for (int s = 0; s < S; ++s) {
    const int d = s < static_cast<int>(f.diverged_epoch.size()) ? f.diverged_epoch[static_cast<std::size_t>(s)] : -1;
    const int st = s < static_cast<int>(f.stopped_epoch.size()) ? f.stopped_epoch[static_cast<std::size_t>(s)] : -1;
    const std::string who = "member " + std::to_string(f.meta.first_member + s);
    if (d > 0 && ++diverged <= kMarkers)
      c.points.push_back({static_cast<double>(d), last_finite(h, E, s, std::min(d, E) - 1), kEnsembleColour, true,
                          who + " diverged in epoch " + std::to_string(d)});
    else if (st > 0 && st <= E && ++stopped <= kMarkers)
      c.points.push_back({static_cast<double>(st), last_finite(h, E, s, st - 1), "#555", false,
                          who + " stopped after epoch " + std::to_string(st)});
  }
  if (diverged) c.keys.push_back({"diverged (" + std::to_string(diverged) + ")", kEnsembleColour});
  if (stopped) c.keys.push_back({"stopped (" + std::to_string(stopped) + ")", "#555"});
  if (diverged > kMarkers || stopped > kMarkers)
    notes += "The first " + std::to_string(kMarkers) + " diverged and stopped members are marked in '" + title + "'. ";
  if (static_cast<int>(faint.size()) < S && notes.find("Faint curves") == std::string::npos)
    notes += "Faint curves: " + std::to_string(faint.size()) + " of the " + std::to_string(S) +
             " members, evenly spaced; the mean, median and 5-95 % band are over all of them. ";
  if (static_cast<int>(epochs.size()) < E && notes.find("epochs drawn") == std::string::npos)
    notes += std::to_string(epochs.size()) + " of " + std::to_string(E) + " epochs drawn, evenly spaced. ";
  return report::render(c);
}

bool has_history(const Array& h, int S) {
  return h.shape.size() == 2 && static_cast<int>(h.shape[0]) == S && h.shape[1] > 0 && h.data.size() == h.size();
}

}  // namespace

void add_curve_section(const ReportView& v, Sections& out) {
  const RunFile& f = *v.file;
  std::string body, notes;
  if (!has_history(f.train_loss, v.S)) {
    out.push_back({"curves", "Learning curves", report::missing_note("The run file holds no training history.")});
    return;
  }
  std::vector<std::string> loss, acc;
  loss.push_back(curve_chart(v, f.train_loss, "Training loss", "loss", kTrainColour, true, notes));
  if (has_history(f.val_loss, v.S))
    loss.push_back(curve_chart(v, f.val_loss, "Validation loss", "loss", kValColour, true, notes));
  else
    body += report::missing_note("No validation curves: the run has no validation split (data.split.val).");
  if (has_history(f.train_accuracy, v.S))
    acc.push_back(curve_chart(v, f.train_accuracy, "Training accuracy", "accuracy", kTrainColour, false, notes));
  if (has_history(f.val_accuracy, v.S))
    acc.push_back(curve_chart(v, f.val_accuracy, "Validation accuracy", "accuracy", kValColour, false, notes));
  if (f.meta.interrupted) body += report::missing_note("The curves end at epoch " + std::to_string(v.E) +
                                                       ", where training was interrupted.");
  body += report::figures(loss);
  if (!acc.empty()) body += report::figures(acc);
  if (!notes.empty()) body += report::paragraph(notes);
  out.push_back({"curves", "Learning curves", body});
}

}  // namespace tn
