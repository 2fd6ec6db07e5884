// Checks MLP gradients (model_forward + loss_backward + model_backward on CpuBackend) against finite differences of an independent double-precision forward pass.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "math/activations.h"
#include "math/dropout.h"
#include "math/losses.h"
#include "math/rng.h"
#include "model/build.h"
#include "model/model_ops.h"

using namespace tn;

namespace {

constexpr int S = 3, B = 4, Bcap = 6;

float rnd(std::uint32_t stream, std::uint64_t i, float lo, float hi) {
  return lo + (hi - lo) * uniform01(random_words(7, stream, Purpose::Data, i).v[0]);
}

ModelShape make_shape(std::vector<DenseLayer> layers) {
  ModelShape s;
  s.layers = std::move(layers);
  return s;
}

// One member's problem: its parameters (layout order, tensors concatenated), inputs, targets.
struct Problem {
  const ModelShape* shape;
  LossConfig loss;
  int T;
  std::vector<double> w;
  std::vector<float> X, Y;  // [B, F], [B, T]
  std::vector<float> weights;  // [O] class weights (cross_entropy) or pos_weight (bce); empty = none
  const DropoutKey* drop = nullptr;  // a training step's dropout (member0 0), or none
  std::uint32_t member = 0;
};

// Double-precision reference: mean over the batch of the per-sample loss. Tracks the smallest
// |z| fed to relu-like activations (finite differences must not straddle a kink).
double ref_loss(const Problem& pb, double* min_kink = nullptr) {
  const ModelShape& shape = *pb.shape;
  double total = 0, wsum = 0;
  for (int b = 0; b < B; ++b) {
    std::vector<double> h(pb.X.begin() + b * shape.inputs(), pb.X.begin() + (b + 1) * shape.inputs());
    std::size_t off = 0;
    std::size_t li = 0;
    for (const DenseLayer& l : shape.layers) {
      const double* W = pb.w.data() + off;
      const double* bias = W + std::size_t(l.in) * l.out;
      off += std::size_t(l.in) * l.out + l.out;
      std::vector<double> a(l.out);
      for (int j = 0; j < l.out; ++j) {
        double z = bias[j];
        for (int i = 0; i < l.in; ++i) z += h[i] * W[i * l.out + j];  // y = x·W + b, W [in, out]
        if (min_kink && (l.act == Activation::Relu || l.act == Activation::LeakyRelu))
          *min_kink = std::min(*min_kink, std::abs(z));
        a[j] = dispatch_activation(l.act, [&]<Activation A>() { return act_forward<A, double>(z, double(l.slope)); });
      }
      if (pb.drop && l.dropout > 0 && li + 1 < shape.layers.size()) {  // inverted dropout, the masks of math/dropout.h
        const Philox4x32 row = dropout_row_key(pb.drop->seed, pb.member, *pb.drop->epoch, pb.drop->pos0 + b);
        for (int j = 0; j < l.out; ++j) a[j] *= double(dropout_factor(row, std::uint32_t(li), j, l.dropout));
      }
      h = std::move(a);
      ++li;
    }
    const int O = shape.outputs();
    const float* y = pb.Y.data() + b * pb.T;
    std::vector<double> g(O);
    double l = 0;
    const bool weighted = !pb.weights.empty();
    if (weighted && pb.loss.type == LossType::CrossEntropy) {
      // PyTorch's CrossEntropyLoss(weight=w): Σ w[y]·(−log softmax_y) / Σ w[y].
      double se = 0;
      for (int j = 0; j < O; ++j) se += std::exp(h[j]);
      const double wy = pb.weights[int(y[0])];
      total += wy * (std::log(se) - h[int(y[0])]);
      wsum += wy;
      continue;
    }
    if (weighted && pb.loss.type == LossType::Bce) {
      // BCEWithLogitsLoss(pos_weight=p): mean of −[p·y·log σ(z) + (1 − y)·log(1 − σ(z))].
      for (int j = 0; j < O; ++j) {
        const double sg = 1 / (1 + std::exp(-h[j]));
        l -= pb.weights[j] * y[j] * std::log(sg) + (1 - y[j]) * std::log(1 - sg);
      }
      total += l / O;
      continue;
    }
    switch (pb.loss.type) {
      case LossType::CrossEntropy: { int am; l = softmax_xent(h.data(), O, int(y[0]), g.data(), &am); break; }
      case LossType::Bce: for (int j = 0; j < O; ++j) l += bce_logit(h[j], double(y[j]), &g[j]); l /= O; break;
      case LossType::Mse: for (int j = 0; j < O; ++j) l += mse_elem(h[j], double(y[j]), &g[j]); l /= O; break;
      case LossType::Mae: for (int j = 0; j < O; ++j) l += mae_elem(h[j], double(y[j]), &g[j]); l /= O; break;
      case LossType::Huber:
        for (int j = 0; j < O; ++j) l += huber_elem(h[j], double(y[j]), double(pb.loss.huber_delta), &g[j]);
        l /= O;
        break;
    }
    total += l;
  }
  return wsum > 0 ? total / wsum : total / B;
}

// Runs the backend's forward + loss + backward for all S members; returns the gradients
// (layout order) and the per-member loss sums.
std::vector<float> backend_grads(const ModelShape& shape, const ParamLayout& layout, std::vector<float>& P,
                                 const std::vector<Problem>& pbs, std::vector<double>& loss_sum,
                                 int m0 = 0, int Sb = S) {
  CpuBackend be(1);
  const int F = shape.inputs(), T = pbs[0].T, O = shape.outputs();
  ModelBuffers buf(be, shape, Sb, Bcap, T);
  // Rows B..Bcap of each member are unused: NaN there must not reach any result.
  std::fill(buf.X, buf.X + std::int64_t(Sb) * Bcap * F, std::numeric_limits<float>::quiet_NaN());
  std::fill(buf.Y, buf.Y + std::int64_t(Sb) * Bcap * T, std::numeric_limits<float>::quiet_NaN());
  for (int s = 0; s < Sb; ++s) {
    std::copy(pbs[m0 + s].X.begin(), pbs[m0 + s].X.end(), buf.X + std::int64_t(s) * Bcap * F);
    std::copy(pbs[m0 + s].Y.begin(), pbs[m0 + s].Y.end(), buf.Y + std::int64_t(s) * Bcap * T);
  }
  std::vector<float> G(layout.total, std::numeric_limits<float>::quiet_NaN());
  const BlockParams p(P.data(), layout, m0), g(G.data(), layout, m0);
  DropoutKey dk;
  if (pbs[0].drop) {
    dk = *pbs[0].drop;
    dk.member0 = static_cast<std::uint32_t>(m0);
  }
  const DropoutKey* drop = pbs[0].drop ? &dk : nullptr;
  const float* Z = model_forward(be, shape, p, buf, Sb, B, drop);
  loss_sum.assign(Sb, 0.0);
  std::vector<double> correct(Sb, 0.0);
  LossConfig loss = pbs[0].loss;
  if (!pbs[0].weights.empty()) loss.weights = pbs[0].weights.data();
  be.loss_backward(loss, Sb, B, O, Z, std::int64_t(Bcap) * O, buf.Y, std::int64_t(Bcap) * T, buf.dA,
                   loss_sum.data(), correct.data(), nullptr);
  model_backward(be, shape, p, g, buf, Sb, B, drop);
  return G;
}

// Gathers member s's values of a layout-ordered swarm array into one vector.
template <class V>
std::vector<double> member_values(const ParamLayout& layout, const V& arr, int s) {
  std::vector<double> out;
  for (std::size_t t = 0; t < layout.size.size(); ++t)
    for (std::int64_t i = 0; i < layout.size[t]; ++i) out.push_back(arr[layout.at(int(t), s) + i]);
  return out;
}

void check_gradients(const ModelShape& shape, LossConfig loss, std::uint32_t seed,
                     const std::vector<float>& weights = {}, const DropoutKey* drop = nullptr) {
  const ParamLayout layout(shape, S);
  std::vector<float> P = init_params(shape, layout, seed, 0);
  for (int t = 1; t < shape.tensors(); t += 2)  // init leaves biases at zero: randomize them
    for (int s = 0; s < S; ++s)
      for (std::int64_t i = 0; i < layout.size[t]; ++i) P[layout.at(t, s) + i] = rnd(seed, 1000 * t + 100 * s + i, -0.5f, 0.5f);
  const int F = shape.inputs(), O = shape.outputs(), T = loss.type == LossType::CrossEntropy ? 1 : O;
  std::vector<Problem> pbs(S);
  for (int s = 0; s < S; ++s) {
    Problem& pb = pbs[s];
    pb.shape = &shape;
    pb.loss = loss;
    pb.T = T;
    pb.weights = weights;
    pb.drop = drop;
    pb.member = static_cast<std::uint32_t>(s);
    pb.w = member_values(layout, P, s);
    for (int i = 0; i < B * F; ++i) pb.X.push_back(rnd(seed + 1, 100 * s + i, -1.5f, 1.5f));
    for (int i = 0; i < B * T; ++i) {
      const float u = rnd(seed + 2, 100 * s + i, 0.0f, 1.0f);
      pb.Y.push_back(loss.type == LossType::CrossEntropy ? float(int(u * O))
                     : loss.type == LossType::Bce       ? float(u > 0.5f)
                                                        : 2.0f * u - 1.0f);
    }
  }
  std::vector<double> loss_sum;
  const std::vector<float> G = backend_grads(shape, layout, P, pbs, loss_sum);
  double worst_rel = 0, worst_abs = 0;
  for (int s = 0; s < S; ++s) {
    double kink = INFINITY;
    const double L = ref_loss(pbs[s], &kink);
    REQUIRE(kink > 1e-3);  // test setup: no relu input near 0
    CHECK(loss_sum[s] / B == doctest::Approx(L).epsilon(1e-5));
    const std::vector<double> an = member_values(layout, G, s);
    std::vector<double> fd(an.size());
    Problem q = pbs[s];
    const double eps = 1e-5;
    for (std::size_t k = 0; k < an.size(); ++k) {
      q.w[k] = pbs[s].w[k] + eps;
      const double lp = ref_loss(q);
      q.w[k] = pbs[s].w[k] - eps;
      const double lm = ref_loss(q);
      q.w[k] = pbs[s].w[k];
      fd[k] = (lp - lm) / (2 * eps);
    }
    double num = 0, den = 0, max_abs = 0;
    int bad = 0;
    for (std::size_t k = 0; k < an.size(); ++k) {
      num += (an[k] - fd[k]) * (an[k] - fd[k]);
      den += (an[k] + fd[k]) * (an[k] + fd[k]);
      max_abs = std::max(max_abs, std::abs(an[k] - fd[k]));
      bad += !(std::abs(an[k] - fd[k]) <= 2e-5 + 1e-3 * std::abs(fd[k]));  // also catches NaN
    }
    const double rel = std::sqrt(num / den);
    worst_rel = std::max(worst_rel, rel);
    worst_abs = std::max(worst_abs, max_abs);
    INFO(std::string(to_string(loss.type)), " member ", s, " rel err ", rel, " max abs err ", max_abs);
    CHECK(rel < 1e-3);
    CHECK(bad == 0);
  }
  MESSAGE(std::string(to_string(loss.type)), " (", shape.layers.size(), " layers): worst rel err ", worst_rel,
          ", worst abs err ", worst_abs);

  // Members are independent: changing member 1's parameters leaves the gradients of
  // members 0 and 2 bit-identical, and changes member 1's.
  std::vector<float> P2 = P;
  for (int t = 0; t < shape.tensors(); ++t)
    for (std::int64_t i = 0; i < layout.size[t]; ++i) P2[layout.at(t, 1) + i] += rnd(seed + 3, 1000 * t + i, -0.3f, 0.3f);
  const std::vector<float> G2 = backend_grads(shape, layout, P2, pbs, loss_sum);
  CHECK(member_values(layout, G2, 0) == member_values(layout, G, 0));
  CHECK(member_values(layout, G2, 2) == member_values(layout, G, 2));
  CHECK(member_values(layout, G2, 1) != member_values(layout, G, 1));
  // A block holding only member 2 computes the same bits as the 3-member block.
  const std::vector<float> G3 = backend_grads(shape, layout, P, pbs, loss_sum, 2, 1);
  CHECK(member_values(layout, G3, 2) == member_values(layout, G, 2));
}

LossConfig loss_of(LossType t, float delta = 1.0f) {
  LossConfig c;
  c.type = t;
  c.huber_delta = delta;
  return c;
}

}  // namespace

TEST_CASE("init_params: per-member, Glorot/He scales, zero biases") {
  const ModelShape shape = make_shape({{20, 30, Activation::Tanh}, {30, 40, Activation::Relu}, {40, 2, Activation::Identity}});
  const ParamLayout layout(shape, 4), sub(shape, 2);
  const std::vector<float> P = init_params(shape, layout, 99, 0), Q = init_params(shape, sub, 99, 2);
  // Members 2, 3 alone (first_member = 2) equal members 2, 3 of the full swarm.
  for (int s = 0; s < 2; ++s) CHECK(member_values(sub, Q, s) == member_values(layout, P, s + 2));
  CHECK(member_values(layout, P, 0) != member_values(layout, P, 1));
  for (int s = 0; s < 4; ++s) {
    for (int li = 0; li < 3; ++li) {
      const DenseLayer& l = shape.layers[li];
      const float* w = P.data() + layout.at(2 * li, s);
      const std::int64_t n = layout.size[2 * li];
      double sum = 0, sum2 = 0, max_abs = 0;
      for (std::int64_t i = 0; i < n; ++i) {
        sum += w[i];
        sum2 += double(w[i]) * w[i];
        max_abs = std::max(max_abs, double(std::abs(w[i])));
      }
      const double mean = sum / n, var = sum2 / n - mean * mean;
      // Glorot uniform(−a, a), a = √(6/(in+out)): var a²/3. He normal: var 2/in.
      const bool he = l.act == Activation::Relu;
      const double a = std::sqrt(6.0 / (l.in + l.out)), want_var = he ? 2.0 / l.in : a * a / 3;
      INFO("member ", s, " layer ", li, " var ", var, " want ", want_var);
      CHECK(std::abs(var / want_var - 1) < 5 * std::sqrt(2.0 / n) + 0.05);  // sampling error of a variance
      if (!he) CHECK(max_abs <= a);
      const float* b = P.data() + layout.at(2 * li + 1, s);
      CHECK(std::all_of(b, b + l.out, [](float x) { return x == 0.0f; }));
    }
  }
}

TEST_CASE("MLP gradients: 3 -> 5 tanh -> 4 gelu -> 3") {
  const ModelShape shape = make_shape({{3, 5, Activation::Tanh}, {5, 4, Activation::Gelu}, {4, 3, Activation::Identity}});
  CHECK(shape.params_per_member() == 3 * 5 + 5 + 5 * 4 + 4 + 4 * 3 + 3);
  check_gradients(shape, loss_of(LossType::CrossEntropy), 11);
  check_gradients(shape, loss_of(LossType::Mse), 12);
  check_gradients(shape, loss_of(LossType::Huber, 0.3f), 13);
  check_gradients(shape, loss_of(LossType::Mae), 14);
}

TEST_CASE("MLP gradients: 4 -> 6 sigmoid -> 5 leaky_relu -> 2") {
  DenseLayer leaky{6, 5, Activation::LeakyRelu};
  leaky.slope = 0.1f;
  const ModelShape shape = make_shape({{4, 6, Activation::Sigmoid}, leaky, {5, 2, Activation::Identity}});
  check_gradients(shape, loss_of(LossType::Bce), 21);
  check_gradients(shape, loss_of(LossType::Mse), 22);
  check_gradients(shape, loss_of(LossType::CrossEntropy), 23);
}

TEST_CASE("MLP gradients: activation on the output layer, and a single layer") {
  check_gradients(make_shape({{2, 4, Activation::Relu}, {4, 3, Activation::Sigmoid}}), loss_of(LossType::Mse), 31);
  check_gradients(make_shape({{3, 3, Activation::Identity}}), loss_of(LossType::CrossEntropy), 32);
  check_gradients(make_shape({{3, 7, Activation::Gelu}, {7, 1, Activation::Tanh}}), loss_of(LossType::Huber, 0.5f), 33);
}

TEST_CASE("MLP gradients: cross_entropy with class weights, bce with pos_weight (PyTorch's definitions)") {
  const ModelShape shape = make_shape({{3, 5, Activation::Tanh}, {5, 3, Activation::Identity}});
  check_gradients(shape, loss_of(LossType::CrossEntropy), 41, {0.5f, 3.0f, 1.25f});
  check_gradients(shape, loss_of(LossType::CrossEntropy), 42, {2.0f, 0.0f, 1.0f});  // a class that does not count
  check_gradients(shape, loss_of(LossType::Bce), 43, {4.0f, 0.25f, 1.0f});
}

TEST_CASE("MLP gradients: dropout on hidden layers (fixed masks of one training step)") {
  DenseLayer h1{3, 8, Activation::Tanh}, h2{8, 6, Activation::Relu};
  h1.dropout = 0.5f;
  h2.dropout = 0.25f;
  const ModelShape shape = make_shape({h1, h2, {6, 3, Activation::Identity}});
  const std::uint32_t epoch = 3;
  DropoutKey drop;
  drop.seed = 5;
  drop.epoch = &epoch;
  drop.pos0 = 8;
  check_gradients(shape, loss_of(LossType::CrossEntropy), 51, {}, &drop);
  check_gradients(shape, loss_of(LossType::Mse), 52, {}, &drop);
  check_gradients(shape, loss_of(LossType::CrossEntropy), 53, {1.0f, 2.0f, 0.5f}, &drop);  // with class weights too
}
