// The CPU's fused lane kernel against the separate backend ops it replaces: same gradients,
// losses and correct counts (up to float rounding) for every loss, several activations and
// shapes, partial lane groups, row chunks and both samplers; the shallow (one hidden layer)
// kernel against the generic one; the fused step against the gradient, clipping and
// optimizer ops; the lane transposes.
#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/lanes_mlp.h"
#include "model/build.h"
#include "math/fastmath.h"
#include "math/rng.h"
#include "model/model_ops.h"
#include "target_test_util.h"

using namespace tn;

namespace {

struct Case {
  std::vector<DenseLayer> layers;
  LossType loss;
  int S, B, n;
  SampleMode mode;
  bool drop = false;  // a training step with the layers' dropout
  bool ystats = false;  // per-member target statistics: each member scales its targets by its own
};

// The loss of these cases: `type`, with a Huber delta of 0.3 (so Huber's both branches run).
LossConfig loss_config(LossType type) {
  LossConfig l;
  l.type = type;
  l.huber_delta = 0.3f;
  return l;
}

ModelShape shape_of(const Case& c) {
  ModelShape s;
  s.layers = c.layers;
  return s;
}

float rnd(std::uint32_t i, std::uint32_t salt) { return 2.0f * uniform01(random_words(99, salt, Purpose::Data, i).v[0]) - 1.0f; }

void check_case(const Case& c, CpuTarget target = default_cpu_target()) {
  CpuBackend be(1, target);
  const ModelShape shape = shape_of(c);
  const ParamLayout layout(shape, c.S);
  std::vector<float> params = init_params(shape, layout, 5, 3);
  for (std::size_t i = 0; i < params.size(); ++i) params[i] += 0.1f * rnd(static_cast<std::uint32_t>(i), 1);  // non-zero biases
  const int F = shape.inputs(), O = shape.outputs();
  const int T = c.loss == LossType::CrossEntropy ? 1 : O;
  std::vector<float> X(static_cast<std::size_t>(c.n) * F), Y(static_cast<std::size_t>(c.n) * T);
  for (std::size_t i = 0; i < X.size(); ++i) X[i] = rnd(static_cast<std::uint32_t>(i), 2);
  for (std::size_t i = 0; i < Y.size(); ++i) {
    const float r = rnd(static_cast<std::uint32_t>(i), 3);
    Y[i] = c.loss == LossType::CrossEntropy ? std::floor((r + 1.0f) * 0.5f * O * 0.999f)
           : c.loss == LossType::Bce       ? (r > 0 ? 1.0f : 0.0f)
                                           : 2.0f * r;
  }
  std::vector<std::uint32_t> order(c.n);
  epoch_order(7, 2, c.n, order.data());
  BatchSampler sampler{c.mode, 11, static_cast<std::uint32_t>(c.n), order.data()};
  LossConfig loss = loss_config(c.loss);

  // Fused.
  std::vector<float> g_fused(layout.total, -1.0f);
  std::vector<double> loss_f(c.S, 0.0), corr_f(c.S, 0.0);
  const BlockParams P(params.data(), layout, 0), Gf(g_fused.data(), layout, 0);
  const std::uint32_t epoch = 5;
  StepBatch fb{&shape, &loss, &sampler, 40, c.S, 3, c.B, X.data(), Y.data(), T, &P, &Gf, loss_f.data(), corr_f.data(),
               nullptr, 21, c.drop ? &epoch : nullptr};
  std::vector<float> ystats;  // [S, 2, T]: member s's means, then its stds
  for (int s = 0; s < c.S; ++s)
    for (int k = 0; k < 2 * T; ++k) ystats.push_back(k < T ? 0.3f * rnd(static_cast<std::uint32_t>(s * T + k), 4) : 0.5f + 0.1f * s);
  if (c.ystats) fb.Ystats = ystats.data();
  lane_kernel(be.target()).loss_grad(fb);

  // Separate ops.
  std::vector<float> g_ops(layout.total, -2.0f);
  std::vector<double> loss_o(c.S, 0.0), corr_o(c.S, 0.0);
  const BlockParams Go(g_ops.data(), layout, 0);
  ModelBuffers buf(be, shape, c.S, c.B, T);
  be.gather_batch(sampler, 40, c.S, 3, c.B, X.data(), F, Y.data(), T, buf.X, static_cast<std::int64_t>(c.B) * F, buf.Y,
                  static_cast<std::int64_t>(c.B) * T, c.ystats ? ystats.data() : nullptr);
  DropoutKey dk;
  dk.seed = 21;
  dk.member0 = 40;
  dk.epoch = &epoch;
  dk.pos0 = 3;
  const float* Z = model_forward(be, shape, P, buf, c.S, c.B, c.drop ? &dk : nullptr);
  be.loss_backward(loss, c.S, c.B, O, Z, static_cast<std::int64_t>(c.B) * O, buf.Y, static_cast<std::int64_t>(c.B) * T,
                   buf.dA, loss_o.data(), corr_o.data(), nullptr);
  model_backward(be, shape, P, Go, buf, c.S, c.B, c.drop ? &dk : nullptr);

  double max_err = 0;
  for (std::size_t i = 0; i < g_ops.size(); ++i) {
    const double err = std::abs(g_fused[i] - g_ops[i]) / (1e-6 + std::abs(g_ops[i]));
    max_err = std::max(max_err, std::isfinite(err) ? err : 1e9);
    if (std::abs(g_fused[i] - g_ops[i]) > 1e-6 + 1e-4 * std::abs(g_ops[i])) {
      FAIL_CHECK("gradient " << i << ": fused " << g_fused[i] << " vs ops " << g_ops[i]);
      break;
    }
  }
  for (int s = 0; s < c.S; ++s) {
    CHECK(loss_f[s] == doctest::Approx(loss_o[s]).epsilon(1e-5));
    CHECK(corr_f[s] == doctest::Approx(corr_o[s]).epsilon(1e-9));
  }
  MESSAGE("loss " << std::string(to_string(c.loss)) << " S=" << c.S << " B=" << c.B << ": max relative gradient difference " << max_err);
}

}  // namespace

TEST_CASE("fused lane kernel matches the separate ops") {
  using A = Activation;
  const std::vector<DenseLayer> mlp = {{3, 7, A::Tanh}, {7, 5, A::Gelu}, {5, 4, A::Identity}};
  const std::vector<DenseLayer> mlp_reg = {{3, 6, A::LeakyRelu, 0.1f}, {6, 9, A::Sigmoid}, {9, 2, A::Identity}};
  const std::vector<DenseLayer> single = {{5, 1, A::Identity}};
  check_case({mlp, LossType::CrossEntropy, 16, 8, 40, SampleMode::Shared});
  check_case({mlp, LossType::CrossEntropy, 5, 19, 40, SampleMode::Bootstrap});   // partial group, 3 row chunks
  check_case({mlp, LossType::CrossEntropy, 21, 13, 30, SampleMode::Bootstrap});  // two groups
  check_case({mlp_reg, LossType::Mse, 17, 12, 25, SampleMode::Shared});
  check_case({mlp_reg, LossType::Mae, 3, 9, 25, SampleMode::Bootstrap});
  check_case({mlp_reg, LossType::Huber, 9, 20, 25, SampleMode::Shared});
  check_case({single, LossType::Bce, 6, 7, 20, SampleMode::Bootstrap});
  check_case({{{4, 16, A::Relu}, {16, 16, A::Relu}, {16, 3, A::Identity}}, LossType::CrossEntropy, 32, 64, 100, SampleMode::Shared});
}

TEST_CASE("fused lane kernel with per-member target statistics matches the separate ops, on every SIMD target") {
  using A = Activation;
  const std::vector<DenseLayer> mlp_reg = {{3, 6, A::LeakyRelu, 0.1f}, {6, 9, A::Sigmoid}, {9, 2, A::Identity}};
  const std::vector<DenseLayer> shallow = {{2, 16, A::Tanh}, {16, 3, A::Identity}};
  for (CpuTarget target : targets_here()) {
    CAPTURE(std::string(to_string(target)));
    check_case({mlp_reg, LossType::Mse, 21, 12, 25, SampleMode::Bootstrap, false, true}, target);  // two groups, partial
    check_case({mlp_reg, LossType::Huber, 5, 20, 25, SampleMode::Subsample, false, true}, target);
    check_case({shallow, LossType::Mse, 9, 19, 30, SampleMode::Bootstrap, false, true}, target);  // the shallow kernel
    check_case({shallow, LossType::Mae, 3, 7, 30, SampleMode::Shared, false, true}, target);      // a shared order too
  }
}

TEST_CASE("fused lane kernel with dropout matches the separate ops, on every SIMD target") {
  using A = Activation;
  const std::vector<DenseLayer> mlp = {{3, 7, A::Tanh, 0.01f, InitRule::Auto, 0.4f},
                                       {7, 5, A::Gelu, 0.01f, InitRule::Auto, 0.25f},
                                       {5, 6, A::LeakyRelu, 0.1f, InitRule::Auto, 0.5f},
                                       {6, 4, A::Identity, 0.01f, InitRule::Auto, 0.5f}};  // the output layer's is ignored
  const std::vector<DenseLayer> shallow = {{2, 16, A::Relu, 0.01f, InitRule::Auto, 0.5f}, {16, 2, A::Identity}};
  for (CpuTarget target : targets_here()) {
    CAPTURE(std::string(to_string(target)));
    check_case({mlp, LossType::CrossEntropy, 5, 19, 40, SampleMode::Bootstrap, true}, target);  // partial group, row chunks
    check_case({mlp, LossType::Mse, 17, 12, 25, SampleMode::Shared, true}, target);
    check_case({shallow, LossType::CrossEntropy, 16, 40, 50, SampleMode::Bootstrap, true}, target);
    // Without the training step's key no dropout happens: the plain network's gradients.
    check_case({mlp, LossType::Huber, 9, 20, 25, SampleMode::Shared, false}, target);
  }
  ModelShape s;
  s.layers = shallow;
  CHECK_FALSE(lane_kernel(default_cpu_target()).is_shallow(s));  // dropout takes the layer-by-layer kernel
}

TEST_CASE("the fused kernel is chosen by shape only, and says why not") {
  CpuBackend be(2);
  ModelShape small, wide, deep;
  small.layers = {{2, 16, Activation::Relu}, {16, 2, Activation::Identity}};
  deep.layers = {{2, 16, Activation::Relu}, {16, 16, Activation::Tanh}, {16, 2, Activation::Identity}};
  // Wide enough that a lane group's scratch exceeds the budget at 4 lanes too (NEON, generic).
  wide.layers = {{2, 512, Activation::Relu}, {512, 512, Activation::Relu}, {512, 2, Activation::Identity}};
  for (int batch : {128, 1}) {
    std::string why;
    const auto k = be.step_kernels(small, batch, &why);
    REQUIRE(k.size() == 1);
    CHECK(k.front()->block_members() == target_lanes(be.target()));
    // The one-hidden-layer kernel where the target's table has one (AVX-512, AVX2), else layer by layer.
    const bool shallow = lane_kernel(be.target()).is_shallow(small);
    CHECK(shallow == (be.target() == CpuTarget::Avx512 || be.target() == CpuTarget::Avx2));
    const char* want = shallow ? "one-hidden-layer kernel" : "layer-by-layer kernel";
    CHECK(k.front()->describe().find(want) != std::string::npos);
  }
  REQUIRE(be.step_kernels(deep, 64, nullptr).size() == 1);
  CHECK(be.step_kernels(deep, 64, nullptr).front()->describe().find("layer-by-layer kernel") != std::string::npos);
  std::string why;
  CHECK(be.step_kernels(wide, 128, &why).empty());
  CHECK(why.find("KiB, above the lane kernel's") != std::string::npos);
  // The layer-by-layer kernel stops at 1 MiB of scratch (3 MiB on AVX-512), the
  // one-hidden-layer kernel at 4 MiB (the measured crossovers, cpu_backend.cpp): a 784-input
  // layer with batch 8 goes to per-member GEMMs on every target, a wide one-hidden-layer
  // network stays in lanes where the target has the shallow kernel.
  ModelShape mnist, broad;
  mnist.layers = {{784, 64, Activation::Relu}, {64, 10, Activation::Identity}};
  broad.layers = {{2, 2048, Activation::Relu}, {2048, 2, Activation::Identity}};
  const std::int64_t layer_budget = be.target() == CpuTarget::Avx512 ? 3 << 20 : 1 << 20;
  CHECK(be.step_kernels(mnist, 8, &why).empty());
  CHECK(why.find("above the lane kernel's " + std::to_string(layer_budget >> 10) + " KiB") != std::string::npos);
  if (lane_kernel(be.target()).is_shallow(broad)) {
    CHECK(lane_kernel(be.target()).scratch_bytes(broad, 128, 2) > layer_budget);
    CHECK(be.step_kernels(broad, 128, nullptr).size() == 1);
  }
  ModelShape rec = small;
  rec.seq_len = 4;
  rec.step_features = 2;
  rec.recurrent = {{CellType::Lstm, 2, 8}};
  rec.layers = {{8, 2, Activation::Identity}};
  CHECK(be.step_kernels(rec, 16, &why).empty());
  CHECK(why.find("recurrent layers") != std::string::npos);
}

namespace {

// Inputs, targets and a sampler for a shape and loss (as check_case builds them).
struct Data {
  std::vector<float> X, Y;
  std::vector<std::uint32_t> order;
  BatchSampler sampler;
  int T = 1;
  Data(const ModelShape& shape, LossType loss, int n, SampleMode mode, std::uint32_t salt) : order(n) {
    const int F = shape.inputs(), O = shape.outputs();
    T = loss == LossType::CrossEntropy ? 1 : O;
    X.resize(static_cast<std::size_t>(n) * F);
    Y.resize(static_cast<std::size_t>(n) * T);
    for (std::size_t i = 0; i < X.size(); ++i) X[i] = 2.0f * rnd(static_cast<std::uint32_t>(i), salt);
    for (std::size_t i = 0; i < Y.size(); ++i) {
      const float r = rnd(static_cast<std::uint32_t>(i), salt + 1);
      Y[i] = loss == LossType::CrossEntropy ? std::floor((r + 1.0f) * 0.5f * O * 0.999f)
             : loss == LossType::Bce        ? (r > 0 ? 1.0f : 0.0f)
                                            : 2.0f * r;
    }
    epoch_order(7, salt, n, order.data());
    sampler = BatchSampler{mode, 11, static_cast<std::uint32_t>(n), order.data()};
  }
};

std::vector<float> noisy_params(const ModelShape& shape, const ParamLayout& layout, std::uint32_t salt) {
  std::vector<float> p = init_params(shape, layout, 5, 3);
  for (std::size_t i = 0; i < p.size(); ++i) p[i] += 0.1f * rnd(static_cast<std::uint32_t>(i), salt);
  return p;
}

bool same_bits(const void* a, const void* b, std::size_t bytes) { return std::memcmp(a, b, bytes) == 0; }

}  // namespace

TEST_CASE("the shallow kernel (one hidden layer) equals the generic lane kernel, bitwise") {
  using A = Activation;
  int cases = 0;
  for (CpuTarget target : targets_here()) {
  const LaneKernel& lk = lane_kernel(target);
  CAPTURE(std::string(to_string(target)));
  for (int F : {1, 2, 4})
    for (int O : {1, 2, 3, 4})
      for (A act : {A::Relu, A::Tanh, A::LeakyRelu, A::Gelu, A::Sigmoid, A::Identity})
        for (LossType loss : {LossType::CrossEntropy, LossType::Mse, LossType::Bce}) {
          if (loss == LossType::CrossEntropy && O == 1) continue;
          const int H = 5 + (F * 3 + O) % 13, S = 3 + (H * 7) % 20, B = 9 + (F + O) % 7;
          ModelShape shape;
          shape.layers = {{F, H, act, 0.2f}, {H, O, A::Identity}};
          const ParamLayout layout(shape, S);
          const std::vector<float> params = noisy_params(shape, layout, 4);
          const Data d(shape, loss, 30, S % 2 ? SampleMode::Bootstrap : SampleMode::Shared, static_cast<std::uint32_t>(H));
          const LossConfig lc = loss_config(loss);
          std::vector<int> rows(S);
          for (int s = 0; s < S; ++s) rows[s] = (s * 5) % (B + 1);  // sets mode's valid rows, some 0
          for (bool masked : {false, true}) {
            std::vector<float> g1(layout.total, -1.0f), g2(layout.total, -2.0f);
            std::vector<double> l1(S, 0.5), l2(S, 0.5), c1(S, 0.25), c2(S, 0.25);
            const BlockParams P(const_cast<float*>(params.data()), layout, 0), G1(g1.data(), layout, 0), G2(g2.data(), layout, 0);
            const int* r = masked ? rows.data() : nullptr;
            lk.loss_grad({&shape, &lc, &d.sampler, 8, S, 2, B, d.X.data(), d.Y.data(), d.T, &P, &G1, l1.data(), c1.data(), r});
            lk.loss_grad_generic({&shape, &lc, &d.sampler, 8, S, 2, B, d.X.data(), d.Y.data(), d.T, &P, &G2, l2.data(), c2.data(), r});
            CAPTURE(F);
            CAPTURE(O);
            CAPTURE(H);
            CAPTURE(std::string(to_string(act)));
            CAPTURE(std::string(to_string(loss)));
            CAPTURE(masked);
            CHECK(same_bits(g1.data(), g2.data(), g1.size() * sizeof(float)));
            CHECK(same_bits(l1.data(), l2.data(), l1.size() * sizeof(double)));
            CHECK(same_bits(c1.data(), c2.data(), c1.size() * sizeof(double)));
            ++cases;
          }
        }
  }
  MESSAGE(cases << " shapes, activations, losses, masks and targets compared");
}

namespace {

// The fused step kernel against lanes_loss_grad, sum_squares and optimizer_update on a copy.
// Returns the largest relative difference of parameters and state, and whether all bits agree
// (the fused step mirrors optimizer_update's operations and branches, so they do as long as
// the compiler contracts the same products into multiply-adds in both).
struct StepResult {
  double max_rel = 0;
  bool bitwise = true;
};

StepResult check_step(CpuTarget target, const ModelShape& shape, LossType loss, OptimizerType type, float clip,
                      int S, int B, const std::vector<OptStep>& h, const int* rows, bool freeze = false) {
  CpuBackend be(1, target);
  const ParamLayout layout(shape, S);
  const std::vector<float> p0 = noisy_params(shape, layout, 6);
  std::vector<float> s10(layout.total), s20(layout.total);
  for (std::size_t i = 0; i < s10.size(); ++i) {
    s10[i] = 0.01f * (1.0f + rnd(static_cast<std::uint32_t>(i), 7));  // >= 0: rmsprop's mean square
    s20[i] = 0.001f * (1.0f + rnd(static_cast<std::uint32_t>(i), 8));
  }
  const Data d(shape, loss, 40, SampleMode::Bootstrap, 9);
  const LossConfig lc = loss_config(loss);

  // freeze: member 1's loss sum is already NaN, member 2 was frozen before (divergence isolation).
  std::vector<double> l0(S, 0.0);
  std::vector<int> frozen0(S, 0);
  if (freeze) {
    l0[1] = std::nan("");
    frozen0[2] = 1;
  }
  // Fused step (no gradient array at all).
  std::vector<float> pf = p0, s1f = s10, s2f = s20;
  std::vector<double> lf = l0, cf(S, 0.0);
  std::vector<OptStep> hf = h;
  std::vector<int> frozen_f = frozen0;
  const BlockParams Pf(pf.data(), layout, 0), S1f(s1f.data(), layout, 0), S2f(s2f.data(), layout, 0);
  const StepBatch fbf{&shape, &lc, &d.sampler, 3, S, 1, B, d.X.data(), d.Y.data(), d.T, &Pf, nullptr, lf.data(), cf.data(), rows};
  const auto kernels = be.step_kernels(shape, B, nullptr);
  REQUIRE(kernels.size() == 1);
  kernels.front()->step(fbf, StepUpdate{type, &S1f, &S2f, hf.data(), clip, freeze ? frozen_f.data() : nullptr}, 0);

  // The ops the trainer runs otherwise.
  std::vector<float> po = p0, s1o = s10, s2o = s20, go(layout.total);
  std::vector<double> lo = l0, co(S, 0.0), norm2(S, 0.0);
  std::vector<OptStep> ho = h;
  std::vector<int> frozen_o = frozen0;
  const BlockParams Po(po.data(), layout, 0), S1o(s1o.data(), layout, 0), S2o(s2o.data(), layout, 0), Go(go.data(), layout, 0);
  lane_kernel(be.target()).loss_grad({&shape, &lc, &d.sampler, 3, S, 1, B, d.X.data(), d.Y.data(), d.T, &Po, &Go, lo.data(), co.data(), rows});
  if (freeze) be.freeze_diverged(S, lo.data(), frozen_o.data(), ho.data());
  if (clip > 0)
    for (int t = 0; t < shape.tensors(); ++t) be.sum_squares(S, Go.stride(t), Go.t[t], Go.stride(t), norm2.data());
  for (int t = 0; t < shape.tensors(); ++t)
    be.optimizer_update(type, S, Po.stride(t), Po.t[t], Go.t[t], S1o.t[t], S2o.t[t], Po.stride(t), ho.data(), clip, norm2.data());

  StepResult r;
  r.bitwise = same_bits(pf.data(), po.data(), pf.size() * 4) && same_bits(s1f.data(), s1o.data(), pf.size() * 4) &&
              same_bits(s2f.data(), s2o.data(), pf.size() * 4);
  for (const auto& [a, b] : {std::pair{&pf, &po}, std::pair{&s1f, &s1o}, std::pair{&s2f, &s2o}})
    for (std::size_t i = 0; i < a->size(); ++i) {
      // Relative to the value, or to 1e-4 for values near 0 (optimizer state after cancellation).
      const double err = std::abs((*a)[i] - (*b)[i]) / (1e-4 + std::abs((*b)[i]));
      r.max_rel = std::max(r.max_rel, std::isfinite(err) ? err : 1e9);
    }
  CHECK(same_bits(lf.data(), lo.data(), S * sizeof(double)));
  CHECK(frozen_f == frozen_o);
  if (freeze) CHECK(frozen_f[1] == 1);
  CHECK(same_bits(cf.data(), co.data(), S * sizeof(double)));
  // Members that skip the step, or are frozen, keep their parameters and state.
  for (int s = 0; s < S; ++s)
    if (h[s].skip || (freeze && (s == 1 || s == 2)))
      for (int t = 0; t < shape.tensors(); ++t)
        for (std::int64_t k = 0; k < layout.size[t]; ++k) {
          const std::int64_t at = layout.at(t, s) + k;
          CHECK((pf[at] == p0[at] && s1f[at] == s10[at] && s2f[at] == s20[at]));
        }
  return r;
}

}  // namespace

TEST_CASE("the fused step equals the gradient, clipping and optimizer ops") {
  using A = Activation;
  ModelShape shallow, deep;
  shallow.layers = {{2, 16, A::Relu}, {16, 2, A::Identity}};
  deep.layers = {{3, 7, A::Tanh}, {7, 18, A::Gelu}, {18, 3, A::Identity}};  // tensors of 21 and 126 floats
  int bitwise = 0, total = 0;
  double worst = 0;
  for (CpuTarget target : targets_here())
  for (const ModelShape* shape : {&shallow, &deep})
    for (OptimizerType type : {OptimizerType::Sgd, OptimizerType::Adam, OptimizerType::AdamW, OptimizerType::RmsProp})
      for (float clip : {0.0f, 0.05f})
        for (int S : {5, 16, 21}) {
          // Per-member scalars: learning rates, betas, decay, momentum (0 for some), nesterov, skips.
          std::vector<OptStep> h(S);
          for (int s = 0; s < S; ++s) {
            h[s] = OptStep{0.01f * (1 + s % 3), 0.9f - 0.01f * (s % 2), 0.999f, 1e-8f, 0.01f * (s % 4), 0.5f, 0.99f,
                           0.19f + 0.01f * s, 0.002f, false};
            h[s].skip = s % 7 == 3;
          }
          std::vector<int> rows(S);
          for (int s = 0; s < S; ++s) rows[s] = s % 5 == 1 ? 0 : 12 - s % 4;
          for (int variant = 0; variant < 5; ++variant) {
            if (variant == 1)  // momentum on for some members only, nesterov for others
              for (int s = 0; s < S; ++s) h[s].momentum = s % 2 ? 0.5f : 0.0f, h[s].nesterov = s % 3 == 0;
            if (variant == 3)  // every member the same scalars: one array per tensor and block
              for (int s = 1; s < S; ++s) h[s] = h[0];
            // variant 4: those scalars, and a member whose loss is not finite and one frozen before
            const StepResult r = check_step(target, *shape, LossType::CrossEntropy, type, clip, S, 12, h,
                                            variant == 2 ? rows.data() : nullptr, variant == 4);
            CAPTURE(std::string(to_string(target)));
            CAPTURE(std::string(to_string(type)));
            CAPTURE(clip);
            CAPTURE(S);
            CAPTURE(variant);
            CHECK(r.max_rel < 1e-5);
            bitwise += r.bitwise;
            ++total;
            worst = std::max(worst, r.max_rel);
          }
        }
  MESSAGE(bitwise << " of " << total << " steps bitwise equal to the separate ops; largest relative difference " << worst);
  // update_vec mirrors update_param operation for operation: every step must be bitwise equal
  // (a formula changed in one and not the other shows up here).
  CHECK(bitwise == total);
}

TEST_CASE("lane transposes round-trip and honour the member count and write mask") {
  for (CpuTarget target : targets_here()) {
  const LaneKernel& lk = lane_kernel(target);
  const int kLanes = lk.lanes;
  CAPTURE(std::string(to_string(target)));
  for (int n : {1, 2, 15, 16, 17, 40})
    for (int nm : {1, kLanes / 2 - 1, kLanes}) {
      std::vector<float> src(static_cast<std::size_t>(nm) * n), lanes(static_cast<std::size_t>(n) * kLanes, -1.0f);
      for (std::size_t i = 0; i < src.size(); ++i) src[i] = static_cast<float>(i) + 0.5f;
      lk.to_lanes(src.data(), n, nm, lanes.data());
      int bad = 0;
      for (int k = 0; k < n; ++k)
        for (int l = 0; l < kLanes; ++l) bad += lanes[k * kLanes + l] != (l < nm ? src[l * n + k] : 0.0f);
      const std::uint32_t write = 0x5a5au & ((1u << kLanes) - 1);
      std::vector<float> back(src.size(), -7.0f);
      lk.from_lanes(lanes.data(), n, nm, write, back.data());
      for (int l = 0; l < nm; ++l)
        for (int k = 0; k < n; ++k) bad += back[l * n + k] != ((write >> l & 1) ? src[l * n + k] : -7.0f);
      CAPTURE(n);
      CAPTURE(nm);
      CHECK(bad == 0);
    }
  }
}

TEST_CASE("the lane kernel's exp and log equal fast_exp and fast_log bitwise on their domains") {
  // Every float exponent, many mantissas, both signs, and the special values.
  std::vector<float> x;
  for (std::uint32_t e = 0; e < 256; ++e)
    for (std::uint32_t m : {0u, 1u, 0x12345u, 0x3fffffu, 0x400000u, 0x555555u, 0x7ffffeu, 0x7fffffu})
      for (std::uint32_t sign : {0u, 0x80000000u}) x.push_back(std::bit_cast<float>(sign | e << 23 | m));
  for (float v : {0.0f, -0.0f, 1.0f, 2.0f, -87.3f, -87.31f, 88.3f, 88.31f, -1e-30f, 0.5f, 1.0000001f})
    x.push_back(v);
  while (x.size() % 16) x.push_back(1.0f);
  const std::size_t n = x.size();
  auto same = [](float a, float b) { return std::bit_cast<std::uint32_t>(a) == std::bit_cast<std::uint32_t>(b) || (a != a && b != b); };
  for (CpuTarget target : targets_here()) {
    std::vector<float> ea(n), en(n), la(n), lg(n);
    lane_kernel(target).exp_log(x.data(), static_cast<std::int64_t>(n), ea.data(), en.data(), la.data(), lg.data());
    int bad = 0;
    for (std::size_t i = 0; i < n; ++i) {
      bad += !same(ea[i], fast_exp(x[i]));
      bad += !same(la[i], fast_log(x[i]));
      if (x[i] <= 0.0f || x[i] != x[i]) bad += !same(en[i], fast_exp(x[i]));
      if ((x[i] >= 1.0f && x[i] < INFINITY) || x[i] != x[i]) bad += !same(lg[i], fast_log(x[i]));
    }
    CAPTURE(std::string(to_string(target)));
    CHECK(bad == 0);
  }
}
