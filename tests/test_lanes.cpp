// The CPU's fused lane kernel against the separate backend ops it replaces: same gradients,
// losses and correct counts (up to float rounding) for every loss, several activations and
// shapes, partial lane groups, row chunks and both samplers.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/lanes_mlp.h"
#include "math/rng.h"
#include "model/mlp_ops.h"

using namespace tn;

namespace {

struct Case {
  std::vector<DenseLayer> layers;
  LossType loss;
  int S, B, n;
  SampleMode mode;
};

MlpShape shape_of(const Case& c) {
  MlpShape s;
  s.layers = c.layers;
  return s;
}

float rnd(std::uint32_t i, std::uint32_t salt) { return 2.0f * uniform01(random_words(99, salt, Purpose::Data, i).v[0]) - 1.0f; }

void check_case(const Case& c) {
  CpuBackend be(1);
  const MlpShape shape = shape_of(c);
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
  LossConfig loss{c.loss, 0.3f};

  // Fused.
  std::vector<float> g_fused(layout.total, -1.0f);
  std::vector<double> loss_f(c.S, 0.0), corr_f(c.S, 0.0);
  const BlockParams P(params.data(), layout, 0), Gf(g_fused.data(), layout, 0);
  const FusedBatch fb{&shape, &loss, &sampler, 40, c.S, 3, c.B, X.data(), Y.data(), T, &P, &Gf, loss_f.data(), corr_f.data()};
  REQUIRE(be.fused_loss_grad(fb));

  // Separate ops.
  std::vector<float> g_ops(layout.total, -2.0f);
  std::vector<double> loss_o(c.S, 0.0), corr_o(c.S, 0.0);
  const BlockParams Go(g_ops.data(), layout, 0);
  MlpBuffers buf(be, shape, c.S, c.B, T);
  be.gather_batch(sampler, 40, c.S, 3, c.B, X.data(), F, Y.data(), T, buf.X, static_cast<std::int64_t>(c.B) * F, buf.Y,
                  static_cast<std::int64_t>(c.B) * T);
  const float* Z = mlp_forward(be, shape, P, buf, c.S, c.B);
  be.loss_backward(loss, c.S, c.B, O, Z, static_cast<std::int64_t>(c.B) * O, buf.Y, static_cast<std::int64_t>(c.B) * T,
                   buf.dA, loss_o.data(), corr_o.data(), nullptr);
  mlp_backward(be, shape, P, Go, buf, c.S, c.B);

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

TEST_CASE("the fused kernel is chosen by shape only") {
  CpuBackend be(2);
  MlpShape small, wide;
  small.layers = {{2, 16, Activation::Relu}, {16, 2, Activation::Identity}};
  wide.layers = {{2, 256, Activation::Relu}, {256, 256, Activation::Relu}, {256, 2, Activation::Identity}};
  CHECK(be.fused_block(small, 128) == kLanes);
  CHECK(be.fused_block(small, 1) == kLanes);
  CHECK(be.fused_block(wide, 128) == 0);
}
