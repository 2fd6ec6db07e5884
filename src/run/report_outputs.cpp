// sec-classification, sec-regression and sec-series of `turbanet report`: the ensemble's
// predictions on the evaluated split against the truth, from the stored evaluation and
// predictions (confusion, reliability, uncertainty; predicted against actual, residuals,
// spread against error; each series with its forecast).
#include <algorithm>
#include <cmath>
#include <numeric>

#include "report/chart.h"
#include "report/markup.h"
#include "report/ticks.h"
#include "run/report_sections.h"

namespace tn {
namespace {

constexpr std::size_t kSamplePoints = 3000;  // samples drawn per scatter
constexpr int kEceBins = 15;                 // as eval/metrics.cpp's ECE
constexpr std::size_t kSeriesShown = 6;      // series drawn (the worst and best halves) when there are more
constexpr std::size_t kWindowPoints = 500;   // windows drawn per series

// The predictions stored for the evaluated split (or the test split), or null.
const Predictions* shown_predictions(const ReportView& v) {
  const RunFile& f = *v.file;
  if (v.eval)
    if (const Predictions* p = f.find_predictions(v.eval->split)) return p;
  if (const Predictions* p = f.find_predictions("test")) return p;
  return f.predictions.empty() ? nullptr : &f.predictions.front();
}

// The class labels [N] of the evaluated split: its stored targets, else the split's y.
std::vector<int> labels_of(const ReportView& v, std::size_t N) {
  std::vector<int> r;
  const Predictions* p = v.eval ? v.file->find_predictions(v.eval->split) : nullptr;
  const Array* y = p && p->targets.data.size() == N ? &p->targets : nullptr;
  for (const DataSplit& s : v.file->splits)
    if (!y && v.eval && s.name == v.eval->split && s.y.data.size() == N) y = &s.y;
  if (y)
    for (const float t : y->data) r.push_back(static_cast<int>(t));
  return r;
}

// Bars of two sets of values over shared bins: `a` on the left half of each bin, `b` on the right.
std::vector<report::Bar> paired_histogram(const std::vector<double>& a, const std::vector<double>& b, int bins) {
  double lo = INFINITY, hi = -INFINITY;
  for (const auto* x : {&a, &b})
    for (const double t : *x)
      if (std::isfinite(t)) lo = std::min(lo, t), hi = std::max(hi, t);
  if (!(hi >= lo)) return {};
  if (hi == lo) hi = lo + 1;
  const double w = (hi - lo) / bins;
  std::vector<report::Bar> bars;
  for (int side = 0; side < 2; ++side) {
    std::vector<double> n(static_cast<std::size_t>(bins), 0);
    for (const double t : side ? b : a)
      if (std::isfinite(t)) n[static_cast<std::size_t>(std::min(bins - 1, static_cast<int>((t - lo) / w)))] += 1;
    for (int i = 0; i < bins; ++i) {
      const double x0 = lo + i * w + (side ? w / 2 : 0);
      bars.push_back({x0, x0 + w / 2, n[static_cast<std::size_t>(i)], side ? kEnsembleColour : kTrainColour,
                      std::string(side ? "wrong" : "correct") + ", " + report::value_text(lo + i * w) + " to " +
                          report::value_text(lo + (i + 1) * w) + ": " + report::fixed(n[static_cast<std::size_t>(i)], 0)});
    }
  }
  return bars;
}

void add_classification(const ReportView& v, Sections& out) {
  const EvalRecord& e = *v.eval;
  std::string body;
  std::vector<std::string> charts;
  const Array& cm = e.ensemble_confusion;
  const std::size_t K = cm.shape.size() == 2 ? cm.shape[0] : 0;
  if (K > 0 && K <= 40) {
    report::HeatMap h;
    h.title = "Confusion matrix of the ensemble (counts)";
    h.y_label = "true class";
    h.x_label = "predicted class";
    for (std::size_t k = 0; k < K; ++k) {
      const std::string name = k < v.file->data.class_names.size() ? v.file->data.class_names[k] : std::to_string(k);
      h.rows.push_back(name), h.cols.push_back(name);
    }
    for (const float x : cm.data) h.values.push_back(x);
    h.digits = 6;
    charts.push_back(report::render(h));
  } else if (K > 40) {
    body += report::missing_note("The confusion matrix (" + std::to_string(K) + " classes) is too large to draw.");
  }
  const Array& P = e.ensemble_prediction;
  const std::size_t N = P.shape.size() == 2 ? P.shape[0] : 0, C = N ? P.shape[1] : 0;
  const std::vector<int> labels = labels_of(v, N);
  if (N == 0 || labels.size() != N) {
    body += report::missing_note("The ensemble's per-sample probabilities or the labels of '" + e.split +
                                 "' are not stored: no reliability diagram or uncertainty plots.");
    body += report::figures(charts);
    out.push_back({"classification", "Classification", body});
    return;
  }
  // Reliability: accuracy against confidence in 15 equal bins, as the ECE is computed.
  std::vector<double> count(kEceBins, 0), correct(kEceBins, 0), conf(kEceBins, 0);
  std::vector<char> right(N);
  for (std::size_t i = 0; i < N; ++i) {
    const float* p = P.data.data() + i * C;
    const auto k = static_cast<std::size_t>(std::max_element(p, p + C) - p);
    right[i] = static_cast<int>(k) == labels[i];
    const double c = p[k];
    if (!std::isfinite(c)) continue;
    const int b = std::clamp(static_cast<int>(std::ceil(c * kEceBins)) - 1, 0, kEceBins - 1);
    count[static_cast<std::size_t>(b)] += 1, correct[static_cast<std::size_t>(b)] += right[i], conf[static_cast<std::size_t>(b)] += c;
  }
  double ece = 0;
  report::Chart r;
  r.x.label = "confidence (probability of the predicted class)";
  r.y.label = "accuracy";
  r.diagonal = true;
  report::Line l{{}, {}, kTrainColour, 2, 1, "ensemble", false};
  for (std::size_t b = 0; b < count.size(); ++b) {
    if (count[b] == 0) continue;
    const double acc = correct[b] / count[b], mc = conf[b] / count[b];
    ece += count[b] / static_cast<double>(N) * std::fabs(acc - mc);
    l.x.push_back(mc), l.y.push_back(acc);
    r.points.push_back({mc, acc, kTrainColour, false,
                        report::fixed(count[b], 0) + " samples: confidence " + report::value_text(mc) + ", accuracy " +
                            report::value_text(acc)});
  }
  r.lines.push_back(std::move(l));
  r.title = "Reliability diagram (ECE " + report::value_text(ece) + ", 15 bins)";
  charts.push_back(report::render(r));
  // Uncertainty against correctness.
  const auto split_by_right = [&](const Array& u, const std::string& what) {
    if (u.data.size() != N) return;
    std::vector<double> ok, wrong;
    for (std::size_t i = 0; i < N; ++i) (right[i] ? ok : wrong).push_back(u.data[i]);
    report::Chart c;
    c.title = what + ": correct and wrong samples";
    c.x.label = what + " (nats)";
    c.y.label = "samples";
    c.bars = paired_histogram(ok, wrong, 20);
    c.keys = {{"correct (" + std::to_string(ok.size()) + ")", kTrainColour}, {"wrong (" + std::to_string(wrong.size()) + ")", kEnsembleColour}};
    charts.push_back(report::render(c));
  };
  split_by_right(e.entropy, "predictive entropy");
  split_by_right(e.mutual_information, "mutual information");
  if (e.entropy.data.size() == N) {
    // Accuracy on the most certain fraction of the samples (lowest entropy first).
    std::vector<std::size_t> order(N);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return e.entropy.data[a] < e.entropy.data[b]; });
    report::Chart c;
    c.title = "Accuracy when keeping the most certain samples";
    c.x.label = "fraction of samples kept (lowest entropy first)";
    c.y.label = "accuracy";
    report::Line acc{{}, {}, kTrainColour, 2, 1, "", false};
    double hits = 0;
    const std::vector<std::size_t> kept = report::downsample(N, 200);
    std::size_t next = 0;
    for (std::size_t i = 0; i < N; ++i) {
      hits += right[order[i]];
      if (next < kept.size() && kept[next] == i) {
        acc.x.push_back(static_cast<double>(i + 1) / static_cast<double>(N)), acc.y.push_back(hits / static_cast<double>(i + 1));
        ++next;
      }
    }
    c.lines.push_back(std::move(acc));
    charts.push_back(report::render(c));
  } else {
    body += report::missing_note("Per-sample entropy and mutual information are not stored for '" + e.split + "'.");
  }
  body += report::figures(charts);
  out.push_back({"classification", "Classification", body});
}

// Regression: one output's predictions, truths and spreads on the evaluated split.
struct Outputs {
  std::vector<double> pred, truth, spread;  // spread empty without an ensemble
  int outputs = 0;
};

Outputs regression_outputs(const Predictions& p) {
  Outputs o;
  const bool own = !p.member.empty();
  const Array& yhat = own ? (p.per_group_original.data.empty() ? p.per_group : p.per_group_original) : p.ensemble_mean;
  const Array& y = own && !p.targets_original.data.empty() ? p.targets_original : p.targets;
  if (yhat.shape.size() != 2 || yhat.shape[0] == 0) return o;
  const std::size_t N = yhat.shape[0], O = yhat.shape[1];
  if (y.data.size() != N * O) return o;
  o.outputs = static_cast<int>(O);
  for (std::size_t i = 0; i < N; ++i) {
    o.pred.push_back(yhat.data[i * O]), o.truth.push_back(y.data[i * O]);
    if (!own && p.ensemble_std.data.size() == N * O) o.spread.push_back(p.ensemble_std.data[i * O]);
  }
  return o;
}

void add_regression(const Predictions* p, Sections& out) {
  const Outputs o = p ? regression_outputs(*p) : Outputs{};
  if (o.pred.empty()) {
    out.push_back({"regression", "Regression",
                   report::missing_note("No predictions are stored for the evaluated split (output.predictions: none, "
                                        "or a checkpoint): no predicted-against-actual plots.")});
    return;
  }
  std::string body = report::paragraph("Split '" + p->split + "', " + std::to_string(o.pred.size()) + " samples" +
                                       (p->member.empty() ? ", the ensemble's mean." : ", each by its own group's member."));
  if (o.outputs > 1) body += report::missing_note("Of the " + std::to_string(o.outputs) + " outputs only the first is drawn.");
  const std::vector<std::size_t> shown = report::downsample(o.pred.size(), kSamplePoints);
  report::Chart a, r, s;
  a.title = "Predicted against actual";
  a.x.label = "actual";
  a.y.label = "predicted";
  a.diagonal = true;
  a.pad = true;
  r.title = "Residuals (predicted − actual)";
  r.x.label = "predicted";
  r.y.label = "residual";
  r.rules.push_back({false, 0, kMeanColour, "", true});
  r.pad = true;
  s.title = "Ensemble spread against its error";
  s.x.label = "ensemble std";
  s.y.label = "|error|";
  s.diagonal = true;
  s.pad = true;
  std::vector<double> residuals;
  for (const std::size_t i : shown) {
    const std::string tip = "sample " + std::to_string(i) + ": actual " + report::value_text(o.truth[i]) + ", predicted " +
                            report::value_text(o.pred[i]);
    a.points.push_back({o.truth[i], o.pred[i], kTrainColour, false, tip});
    r.points.push_back({o.pred[i], o.pred[i] - o.truth[i], kTrainColour, false, tip});
    if (!o.spread.empty()) s.points.push_back({o.spread[i], std::fabs(o.pred[i] - o.truth[i]), kTrainColour, false, tip});
  }
  for (std::size_t i = 0; i < o.pred.size(); ++i) residuals.push_back(o.pred[i] - o.truth[i]);
  report::Chart h;
  h.title = "Distribution of the residuals";
  h.x.label = "residual";
  h.y.label = "samples";
  h.bars = report::histogram(residuals, 30, kTrainColour);
  std::vector<std::string> charts = {report::render(a), report::render(r), report::render(h)};
  if (!o.spread.empty()) charts.push_back(report::render(s));
  else body += report::missing_note("No ensemble spread: each sample is predicted by one member (group_by) or the "
                                    "spread is not stored.");
  if (shown.size() < o.pred.size())
    body += report::paragraph(std::to_string(shown.size()) + " of " + std::to_string(o.pred.size()) +
                              " samples drawn in the scatter plots, evenly spaced; the histogram has all.");
  body += report::figures(charts);
  out.push_back({"regression", "Regression", body});
}

// One chart of a series: actual and forecast per window in split order, an optional band.
std::string series_chart(const std::string& title, const std::vector<double>& truth, const std::vector<double>& pred,
                         const std::vector<double>& spread) {
  report::Chart c;
  c.title = title;
  c.x.label = "window (split order)";
  c.y.label = "target";
  c.width = 640;
  c.height = 260;
  report::Line t{{}, {}, kMeanColour, 1.4, 1, "actual", false}, f{{}, {}, kTrainColour, 1.6, 1, "forecast", false};
  report::Band b{{}, {}, {}, kTrainColour, "ensemble ± 2 std"};
  for (const std::size_t i : report::downsample(truth.size(), kWindowPoints)) {
    const auto x = static_cast<double>(i);
    t.x.push_back(x), t.y.push_back(truth[i]), f.x.push_back(x), f.y.push_back(pred[i]);
    if (!spread.empty()) b.x.push_back(x), b.lo.push_back(pred[i] - 2 * spread[i]), b.hi.push_back(pred[i] + 2 * spread[i]);
  }
  if (!spread.empty()) c.bands.push_back(std::move(b));
  c.lines.push_back(std::move(t));
  c.lines.push_back(std::move(f));
  return report::render(c);
}

void add_series(const ReportView& v, const Predictions* p, Sections& out) {
  const Outputs o = p ? regression_outputs(*p) : Outputs{};
  if (o.pred.empty()) {
    out.push_back({"series", "Series", report::missing_note("No predictions are stored: no series to draw.")});
    return;
  }
  std::string body;
  std::vector<std::string> charts;
  if (p->member.empty()) {
    body += report::paragraph("Every window of split '" + p->split + "' in order, the ensemble's forecast with its band.");
    charts.push_back(series_chart("split " + p->split, o.truth, o.pred, o.spread));
  } else {
    // One member per series: its windows in split order; the worst and best by MAE when there are many.
    const int S = v.S, first = v.file->meta.first_member;
    std::vector<std::vector<std::size_t>> rows(static_cast<std::size_t>(S));
    for (std::size_t i = 0; i < p->member.size(); ++i)
      if (const int s = p->member[i] - first; s >= 0 && s < S) rows[static_cast<std::size_t>(s)].push_back(i);
    std::vector<std::pair<double, int>> mae;
    for (int s = 0; s < S; ++s) {
      double sum = 0;
      for (const std::size_t i : rows[static_cast<std::size_t>(s)]) sum += std::fabs(o.pred[i] - o.truth[i]);
      if (const double m = sum / static_cast<double>(rows[static_cast<std::size_t>(s)].size()); std::isfinite(m)) mae.push_back({m, s});
    }
    std::sort(mae.begin(), mae.end());
    std::vector<std::pair<double, int>> shown = mae;
    if (mae.size() > kSeriesShown) {
      shown.assign(mae.end() - kSeriesShown / 2, mae.end());
      shown.insert(shown.end(), mae.begin(), mae.begin() + kSeriesShown / 2);
      body += report::paragraph("The " + std::to_string(kSeriesShown / 2) + " series with the largest and the " +
                                std::to_string(kSeriesShown / 2) + " with the smallest MAE of the " +
                                std::to_string(mae.size()) + " (one member each, no ensemble band).");
    }
    for (const auto& [m, s] : shown) {
      std::vector<double> t, f;
      for (const std::size_t i : rows[static_cast<std::size_t>(s)]) t.push_back(o.truth[i]), f.push_back(o.pred[i]);
      const auto& names = v.file->members.group_names;
      const std::string name = static_cast<std::size_t>(s) < names.size() ? names[static_cast<std::size_t>(s)] : std::to_string(first + s);
      charts.push_back(series_chart("series " + name + " (member " + std::to_string(first + s) + "), MAE " + report::value_text(m), t, f, {}));
    }
  }
  body += report::figures(charts);
  out.push_back({"series", "Series", body});
}

}  // namespace

void add_output_sections(const ReportView& v, Sections& out) {
  const Predictions* p = shown_predictions(v);
  if (v.classification) {
    if (v.eval && !v.eval->per_group()) add_classification(v, out);
    else
      out.push_back({"classification", "Classification",
                     report::missing_note(v.eval ? "One member per group (group_by): there is no ensemble, so no "
                                                   "confusion matrix, reliability or uncertainty of one."
                                                 : "No evaluation is stored: no confusion matrix, reliability or "
                                                   "uncertainty.")});
  } else {
    add_regression(p, out);
  }
  if (v.file->data.seq_len > 0) add_series(v, p, out);
}

}  // namespace tn
