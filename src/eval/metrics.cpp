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

// The samples by score P[:, 1], highest first, and the number labelled 1.
std::vector<int> by_score_descending(const float* P, int N, const int* labels, int& positives) {
  std::vector<int> order(N);
  positives = 0;
  for (int i = 0; i < N; ++i) {
    order[i] = i;
    positives += labels[i] == 1;
  }
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return P[2 * a + 1] > P[2 * b + 1]; });
  return order;
}

// Walks the distinct scores from the highest down: visit(threshold, tp, fp) with the counts of
// samples scoring at least the threshold.
template <class Visit>
void for_each_threshold(const float* P, const int* labels, const std::vector<int>& order, Visit visit) {
  double tp = 0, fp = 0;
  for (std::size_t k = 0; k < order.size();) {
    const float t = P[2 * order[k] + 1];
    for (; k < order.size() && P[2 * order[k] + 1] == t; ++k) (labels[order[k]] == 1 ? tp : fp) += 1;
    visit(t, tp, fp);
  }
}

// Area under the ROC curve: the Mann-Whitney statistic with tied scores at half weight.
double roc_auc(const float* P, const int* labels, int N) {
  int positives = 0;
  const std::vector<int> order = by_score_descending(P, N, labels, positives);
  const double negatives = N - positives;
  if (positives == 0 || negatives == 0) return kNaN;
  // Trapezoids between consecutive points (fp, tp) of the curve, as scikit-learn's auc(); a
  // run of tied scores is one point, so a tie counts half.
  double area = 0, last_tp = 0, last_fp = 0;
  for_each_threshold(P, labels, order, [&](float, double tp, double fp) {
    area += (fp - last_fp) * (tp + last_tp) / 2;
    last_tp = tp;
    last_fp = fp;
  });
  return area / (positives * negatives);
}

// Average precision: sum over the distinct thresholds of (R_k - R_{k-1}) * P_k.
double average_precision(const float* P, const int* labels, int N) {
  int positives = 0;
  const std::vector<int> order = by_score_descending(P, N, labels, positives);
  if (positives == 0) return kNaN;
  double ap = 0, last_recall = 0;
  for_each_threshold(P, labels, order, [&](float, double tp, double fp) {
    const double recall = tp / positives;
    ap += (recall - last_recall) * (tp / (tp + fp));
    last_recall = recall;
  });
  return ap;
}

}  // namespace

const std::vector<std::string>& classification_metric_names(int K) {
  static const std::vector<std::string> names = {
      "accuracy",       "precision_macro", "recall_macro", "f1_macro", "precision_micro",
      "recall_micro",   "f1_micro",        "log_loss",     "brier",    "ece"};
  static const std::vector<std::string> binary = [] {
    std::vector<std::string> b = names;
    b.insert(b.end(), {"roc_auc", "pr_auc", "f1_positive"});
    return b;
  }();
  return K == 2 ? binary : names;
}

double f1_threshold(const float* P, const int* labels, int N) {
  int positives = 0;
  const std::vector<int> order = by_score_descending(P, N, labels, positives);
  if (positives == 0) return 0.5;
  double best_f1 = -1, best = 0.5;
  for_each_threshold(P, labels, order, [&](float t, double tp, double fp) {
    const double f1 = 2 * tp / (tp + fp + positives);
    if (f1 >= best_f1) {  // lower thresholds come later: >= keeps the lowest of equal F1s
      best_f1 = f1;
      best = t;
    }
  });
  return best;
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
    m.values.assign(classification_metric_names(K).size(), kNaN);
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
  if (K == 2) {
    const double tp = m.confusion[3], fp = m.confusion[1], fn = m.confusion[2];
    m.values.insert(m.values.end(), {roc_auc(P, labels, N), average_precision(P, labels, N), ratio(2 * tp, 2 * tp + fp + fn)});
  }
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
