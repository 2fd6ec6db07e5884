// Loss functions over one sample's outputs, with the gradient w.r.t. the model outputs.
// Shared by the CPU and CUDA backends. Per-member losses are means over the batch: the
// caller scales gradients by 1/B (or, with class weights, by w[y]/Σw); nothing here couples
// members.
#pragma once
#include <cmath>
#include <vector>

#include "math/host_device.h"
#include "math/scalar.h"

namespace tn {

enum class LossType { CrossEntropy, Bce, Mse, Mae, Huber };

const char* to_string(LossType l);
inline bool is_classification(LossType l) { return l == LossType::CrossEntropy || l == LossType::Bce; }

// A loss and its parameters (the config's `loss:` section).
struct LossConfig {
  LossType type = LossType::CrossEntropy;
  float huber_delta = 1.0f;
  // cross_entropy: class weights as given ([O], empty = none), or `balanced` (fitted on the
  // training split by the trainer: n_samples / (n_classes · count_c)).
  std::vector<double> class_weights;
  bool balanced = false;
  // bce: PyTorch's pos_weight, one per output or one for all ([1] or [O]; empty = none).
  std::vector<double> pos_weight;
  // What the ops read: a device array [O] of the resolved class weights (cross_entropy) or
  // pos_weight per output (bce); null = unweighted. Set by the trainer, never by the config.
  const float* weights = nullptr;
  bool weighted() const { return balanced || !class_weights.empty() || !pos_weight.empty(); }
};

// Cross-entropy with class weights w (PyTorch's CrossEntropyLoss(weight=w), mean
// reduction): a member's batch loss is Σ_b w[y_b]·l_b / Σ_b w[y_b] over its valid rows, so
// dL/dz_b = w[y_b]·(softmax − one-hot) / Σ w. This is the denominator, over `valid` rows of
// labels Y (one per row); a batch whose weights sum to 0 gives loss 0 and no gradient.
TN_HD float xent_weight_sum(const float* w, const float* Y, int valid) {
  float sum = 0.0f;
  for (int b = 0; b < valid; ++b) sum += w[static_cast<int>(Y[b])];
  return sum;
}

// Sample b's factors under class weights with denominator wsum over `valid` rows: its
// gradient is scaled by *gscale (w[y]/Σw, instead of 1/valid) and its loss by *lscale
// (w[y]·valid/Σw), so the member's loss sum over the batch is valid · the weighted mean and
// sums over batches divided by the samples seen stay means, as without weights.
TN_HD void xent_weight_scales(float wy, float wsum, int valid, float* gscale, float* lscale) {
  *gscale = wsum > 0.0f ? wy / wsum : 0.0f;
  *lscale = wsum > 0.0f ? wy * (static_cast<float>(valid) / wsum) : 0.0f;
}

// Softmax cross-entropy with an integer label over `n` logits. Writes dL/dz into `grad`
// (softmax − one-hot) and returns the loss; *argmax gets the predicted class.
template <class T>
TN_HD T softmax_xent(const T* z, int n, int label, T* grad, int* argmax) {
  T mx = z[0];
  int best = 0;
  for (int j = 1; j < n; ++j)
    if (z[j] > mx) { mx = z[j]; best = j; }
  T sum = T(0);
  for (int j = 0; j < n; ++j) {
    grad[j] = m_exp(z[j] - mx);
    sum += grad[j];
  }
  const T inv = T(1) / sum;
  for (int j = 0; j < n; ++j) grad[j] *= inv;
  grad[label] -= T(1);
  *argmax = best;
  return m_log(sum) + mx - z[label];
}

// Binary cross-entropy on a logit z with target y in [0, 1], computed stably:
// L = max(z,0) − z·y + log(1 + e^{−|z|}); dL/dz = σ(z) − y.
template <class T>
TN_HD T bce_logit(T z, T y, T* grad) {
  *grad = T(1) / (T(1) + m_exp(-z)) - y;
  return m_max(z, T(0)) - z * y + m_log1p(m_exp(-m_abs(z)));
}

// BCEWithLogitsLoss with pos_weight p (PyTorch): L = −[p·y·log σ(z) + (1 − y)·log(1 − σ(z))],
// computed as PyTorch does: (1 − y)·z + (1 + (p − 1)·y)·(log(1 + e^{−|z|}) + max(−z, 0));
// dL/dz = σ(z)·(1 + (p − 1)·y) − p·y. p = 1 is bce_logit.
template <class T>
TN_HD T bce_logit_pos(T z, T y, T p, T* grad) {
  const T lw = (p - T(1)) * y + T(1);
  *grad = lw / (T(1) + m_exp(-z)) - p * y;
  return (T(1) - y) * z + lw * (m_log1p(m_exp(-m_abs(z))) + m_max(-z, T(0)));
}

// Regression losses on one output; the per-sample loss is the mean over outputs.
template <class T>
TN_HD T mse_elem(T p, T y, T* grad) {
  const T d = p - y;
  *grad = T(2) * d;
  return d * d;
}
template <class T>
TN_HD T mae_elem(T p, T y, T* grad) {
  const T d = p - y;
  *grad = d > T(0) ? T(1) : (d < T(0) ? T(-1) : T(0));
  return m_abs(d);
}
// Huber with threshold delta (PyTorch's HuberLoss): ½d² if |d| ≤ δ, else δ(|d| − ½δ).
template <class T>
TN_HD T huber_elem(T p, T y, T delta, T* grad) {
  const T d = p - y;
  const T ad = m_abs(d);
  if (ad <= delta) {
    *grad = d;
    return T(0.5) * d * d;
  }
  *grad = d > T(0) ? delta : -delta;
  return delta * (ad - T(0.5) * delta);
}

// One sample's loss: outputs z[O] against y (a class label for cross_entropy, else O
// values), the mean over outputs for regression. When G, writes dL/dz (not yet divided by
// the batch size) into g[O]; cross_entropy needs g as softmax scratch even without G. Adds
// the sample's correct fraction to *correct. pw: bce's pos_weight per output (null: none);
// cross_entropy's class weights are applied by the caller (xent_weight_scales). Used by
// every backend's loss ops.
template <LossType L, bool G>
TN_HD float sample_loss(float delta, const float* pw, int O, const float* z, const float* y, float* g,
                        double* correct) {
  float buf[1];
  if constexpr (L == LossType::CrossEntropy) {
    int argmax = 0;
    const int label = static_cast<int>(y[0]);
    const float l = softmax_xent(z, O, label, g, &argmax);
    *correct += argmax == label ? 1.0 : 0.0;
    return l;
  } else {
    float total = 0.0f;
    for (int j = 0; j < O; ++j) {
      float* gj = G ? g + j : buf;
      float l;
      if constexpr (L == LossType::Bce) {
        l = pw ? bce_logit_pos(z[j], y[j], pw[j], gj) : bce_logit(z[j], y[j], gj);
        *correct += ((z[j] > 0.0f) == (y[j] > 0.5f)) ? 1.0 / O : 0.0;
      } else if constexpr (L == LossType::Mse) {
        l = mse_elem(z[j], y[j], gj);
      } else if constexpr (L == LossType::Mae) {
        l = mae_elem(z[j], y[j], gj);
      } else {
        l = huber_elem(z[j], y[j], delta, gj);
      }
      total += l;
    }
    if (G && O > 1) {
      const float inv = 1.0f / static_cast<float>(O);
      for (int j = 0; j < O; ++j) g[j] *= inv;
    }
    return total / static_cast<float>(O);
  }
}

// Calls f.template operator()<L>() with the loss as a compile-time constant, so kernels
// switch once per op and not once per sample.
template <class F>
decltype(auto) dispatch_loss(LossType l, F&& f) {
  switch (l) {
    case LossType::Bce: return f.template operator()<LossType::Bce>();
    case LossType::Mse: return f.template operator()<LossType::Mse>();
    case LossType::Mae: return f.template operator()<LossType::Mae>();
    case LossType::Huber: return f.template operator()<LossType::Huber>();
    case LossType::CrossEntropy: break;
  }
  return f.template operator()<LossType::CrossEntropy>();
}

}  // namespace tn
