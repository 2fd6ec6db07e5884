// Ensemble predictions and per-sample uncertainty from the members' outputs.
#include "eval/combine.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "eval/metrics.h"

namespace tn {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

bool all_finite(const std::vector<float>& v, std::size_t begin, std::size_t n) {
  for (std::size_t i = begin; i < begin + n; ++i)
    if (!std::isfinite(v[i])) return false;
  return true;
}

// Entropy in nats of a distribution over K classes (0·log 0 = 0).
template <class T>
double entropy(const T* p, int K) {
  double h = 0;
  for (int k = 0; k < K; ++k)
    if (p[k] > 0) h -= static_cast<double>(p[k]) * std::log(static_cast<double>(p[k]));
  return h;
}

// Member s's weight in the ensemble (1 without weights), and the used members' total.
double weight_of(const std::vector<double>* w, int s) { return w ? (*w)[static_cast<std::size_t>(s)] : 1.0; }
double total_weight(const std::vector<double>* w, const std::vector<int>& used) {
  double t = 0;
  for (int s : used) t += weight_of(w, s);
  return t;
}

// softmax (cross_entropy) or (1 − σ, σ) (bce) of the used members' mean logit on sample i.
void mean_logit_probs(const SwarmPredictions& p, LossType loss, const std::vector<int>& used,
                      const std::vector<double>* w, int i, float* out) {
  std::vector<double> z(p.O, 0.0);
  const double total = total_weight(w, used);
  for (int s : used)
    for (int o = 0; o < p.O; ++o)
      z[o] += weight_of(w, s) * p.logits[(static_cast<std::size_t>(s) * p.N + i) * p.O + o] / total;
  if (loss == LossType::Bce) {
    const double one = 1.0 / (1.0 + std::exp(-z[0]));
    out[0] = static_cast<float>(1.0 - one);
    out[1] = static_cast<float>(one);
    return;
  }
  const double mx = *std::max_element(z.begin(), z.end());
  double sum = 0;
  for (double& v : z) sum += v = std::exp(v - mx);
  for (int o = 0; o < p.O; ++o) out[o] = static_cast<float>(z[o] / sum);
}

void combine_regression(const SwarmPredictions& p, const std::vector<double>* w, Combined& c) {
  if (c.used.empty()) return;
  const std::size_t per = static_cast<std::size_t>(p.N) * p.O;
  const double total = total_weight(w, c.used);
  for (std::size_t i = 0; i < per; ++i) {
    double sum = 0;
    for (int s : c.used) sum += weight_of(w, s) * p.outputs[s * per + i];
    c.prediction[i] = static_cast<float>(sum / total);
  }
}

void combine_classes(const SwarmPredictions& p, LossType loss, Combine how, const std::vector<double>* w, Combined& c) {
  const int K = c.K, N = p.N;
  c.label.assign(N, 0);
  c.entropy.assign(N, kNaN);
  c.mutual_information.assign(N, kNaN);
  c.disagreement.assign(N, kNaN);
  if (c.used.empty()) return;
  std::vector<std::vector<float>> probs;
  for (int s : c.used) probs.push_back(class_probabilities(p, loss, s));
  const double U = total_weight(w, c.used);
  std::vector<double> mean(K), votes(K);
  std::vector<int> member_class(c.used.size());
  for (int i = 0; i < N; ++i) {
    std::fill(mean.begin(), mean.end(), 0.0);
    std::fill(votes.begin(), votes.end(), 0.0);
    double member_entropy = 0;
    for (std::size_t u = 0; u < probs.size(); ++u) {
      const double wu = weight_of(w, c.used[u]);
      const float* q = probs[u].data() + static_cast<std::size_t>(i) * K;
      for (int k = 0; k < K; ++k) mean[k] += wu * q[k];
      member_class[u] = argmax(q, K);
      votes[member_class[u]] += wu;
      member_entropy += wu * entropy(q, K);
    }
    for (int k = 0; k < K; ++k) {  // sums first, then one division, as ensemble_mean_std
      mean[k] /= U;
      votes[k] /= U;
    }
    member_entropy /= U;
    float* out = c.prediction.data() + static_cast<std::size_t>(i) * K;
    if (how == Combine::MeanLogit) {
      mean_logit_probs(p, loss, c.used, w, i, out);
    } else {
      for (int k = 0; k < K; ++k) out[k] = static_cast<float>(how == Combine::Vote ? votes[k] : mean[k]);
    }
    int label = argmax(out, K);
    if (how == Combine::Vote)  // ties between the most voted classes go to the larger mean probability
      for (int k = 0; k < K; ++k)
        if (votes[k] == votes[label] && mean[k] > mean[label]) label = k;
    c.label[i] = label;
    const double h = entropy(mean.data(), K);
    c.entropy[i] = static_cast<float>(h);
    c.mutual_information[i] = static_cast<float>(std::max(0.0, h - member_entropy));
    double differ = 0;
    for (std::size_t u = 0; u < member_class.size(); ++u)
      if (member_class[u] != label) differ += weight_of(w, c.used[u]);
    c.disagreement[i] = static_cast<float>(differ / U);
  }
}

}  // namespace

const char* to_string(Combine c) {
  switch (c) {
    case Combine::MeanProb: return "mean_prob";
    case Combine::Vote: return "vote";
    case Combine::MeanLogit: return "mean_logit";
  }
  return "?";
}

SwarmPredictions member_subset(const SwarmPredictions& p, const std::vector<int>& members) {
  SwarmPredictions kept;
  kept.S = static_cast<int>(members.size());
  kept.N = p.N;
  kept.O = p.O;
  const std::size_t per = static_cast<std::size_t>(p.N) * p.O;
  for (int s : members) {
    const auto at = static_cast<std::ptrdiff_t>(static_cast<std::size_t>(s) * per);
    kept.outputs.insert(kept.outputs.end(), p.outputs.begin() + at, p.outputs.begin() + at + static_cast<std::ptrdiff_t>(per));
    if (!p.logits.empty())
      kept.logits.insert(kept.logits.end(), p.logits.begin() + at, p.logits.begin() + at + static_cast<std::ptrdiff_t>(per));
  }
  return kept;
}

int num_classes(LossType loss, int O) {
  if (loss == LossType::CrossEntropy) return O;
  return loss == LossType::Bce ? 2 : 0;
}

std::vector<float> class_probabilities(const SwarmPredictions& p, LossType loss, int s) {
  const std::size_t per = static_cast<std::size_t>(p.N) * p.O;
  const auto begin = p.outputs.begin() + static_cast<std::ptrdiff_t>(s * per);
  if (loss != LossType::Bce) return std::vector<float>(begin, begin + static_cast<std::ptrdiff_t>(per));
  std::vector<float> q(static_cast<std::size_t>(p.N) * 2);
  for (int i = 0; i < p.N; ++i) {
    q[2 * i] = 1.0f - begin[i];
    q[2 * i + 1] = begin[i];
  }
  return q;
}

Combined combine(const SwarmPredictions& p, LossType loss, Combine how, const std::vector<double>* weights) {
  Combined c;
  const bool classification = is_classification(loss);
  c.K = num_classes(loss, p.O);
  c.width = classification ? c.K : p.O;
  const std::size_t per = static_cast<std::size_t>(p.N) * p.O;
  const bool logits = classification && how == Combine::MeanLogit;
  for (int s = 0; s < p.S; ++s) {
    if (weights && !(weight_of(weights, s) > 0)) continue;
    const bool finite = all_finite(p.outputs, s * per, per) && (!logits || all_finite(p.logits, s * per, per));
    (finite ? c.used : c.excluded).push_back(s);
  }
  c.prediction.assign(static_cast<std::size_t>(p.N) * c.width, kNaN);
  if (classification) combine_classes(p, loss, how, weights, c);
  else combine_regression(p, weights, c);
  return c;
}

}  // namespace tn
