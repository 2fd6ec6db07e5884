// Classification and regression metrics, accumulated in double precision.
#include "eval/metrics.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace tn {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

double ratio(double num, double den) { return den > 0 ? num / den : 0.0; }  // zero_division=0

// Precision, recall and F1, macro (mean over the classes that occur among the targets or the
// predictions) and micro (from counts summed over those classes).
void precision_recall_f1(const std::vector<double>& C, int K, std::vector<double>& out) {
  double macro_p = 0, macro_r = 0, macro_f = 0, tp_all = 0, fp_all = 0, fn_all = 0;
  int present = 0;
  for (int k = 0; k < K; ++k) {
    double row = 0, col = 0;
    for (int j = 0; j < K; ++j) {
      row += C[static_cast<std::size_t>(k) * K + j];
      col += C[static_cast<std::size_t>(j) * K + k];
    }
    if (row == 0 && col == 0) continue;
    const double tp = C[static_cast<std::size_t>(k) * K + k], fp = col - tp, fn = row - tp;
    ++present;
    macro_p += ratio(tp, tp + fp);
    macro_r += ratio(tp, tp + fn);
    macro_f += ratio(2 * tp, 2 * tp + fp + fn);
    tp_all += tp;
    fp_all += fp;
    fn_all += fn;
  }
  const double n = std::max(present, 1);
  out.insert(out.end(), {macro_p / n, macro_r / n, macro_f / n, ratio(tp_all, tp_all + fp_all),
                         ratio(tp_all, tp_all + fn_all), ratio(2 * tp_all, 2 * tp_all + fp_all + fn_all)});
}

// Bins (b/15, (b+1)/15], the first one closed at 0: ECE = Σ_b (n_b / N)·|accuracy_b − confidence_b|.
double expected_calibration_error(const float* P, const int* pred, const int* labels, int N, int K) {
  double count[kEceBins] = {}, correct[kEceBins] = {}, conf[kEceBins] = {};
  for (int i = 0; i < N; ++i) {
    const double c = P[static_cast<std::size_t>(i) * K + pred[i]];
    const int b = std::clamp(static_cast<int>(std::ceil(c * kEceBins)) - 1, 0, kEceBins - 1);
    count[b] += 1;
    correct[b] += pred[i] == labels[i];
    conf[b] += c;
  }
  double ece = 0;
  for (int b = 0; b < kEceBins; ++b)
    if (count[b] > 0) ece += std::abs(correct[b] - conf[b]) / N;
  return ece;
}

}  // namespace

const std::vector<std::string>& classification_metric_names() {
  static const std::vector<std::string> names = {
      "accuracy",       "precision_macro", "recall_macro", "f1_macro", "precision_micro",
      "recall_micro",   "f1_micro",        "log_loss",     "brier",    "ece"};
  return names;
}

const std::vector<std::string>& regression_metric_names() {
  static const std::vector<std::string> names = {"mse", "rmse", "mae", "r2"};
  return names;
}

int argmax(const float* p, int K) {
  int best = 0;
  for (int k = 1; k < K; ++k)
    if (p[k] > p[best]) best = k;
  return best;
}

Metrics classification_metrics(const float* P, const int* pred, const int* labels, int N, int K) {
  Metrics m;
  m.confusion.assign(static_cast<std::size_t>(K) * K, 0.0);
  if (N == 0) {
    m.values.assign(classification_metric_names().size(), kNaN);
    return m;
  }
  double correct = 0, log_loss = 0, brier = 0;
  for (int i = 0; i < N; ++i) {
    const float* p = P + static_cast<std::size_t>(i) * K;
    m.confusion[static_cast<std::size_t>(labels[i]) * K + pred[i]] += 1;
    correct += pred[i] == labels[i];
    log_loss -= std::log(std::max(static_cast<double>(p[labels[i]]), kLogLossEps));
    for (int k = 0; k < K; ++k) {
      const double d = p[k] - (k == labels[i] ? 1.0 : 0.0);
      brier += d * d;
    }
  }
  m.values.push_back(correct / N);
  precision_recall_f1(m.confusion, K, m.values);
  m.values.insert(m.values.end(), {log_loss / N, brier / N,
                                   expected_calibration_error(P, pred, labels, N, K)});
  return m;
}

Metrics regression_metrics(const float* Yhat, const float* Y, int N, int O) {
  Metrics m;
  if (N == 0) {
    m.values.assign(regression_metric_names().size(), kNaN);
    return m;
  }
  double sq = 0, abs_err = 0, r2 = 0;
  for (int o = 0; o < O; ++o) {
    double mean = 0, res = 0, tot = 0;
    for (int i = 0; i < N; ++i) mean += Y[static_cast<std::size_t>(i) * O + o];
    mean /= N;
    for (int i = 0; i < N; ++i) {
      const std::size_t at = static_cast<std::size_t>(i) * O + o;
      const double d = static_cast<double>(Yhat[at]) - Y[at], t = Y[at] - mean;
      res += d * d;
      tot += t * t;
      abs_err += std::abs(d);
    }
    sq += res;
    r2 += tot > 0 ? 1.0 - res / tot : (res == 0 ? 1.0 : 0.0);  // constant target: as scikit-learn
  }
  const double mse = sq / (static_cast<double>(N) * O);
  m.values = {mse, std::sqrt(mse), abs_err / (static_cast<double>(N) * O), r2 / O};
  return m;
}

}  // namespace tn
