// Checks each CpuBackend elementwise/reduction op against a plain reference loop, with padded member strides whose padding must stay untouched.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "swarm/sampler.h"
#include "math/rng.h"

using namespace tn;

namespace {

constexpr float kSentinel = 12345.0f;

// [S, n] floats with member stride n + pad: data random in [lo, hi), padding = sentinel.
struct Padded {
  int S;
  std::int64_t n, stride;
  std::vector<float> v;
  Padded(int S_, std::int64_t n_, std::int64_t pad, std::uint32_t stream, float lo = -1, float hi = 1)
      : S(S_), n(n_), stride(n_ + pad), v(S_ * (n_ + pad), kSentinel) {
    for (int s = 0; s < S; ++s)
      for (std::int64_t i = 0; i < n; ++i)
        v[s * stride + i] = lo + (hi - lo) * uniform01(random_words(99, stream, Purpose::Data, s * 1000003ull + i).v[0]);
  }
  float& at(int s, std::int64_t i) { return v[s * stride + i]; }
  float* data() { return v.data(); }
  int padding_changed() const {
    int c = 0;
    for (int s = 0; s < S; ++s)
      for (std::int64_t i = n; i < stride; ++i) c += v[s * stride + i] != kSentinel;
    return c;
  }
};

bool close(double got, double ref, double atol = 1e-6, double rtol = 1e-5) {
  return std::abs(got - ref) <= atol + rtol * std::abs(ref);
}

const Activation kActs[] = {Activation::Identity, Activation::Relu, Activation::LeakyRelu,
                            Activation::Tanh, Activation::Sigmoid, Activation::Gelu};

double ref_act(Activation a, double z, double slope) {
  switch (a) {
    case Activation::Identity: return z;
    case Activation::Relu: return std::max(z, 0.0);
    case Activation::LeakyRelu: return z > 0 ? z : slope * z;
    case Activation::Tanh: return std::tanh(z);
    case Activation::Sigmoid: return 1 / (1 + std::exp(-z));
    case Activation::Gelu: return 0.5 * z * (1 + std::erf(z / std::sqrt(2.0)));
  }
  return NAN;
}
double ref_dact(Activation a, double z, double slope) {
  switch (a) {
    case Activation::Identity: return 1;
    case Activation::Relu: return z > 0 ? 1 : 0;
    case Activation::LeakyRelu: return z > 0 ? 1 : slope;
    case Activation::Tanh: return 1 - std::tanh(z) * std::tanh(z);
    case Activation::Sigmoid: { const double s = 1 / (1 + std::exp(-z)); return s * (1 - s); }
    case Activation::Gelu:
      return 0.5 * (1 + std::erf(z / std::sqrt(2.0))) + z * std::exp(-0.5 * z * z) / std::sqrt(2 * M_PI);
  }
  return NAN;
}

struct Dims { int S, rows, cols, pad; };
const Dims kDims[] = {{1, 1, 1, 0}, {3, 4, 5, 3}, {2, 7, 3, 11}, {4, 1, 9, 1}};

}  // namespace

TEST_CASE("bias_activation, activation_backward and bias_grad") {
  CpuBackend be(1);
  const float slope = 0.07f;
  for (const Dims& d : kDims) {
    const std::int64_t n = std::int64_t(d.rows) * d.cols;
    for (Activation act : kActs) {
      for (bool alias : {false, true}) {
        Padded Z(d.S, n, d.pad, 1, -3, 3), b(d.S, d.cols, 2, 2), A(d.S, n, d.pad + 1, 3);
        const Padded Z0 = Z;
        Padded& out = alias ? Z : A;
        be.bias_activation(act, slope, d.S, d.rows, d.cols, Z.data(), Z.stride, b.data(), b.stride,
                           out.data(), out.stride);
        int bad = 0;
        for (int s = 0; s < d.S; ++s)
          for (int r = 0; r < d.rows; ++r)
            for (int c = 0; c < d.cols; ++c) {
              const double z = double(Z0.v[s * Z0.stride + r * d.cols + c]) + b.at(s, c);
              if (!alias && !close(Z.at(s, r * d.cols + c), z)) ++bad;
              if (!close(out.at(s, r * d.cols + c), ref_act(act, z, slope))) ++bad;
            }
        INFO(std::string(to_string(act)), " alias ", alias, " S ", d.S, " rows ", d.rows, " cols ", d.cols);
        CHECK(bad == 0);
        CHECK(Z.padding_changed() == 0);
        CHECK(A.padding_changed() == 0);
      }
      // activation_backward: dA *= f'(Z) given A = f(Z); shared stride for Z, A, dA.
      Padded Z(d.S, n, d.pad, 4, -3, 3), A(d.S, n, d.pad, 5), dA(d.S, n, d.pad, 6);
      for (int s = 0; s < d.S; ++s)
        for (std::int64_t i = 0; i < n; ++i) A.at(s, i) = float(ref_act(act, Z.at(s, i), slope));
      const Padded dA0 = dA;
      be.activation_backward(act, slope, d.S, d.rows, d.cols, Z.data(), A.data(), Z.stride, dA.data());
      int bad = 0;
      for (int s = 0; s < d.S; ++s)
        for (std::int64_t i = 0; i < n; ++i)
          bad += !close(dA.at(s, i), dA0.v[s * dA0.stride + i] * ref_dact(act, Z.at(s, i), slope));
      INFO("activation_backward ", std::string(to_string(act)));
      CHECK(bad == 0);
      CHECK(dA.padding_changed() == 0);
    }
    Padded dZ(d.S, n, d.pad, 7), db(d.S, d.cols, 3, 8);
    be.bias_grad(d.S, d.rows, d.cols, dZ.data(), dZ.stride, db.data(), db.stride);
    int bad = 0;
    for (int s = 0; s < d.S; ++s)
      for (int c = 0; c < d.cols; ++c) {
        double ref = 0;
        for (int r = 0; r < d.rows; ++r) ref += dZ.at(s, r * d.cols + c);
        bad += !close(db.at(s, c), ref);
      }
    CHECK(bad == 0);
    CHECK(db.padding_changed() == 0);
  }
}

namespace {

// Reference loss of one sample (mean over outputs for per-output losses), gradient written
// into g (unscaled by 1/B) and correct count.
double ref_sample_loss(LossType L, float delta, int O, const float* z, const float* y, double* g, double* correct) {
  double total = 0;
  if (L == LossType::CrossEntropy) {
    const int label = int(y[0]);
    double se = 0;
    for (int j = 0; j < O; ++j) se += std::exp(double(z[j]));
    for (int j = 0; j < O; ++j) g[j] = std::exp(double(z[j])) / se - (j == label);
    *correct += int(std::max_element(z, z + O) - z) == label;
    return std::log(se) - z[label];
  }
  for (int j = 0; j < O; ++j) {
    const double d = double(z[j]) - y[j];
    if (L == LossType::Bce) {
      const double sg = 1 / (1 + std::exp(-double(z[j])));
      total += -(y[j] * std::log(sg) + (1 - y[j]) * std::log(1 - sg));
      g[j] = sg - y[j];
      *correct += ((z[j] > 0) == (y[j] > 0.5f)) / double(O);
    } else if (L == LossType::Mse) {
      total += d * d;
      g[j] = 2 * d;
    } else if (L == LossType::Mae) {
      total += std::abs(d);
      g[j] = d > 0 ? 1 : -1;
    } else {
      total += std::abs(d) <= delta ? 0.5 * d * d : delta * (std::abs(d) - 0.5 * delta);
      g[j] = std::abs(d) <= delta ? d : (d > 0 ? delta : -delta);
    }
  }
  for (int j = 0; j < O; ++j) g[j] /= O;
  return total / O;
}

}  // namespace

TEST_CASE("loss_backward and loss_forward for every loss") {
  CpuBackend be(1);
  struct LD { int S, B, O, pad; };
  for (LD d : {LD{1, 1, 2, 0}, LD{3, 4, 3, 5}, LD{2, 5, 1, 2}, LD{2, 6, 4, 1}}) {
    for (LossType L : {LossType::CrossEntropy, LossType::Bce, LossType::Mse, LossType::Mae, LossType::Huber}) {
      if (L == LossType::CrossEntropy && d.O < 2) continue;
      LossConfig cfg;
      cfg.type = L;
      cfg.huber_delta = 0.7f;
      const int T = L == LossType::CrossEntropy ? 1 : d.O;
      Padded Z(d.S, std::int64_t(d.B) * d.O, d.pad, 10, -3, 3), Y(d.S, std::int64_t(d.B) * T, d.pad + 2, 11, -2, 2);
      Padded dZ(d.S, Z.n, d.pad, 12);
      for (int s = 0; s < d.S; ++s)
        for (int b = 0; b < d.B; ++b) {
          float* y = &Y.at(s, b * T);
          const float* z = &Z.at(s, b * d.O);
          if (L == LossType::CrossEntropy)  // every other sample labelled with its argmax
            y[0] = b % 2 ? float(std::max_element(z, z + d.O) - z) : float((s + 3 * b) % d.O);
          if (L == LossType::Bce)
            for (int j = 0; j < T; ++j) y[j] = (b + j) % 3 == 0 ? 0.3f : float((s + b + j) % 2);
        }
      std::vector<double> loss(d.S, 0.25), correct(d.S, 1.0), loss_f(d.S, 0.25), correct_f(d.S, 1.0);
      be.loss_backward(cfg, d.S, d.B, d.O, Z.data(), Z.stride, Y.data(), Y.stride, dZ.data(), loss.data(), correct.data(), nullptr);
      be.loss_forward(cfg, d.S, d.B, d.O, Z.data(), Z.stride, Y.data(), Y.stride, loss_f.data(), correct_f.data(), nullptr);
      int bad = 0;
      std::vector<double> g(d.O);
      for (int s = 0; s < d.S; ++s) {
        double ref_loss = 0.25, ref_correct = 1.0;
        for (int b = 0; b < d.B; ++b) {
          ref_loss += ref_sample_loss(L, cfg.huber_delta, d.O, &Z.at(s, b * d.O), &Y.at(s, b * T), g.data(), &ref_correct);
          for (int j = 0; j < d.O; ++j) bad += !close(dZ.at(s, b * d.O + j), g[j] / d.B);
        }
        INFO(std::string(to_string(L)), " member ", s, " loss ", loss[s], " ref ", ref_loss);
        CHECK(close(loss[s], ref_loss, 1e-6, 1e-5));
        CHECK(close(correct[s], ref_correct, 1e-9, 1e-9));
        CHECK(close(loss_f[s], ref_loss, 1e-6, 1e-5));
        CHECK(correct_f[s] == correct[s]);
      }
      INFO(std::string(to_string(L)), " S B O ", d.S, " ", d.B, " ", d.O);
      CHECK(bad == 0);
      CHECK(dZ.padding_changed() == 0);
    }
  }
}

TEST_CASE("output_transform: softmax, sigmoid, identity") {
  CpuBackend be(1);
  const int S = 3, B = 4, O = 5;
  for (LossType L : {LossType::CrossEntropy, LossType::Bce, LossType::Mse, LossType::Huber}) {
    Padded Z(S, B * O, 3, 20, -4, 4), P(S, B * O, 6, 21);
    be.output_transform(L, S, B, O, Z.data(), Z.stride, P.data(), P.stride);
    int bad = 0;
    for (int s = 0; s < S; ++s)
      for (int b = 0; b < B; ++b) {
        double se = 0, sum_p = 0;
        for (int j = 0; j < O; ++j) se += std::exp(double(Z.at(s, b * O + j)));
        for (int j = 0; j < O; ++j) {
          const double z = Z.at(s, b * O + j), p = P.at(s, b * O + j);
          sum_p += p;
          if (L == LossType::CrossEntropy) bad += !close(p, std::exp(z) / se);
          else if (L == LossType::Bce) bad += !close(p, 1 / (1 + std::exp(-z)));
          else bad += p != z;
        }
        if (L == LossType::CrossEntropy) bad += !close(sum_p, 1.0, 1e-6, 0);
      }
    INFO(std::string(to_string(L)));
    CHECK(bad == 0);
    CHECK(P.padding_changed() == 0);
  }
}

TEST_CASE("gather_batch: shared and bootstrap samplers, member offset, strides") {
  CpuBackend be(1);
  const int n = 13, F = 3, T = 2, S = 3, Bcap = 6, B = 5;
  std::vector<float> X(n * F), Y(n * T);
  for (int i = 0; i < n; ++i) {
    for (int f = 0; f < F; ++f) X[i * F + f] = 100.0f * i + f;
    for (int t = 0; t < T; ++t) Y[i * T + t] = -100.0f * i - t - 1;
  }
  std::vector<std::uint32_t> order(n);
  epoch_order(31, 2, n, order.data());
  const std::uint64_t seed = 555;
  for (int mode = 0; mode < 3; ++mode) {  // shared unshuffled, shared shuffled, bootstrap shuffled
    BatchSampler smp;
    smp.mode = mode == 2 ? SampleMode::Bootstrap : SampleMode::Shared;
    smp.seed = seed;
    smp.n = n;
    smp.order = mode == 0 ? nullptr : order.data();
    const std::uint32_t member0 = 5, pos0 = 7;
    Padded Xb(S, std::int64_t(Bcap) * F, 2, 30), Yb(S, std::int64_t(Bcap) * T, 1, 31);
    for (float& v : Xb.v) v = kSentinel;
    for (float& v : Yb.v) v = kSentinel;
    be.gather_batch(smp, member0, S, pos0, B, X.data(), F, Y.data(), T, Xb.data(), Xb.stride, Yb.data(), Yb.stride);
    int bad = 0, untouched_ok = 0;
    std::vector<std::vector<int>> rows(S);
    for (int s = 0; s < S; ++s) {
      for (int b = 0; b < B; ++b) {
        const std::uint32_t pos = pos0 + b, j = mode == 0 ? pos : order[pos];
        const int i = mode == 2
            ? int(uniform_below(random_words(seed, member0 + s, Purpose::Bootstrap, j).v[0], n))
            : int(j);
        rows[s].push_back(i);
        for (int f = 0; f < F; ++f) bad += Xb.at(s, b * F + f) != X[i * F + f];
        for (int t = 0; t < T; ++t) bad += Yb.at(s, b * T + t) != Y[i * T + t];
      }
      for (int k = B * F; k < Xb.stride; ++k) untouched_ok += Xb.at(s, k) == kSentinel;
      for (int k = B * T; k < Yb.stride; ++k) untouched_ok += Yb.at(s, k) == kSentinel;
    }
    INFO("mode ", mode);
    CHECK(bad == 0);
    CHECK(untouched_ok == S * ((Xb.stride - B * F) + (Yb.stride - B * T)));
    if (mode == 2) CHECK((rows[0] != rows[1] || rows[1] != rows[2]));
    else CHECK((rows[0] == rows[1] && rows[1] == rows[2]));
  }
}

TEST_CASE("sum_squares adds per-member squared norms") {
  CpuBackend be(1);
  Padded x(3, 1000, 5, 40, -2, 2);
  std::vector<double> norm2 = {1.0, 2.0, 3.0};
  be.sum_squares(3, x.n, x.data(), x.stride, norm2.data());
  for (int s = 0; s < 3; ++s) {
    double ref = s + 1.0;
    for (int i = 0; i < 1000; ++i) ref += double(x.at(s, i)) * x.at(s, i);
    CHECK(norm2[s] == doctest::Approx(ref).epsilon(1e-12));
  }
  be.sum_squares(3, 0, x.data(), x.stride, norm2.data());  // n = 0 adds nothing
  CHECK(norm2[0] == doctest::Approx(1.0 + [&] { double r = 0; for (int i = 0; i < 1000; ++i) r += double(x.at(0, i)) * x.at(0, i); return r; }()).epsilon(1e-12));
}

TEST_CASE("optimizer_update matches update_param per element, with clipping") {
  CpuBackend be(1);
  const int S = 3;
  const std::int64_t n = 7, pad = 3;
  for (OptimizerType O : {OptimizerType::Sgd, OptimizerType::Adam, OptimizerType::AdamW, OptimizerType::RmsProp}) {
    for (float clip : {0.0f, 1.0f}) {
      std::vector<OptStep> h(S);
      for (int s = 0; s < S; ++s) {
        h[s] = OptStep{0.01f * (s + 1), 0.9f, 0.999f, 1e-8f, 0.01f, 0.5f, 0.99f, 0.19f, 0.002f, s == 2};
      }
      Padded P(S, n, pad, 50), G(S, n, pad, 51, -3, 3), S1(S, n, pad, 52, 0, 0.5), S2(S, n, pad, 53, 0, 0.5);
      // With clip = 0 the huge norms must be ignored; with clip = 1 the scales are 1, 0.1, 0.5.
      const std::vector<double> norm2 = clip > 0 ? std::vector<double>{0.25, 100.0, 4.0}
                                                 : std::vector<double>{1e6, 1e6, 1e6};
      Padded rP = P, rS1 = S1, rS2 = S2;
      be.optimizer_update(O, S, n, P.data(), G.data(), S1.data(), S2.data(), P.stride, h.data(), clip, norm2.data());
      int bad = 0;
      for (int s = 0; s < S; ++s) {
        const double k = clip > 0 ? std::min(1.0, clip / (std::sqrt(norm2[s]) + 1e-6)) : 1.0;
        for (std::int64_t i = 0; i < n; ++i) {
          const float g = float(G.at(s, i) * k);
          dispatch_optimizer(O, [&]<OptimizerType Q>() { update_param<Q>(rP.at(s, i), g, rS1.at(s, i), rS2.at(s, i), h[s]); });
          bad += !close(P.at(s, i), rP.at(s, i)) + !close(S1.at(s, i), rS1.at(s, i)) + !close(S2.at(s, i), rS2.at(s, i));
        }
      }
      INFO(std::string(to_string(O)), " clip ", clip);
      CHECK(bad == 0);
      CHECK(P.padding_changed() + S1.padding_changed() + S2.padding_changed() == 0);
    }
  }
  // Clipping really changes the SGD step: member with norm 10 and clip 1 moves 10x less.
  float p[2] = {1.0f, 1.0f}, g[2] = {2.0f, 2.0f}, s1[2] = {}, s2[2] = {};
  OptStep h{0.1f, 0, 0, 0, 0, 0, 0, 1, 1, false};
  const double n2[1] = {100.0};
  be.optimizer_update(OptimizerType::Sgd, 1, 2, p, g, s1, s2, 2, &h, 1.0f, n2);
  CHECK(p[0] == doctest::Approx(1.0 - 0.1 * 2.0 * (1.0 / (10.0 + 1e-6))).epsilon(1e-6));
}

TEST_CASE("for_each_block covers members 0..S-1 once in blocks of at most max_block") {
  for (int threads : {1, 2}) {
    CpuBackend be(threads);
    CHECK(be.workers() == threads);
    for (int S : {0, 1, 7, 10, 33}) {
      for (int max_block : {1, 3, 10, 64}) {
        std::vector<int> hits(S, 0);
        std::mutex mu;
        bool ok = true;
        be.for_each_block(S, max_block, [&](int b0, int b1, int w) {
          std::lock_guard<std::mutex> lock(mu);
          ok = ok && b0 < b1 && b1 - b0 <= max_block && b0 >= 0 && b1 <= S && w >= 0 && w < threads;
          for (int i = b0; i < b1 && i < S && i >= 0; ++i) ++hits[i];
        });
        INFO("threads ", threads, " S ", S, " max_block ", max_block);
        CHECK(ok);
        CHECK(std::all_of(hits.begin(), hits.end(), [](int h) { return h == 1; }));
      }
    }
    std::atomic<int> calls{0};
    CHECK_THROWS_AS(be.for_each_block(10, 2, [&](int b0, int b1, int) {
                      ++calls;
                      if (b0 <= 4 && 4 < b1) throw std::runtime_error("boom");
                    }),
                    std::runtime_error);
    CHECK(calls.load() >= 1);
  }
}
