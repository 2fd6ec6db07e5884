// The CPU backend's dense-layer ops (cpu_ops.h): bias and activation, their gradients, the
// losses, output transforms, gradient norms and the optimizer step. Plain loops templated on
// the activation, loss and optimizer so the inner loops carry no branches on configuration,
// compiled once for every SIMD target (foreach_target). The math/ functions they call are
// always inlined, so they are compiled for the target too (with its fused multiply-adds,
// as in the lane kernel); the optimizer step is the lane kernel's own, on vectors.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "backend/cpu/ops/dense.cpp"
#include <hwy/foreach_target.h>  // must come before highway.h
#include <hwy/highway.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "backend/cpu/lanes/member_update-inl.h"
#include "backend/cpu/ops/decl-inl.h"
#include "math/activations.h"
#include "math/losses.h"
#include "math/optimizers.h"

HWY_BEFORE_NAMESPACE();
namespace tn {
namespace HWY_NAMESPACE {
namespace ops {

void bias_activation(Activation act, float slope, int S, int rows, int cols, float* Z,
                                 std::int64_t sZ, const float* b, std::int64_t sb, float* A,
                                 std::int64_t sA) {
  dispatch_activation(act, [&]<Activation F>() {
    for (int s = 0; s < S; ++s) {
      const float* __restrict bias = b + s * sb;
      for (int r = 0; r < rows; ++r) {
        float* __restrict z = Z + s * sZ + static_cast<std::int64_t>(r) * cols;
        for (int c = 0; c < cols; ++c) z[c] += bias[c];
        if constexpr (F != Activation::Identity) {
          float* __restrict a = A + s * sA + static_cast<std::int64_t>(r) * cols;
          for (int c = 0; c < cols; ++c) a[c] = act_forward<F>(z[c], slope);
        } else if (A != Z) {
          std::copy(z, z + cols, A + s * sA + static_cast<std::int64_t>(r) * cols);
        }
      }
    }
  });
}

void activation_backward(Activation act, float slope, int S, int rows, int cols,
                                     const float* Z, const float* A, std::int64_t s, float* dA) {
  if (act == Activation::Identity) return;
  dispatch_activation(act, [&]<Activation F>() {
    const std::int64_t n = static_cast<std::int64_t>(rows) * cols;
    for (int m = 0; m < S; ++m) {
      const float* __restrict z = Z + m * s;
      const float* __restrict a = A + m * s;
      float* __restrict d = dA + m * s;
      for (std::int64_t i = 0; i < n; ++i) d[i] *= act_derivative<F>(z[i], a[i], slope);
    }
  });
}

void bias_grad(int S, int rows, int cols, const float* dZ, std::int64_t sZ, float* db,
                           std::int64_t sb) {
  // Column sums in strips of 64 columns held in a local accumulator (no aliasing with dZ, so
  // the compiler keeps it in registers for narrow layers).
  constexpr int kStrip = 64;
  for (int s = 0; s < S; ++s) {
    for (int c0 = 0; c0 < cols; c0 += kStrip) {
      const int w = std::min(kStrip, cols - c0);
      float acc[kStrip] = {};
      for (int r = 0; r < rows; ++r) {
        const float* d = dZ + s * sZ + static_cast<std::int64_t>(r) * cols + c0;
        for (int c = 0; c < w; ++c) acc[c] += d[c];
      }
      std::copy(acc, acc + w, db + s * sb + c0);
    }
  }
}

namespace {

template <bool G>
void loss_impl(const LossConfig& cfg, int S, int B, int O, const float* Z, std::int64_t sZ,
               const float* Y, std::int64_t sY, float* dZ, double* loss_sum, double* correct,
               const int* rows) {
  const int T = cfg.type == LossType::CrossEntropy ? 1 : O;
  thread_local std::vector<float> scratch;  // softmax outputs when no gradient is wanted
  scratch.resize(O);
  dispatch_loss(cfg.type, [&]<LossType L>() {
    // Class weights (cross_entropy) rescale each sample; pos_weight (bce) acts inside the loss.
    const float* cw = L == LossType::CrossEntropy ? cfg.weights : nullptr;
    const float* pw = L == LossType::Bce ? cfg.weights : nullptr;
    for (int s = 0; s < S; ++s) {
      const int valid = rows ? rows[s] : B;
      if constexpr (G)  // masked rows contribute no gradient
        std::fill(dZ + s * sZ + static_cast<std::int64_t>(valid) * O, dZ + s * sZ + static_cast<std::int64_t>(B) * O, 0.0f);
      const float inv_b = 1.0f / static_cast<float>(valid > 0 ? valid : 1);
      const float* ys = Y + s * sY;
      const float wsum = cw ? xent_weight_sum(cw, ys, valid) : 0.0f;
      double sum = 0.0;
      for (int b = 0; b < valid; ++b) {
        const std::int64_t z_off = s * sZ + static_cast<std::int64_t>(b) * O;
        float* g = G ? dZ + z_off : scratch.data();
        const float l = sample_loss<L, G>(cfg.huber_delta, pw, O, Z + z_off, ys + static_cast<std::int64_t>(b) * T, g, &correct[s]);
        float gscale = inv_b, lscale = 1.0f;
        if (cw) xent_weight_scales(cw[static_cast<int>(ys[b])], wsum, valid, &gscale, &lscale);
        sum += cw ? l * lscale : l;
        if constexpr (G)
          for (int j = 0; j < O; ++j) g[j] *= gscale;
      }
      loss_sum[s] += sum;
    }
  });
}

}  // namespace

void loss(const LossConfig& cfg, int S, int B, int O, const float* Z, std::int64_t sZ, const float* Y,
          std::int64_t sY, float* dZ, double* loss_sum, double* correct, const int* rows) {
  if (dZ) loss_impl<true>(cfg, S, B, O, Z, sZ, Y, sY, dZ, loss_sum, correct, rows);
  else loss_impl<false>(cfg, S, B, O, Z, sZ, Y, sY, nullptr, loss_sum, correct, rows);
}

void output_transform(LossType loss, int S, int B, int O, const float* Z,
                                  std::int64_t sZ, float* P, std::int64_t sP) {
  for (std::int64_t r = 0; r < static_cast<std::int64_t>(S) * B; ++r) {
    const float* z = Z + (r / B) * sZ + (r % B) * O;
    float* p = P + (r / B) * sP + (r % B) * O;
    if (loss == LossType::CrossEntropy) {
      const float mx = *std::max_element(z, z + O);
      float sum = 0.0f;
      for (int j = 0; j < O; ++j) sum += p[j] = std::exp(z[j] - mx);
      for (int j = 0; j < O; ++j) p[j] /= sum;
    } else if (loss == LossType::Bce) {
      for (int j = 0; j < O; ++j) p[j] = sigmoid(z[j]);
    } else {
      std::copy(z, z + O, p);
    }
  }
}

void sum_squares(int S, std::int64_t n, const float* x, std::int64_t sx, double* norm2) {
  for (int s = 0; s < S; ++s) {
    const float* v = x + s * sx;
    double acc = 0.0;
    for (std::int64_t i = 0; i < n; ++i) acc += static_cast<double>(v[i]) * v[i];
    norm2[s] += acc;
  }
}

void optimizer_update(OptimizerType type, int S, std::int64_t n, float* P,
                                  const float* G, float* S1, float* S2, std::int64_t stride,
                                  const OptStep* h, float clip, const double* norm2) {
  const bool two = optimizer_state_slots(type) == 2;
  dispatch_optimizer(type, [&]<OptimizerType O>() {
    for (int s = 0; s < S; ++s) {
      if (h[s].skip) continue;
      const std::int64_t off = s * stride;
      const float k = clip > 0.0f ? clip_scale(clip, norm2[s]) : 1.0f;
      update_member<O>(n, P + off, G + off, S1 + off, two ? S2 + off : nullptr, h[s], k);
    }
  });
}

}  // namespace ops
}  // namespace HWY_NAMESPACE
}  // namespace tn
HWY_AFTER_NAMESPACE();
