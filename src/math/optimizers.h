// Optimizer updates for one parameter element, shared by the CPU and CUDA backends.
// Formulas follow PyTorch's torch.optim definitions (Adam with bias correction and eps
// outside the square root; AdamW with decoupled weight decay; SGD with optional
// momentum/Nesterov; RMSprop with optional momentum). Every optimizer keeps at most two
// state values per parameter, s1 and s2, zero-initialized.
#pragma once
#include <cmath>

#include "math/host_device.h"

namespace tn {

enum class OptimizerType { Sgd, Adam, AdamW, RmsProp };

const char* to_string(OptimizerType o);
inline int optimizer_state_slots(OptimizerType o) {
  switch (o) {
    case OptimizerType::Sgd: return 1;  // momentum buffer
    default: return 2;
  }
}

// Scalars of one update step for one member (the learning rate after the schedule, and
// the bias corrections 1 − β^t of step t ≥ 1).
struct OptStep {
  float lr, beta1, beta2, eps, weight_decay, momentum, alpha;
  float bias_correction1, bias_correction2;
  bool nesterov;
  bool skip = false;  // the member takes no step now (its data is exhausted for this epoch)
  float l1 = 0.0f;    // L1 penalty: l1·sign(p) is added to the gradient (every optimizer)
};

// Divergence isolation: a member whose loss summed over the epoch so far (this step's batch
// included) is not finite is frozen at this step: it takes neither this update nor any later
// one (`frozen`, kept across epochs, says so). Its parameters and optimizer state stay those
// of the step before. x − x is 0 exactly for finite x (NaN for ±inf and NaN), on every target.
TN_HD bool frozen_member(double loss_sum, int& frozen) {
  if (!(loss_sum - loss_sum == 0.0)) frozen = 1;
  return frozen != 0;
}

// Gradient-norm clipping factor (PyTorch's clip_grad_norm_): min(1, clip / (‖g‖ + 1e-6)).
TN_HD float clip_scale(float clip, double norm2) {
  const float coef = clip / (static_cast<float>(sqrt(norm2)) + 1e-6f);
  return coef < 1.0f ? coef : 1.0f;
}

// Square root and sign (−1, 0, 1) of the value type update_param runs on (float here; a
// vector type's kernel passes its own).
struct FloatSqrt {
  TN_HD float operator()(float x) const { return sqrtf(x); }
  TN_HD float sign(float x) const { return x > 0.0f ? 1.0f : (x < 0.0f ? -1.0f : 0.0f); }
};

// One optimizer step on one parameter, or on a vector of them (T a SIMD vector type with its
// square root `sqrt`, as the CPU lane kernel uses): the same operations either way, so the
// same results.
//
// The L1 penalty comes first, as PyTorch users write it (loss + l1·Σ|p|, whose subgradient
// l1·sign(p) joins the gradient), for every optimizer, AdamW included (it is not decoupled).
// Here it is added after gradient clipping, like weight_decay: with grad_clip, the clipped
// norm does not include it.
template <OptimizerType O, class T = float, class Sqrt = FloatSqrt>
TN_HD void update_param(T& p, T g, T& s1, T& s2, const OptStep& h, Sqrt sqrt_of = {}) {
  g += h.l1 * sqrt_of.sign(p);  // unconditional: a branch here changed how the compiler fused
                                // the clipped gradient's multiply-adds, path by path
  if constexpr (O == OptimizerType::Sgd) {
    g += h.weight_decay * p;
    if (h.momentum != 0.0f) {
      s1 = h.momentum * s1 + g;
      g = h.nesterov ? g + h.momentum * s1 : s1;
    }
    p -= h.lr * g;
  } else if constexpr (O == OptimizerType::Adam || O == OptimizerType::AdamW) {
    if constexpr (O == OptimizerType::AdamW) p -= h.lr * h.weight_decay * p;
    else g += h.weight_decay * p;
    s1 = h.beta1 * s1 + (1.0f - h.beta1) * g;
    s2 = h.beta2 * s2 + (1.0f - h.beta2) * g * g;
    // PyTorch's arrangement: p -= (lr / bc1) · m / (√v / √bc2 + eps). The two step scalars
    // are loop-invariant (computed once per call), leaving one square root and one division
    // per parameter instead of three divisions.
    const float step_size = h.lr / h.bias_correction1;
    const float inv_sqrt_bc2 = 1.0f / sqrtf(h.bias_correction2);
    p -= step_size * s1 / (sqrt_of(s2) * inv_sqrt_bc2 + h.eps);
  } else if constexpr (O == OptimizerType::RmsProp) {
    g += h.weight_decay * p;
    s1 = h.alpha * s1 + (1.0f - h.alpha) * g * g;
    const T step = g / (sqrt_of(s1) + h.eps);
    if (h.momentum != 0.0f) {
      s2 = h.momentum * s2 + step;
      p -= h.lr * s2;
    } else {
      p -= h.lr * step;
    }
  }
}

template <class F>
decltype(auto) dispatch_optimizer(OptimizerType o, F&& f) {
  switch (o) {
    case OptimizerType::Sgd: return f.template operator()<OptimizerType::Sgd>();
    case OptimizerType::AdamW: return f.template operator()<OptimizerType::AdamW>();
    case OptimizerType::RmsProp: return f.template operator()<OptimizerType::RmsProp>();
    case OptimizerType::Adam: break;
  }
  return f.template operator()<OptimizerType::Adam>();
}

}  // namespace tn
