// Loss functions over one sample's outputs, with the gradient w.r.t. the model outputs.
// Shared by the CPU and CUDA backends. Per-member losses are means over the batch: the
// caller scales gradients by 1/B; nothing here couples members.
#pragma once
#include <cmath>

#include "math/hd.h"
#include "math/scalar.h"

namespace tn {

enum class LossType { CrossEntropy, Bce, Mse, Mae, Huber };

const char* to_string(LossType l);
inline bool is_classification(LossType l) { return l == LossType::CrossEntropy || l == LossType::Bce; }

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
