// Checks math/: activation and loss gradients by finite differences, optimizer steps against hand-written PyTorch formulas, Philox KATs, RNG/sampler statistics and LR schedules.
#include <doctest/doctest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "swarm/sampler.h"
#include "math/activations.h"
#include "math/fastmath.h"
#include "math/losses.h"
#include "math/optimizers.h"
#include "math/rng.h"
#include "train/schedule.h"

using namespace tn;

namespace {

// ‖g − ĝ‖ / ‖g + ĝ‖ (0 when both vanish).
double rel_err(const std::vector<double>& g, const std::vector<double>& h) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < g.size(); ++i) {
    num += (g[i] - h[i]) * (g[i] - h[i]);
    den += (g[i] + h[i]) * (g[i] + h[i]);
  }
  return den == 0 ? std::sqrt(num) : std::sqrt(num / den);
}

template <class F>
double central_diff(F&& f, double x, double eps = 1e-6) { return (f(x + eps) - f(x - eps)) / (2 * eps); }

const double kPoints[] = {-3.1, -1.7, -0.6, -0.11, -0.0042, 0.0037, 0.09, 0.45, 1.3, 2.2, 4.5};

template <Activation A>
void check_activation(double slope) {
  std::vector<double> an, fd;
  for (double z : kPoints) {
    an.push_back(act_derivative<A, double>(z, act_forward<A, double>(z, slope), slope));
    fd.push_back(central_diff([&](double x) { return act_forward<A, double>(x, slope); }, z));
  }
  const double e = rel_err(an, fd);
  INFO(std::string(to_string(A)), " rel err ", e);
  CHECK(e < 1e-7);
}

}  // namespace

TEST_CASE("activation derivatives match central differences (double)") {
  check_activation<Activation::Identity>(0.0);
  check_activation<Activation::Relu>(0.0);
  check_activation<Activation::LeakyRelu>(0.1);
  check_activation<Activation::LeakyRelu>(0.01);
  check_activation<Activation::Tanh>(0.0);
  check_activation<Activation::Sigmoid>(0.0);
  check_activation<Activation::Gelu>(0.0);
  // Spot values from the definitions.
  CHECK(act_forward<Activation::Gelu, double>(1.0, 0) == doctest::Approx(0.8413447460685429).epsilon(1e-12));
  CHECK(act_forward<Activation::LeakyRelu, double>(-2.0, 0.1) == doctest::Approx(-0.2));
  CHECK(act_forward<Activation::Sigmoid, double>(0.0, 0) == 0.5);
}

namespace {
struct FastErr { double exp = 0, log = 0, tanh = 0, erf = 0; };
// Worst errors of fastmath.h against libm in double: relative for exp and log, absolute for
// tanh and erf.
FastErr fast_math_errors() {
  FastErr e;
  for (float x = -87.3f; x <= 88.3f; x += 0.00731f)
    e.exp = std::max(e.exp, std::abs(fast_exp(x) - std::exp(double(x))) / std::exp(double(x)));
  for (float x = 1e-37f; x < 3e38f; x *= 1.00037f)
    e.log = std::max(e.log, std::abs(fast_log(x) - std::log(double(x))) / std::max(1e-300, std::abs(std::log(double(x)))));
  for (float x = -9.0f; x <= 9.0f; x += 0.000271f) {
    e.tanh = std::max(e.tanh, std::abs(fast_tanh(x) - std::tanh(double(x))));
    e.erf = std::max(e.erf, std::abs(fast_erf(x) - std::erf(double(x))));
  }
  return e;
}
}  // namespace

TEST_CASE("fastmath.h float functions against libm") {
  const FastErr e = fast_math_errors();
  MESSAGE("fast_exp rel ", e.exp, ", fast_log rel ", e.log, ", fast_tanh abs ", e.tanh, ", fast_erf abs ", e.erf);
  CHECK(e.exp <= 4 * FLT_EPSILON);  // "within a few ulp"
  CHECK(e.log <= 4 * FLT_EPSILON);
  CHECK(e.tanh <= 2e-7);
  CHECK(e.erf <= 6e-7);  // fastmath.h's bound: A&S 7.1.26 (1.5e-7) plus float rounding (5.6e-7 seen)
  CHECK(std::isnan(fast_exp(NAN)));
  CHECK(std::isnan(fast_log(-1.0f)));
  CHECK(fast_log(0.0f) == -INFINITY);
  CHECK(std::isfinite(fast_exp(88.5f)));  // inputs clamped to [-87.3, 88.3]
  CHECK(std::isfinite(fast_exp(1000.0f)));
  CHECK(fast_exp(-200.0f) >= 0.0f);
  CHECK(fast_exp(-200.0f) < 1e-37f);
  CHECK(fast_tanh(20.0f) == 1.0f);
  CHECK(fast_tanh(-20.0f) == -1.0f);
  CHECK(fast_erf(-6.0f) == doctest::Approx(-1.0f));
}

TEST_CASE("softmax_xent: value and gradient") {
  const std::vector<std::vector<double>> logits = {
      {0.3, -1.2}, {2.0, 0.5, -0.7}, {0.1, 0.1, 0.3, -2.0, 1.7}, {40.0, -30.0, 12.0, 39.5}};
  for (const auto& z0 : logits) {
    const int n = static_cast<int>(z0.size());
    for (int label = 0; label < n; ++label) {
      std::vector<double> z = z0, g(n), tmp(n);
      int am = -1;
      const double L = softmax_xent(z.data(), n, label, g.data(), &am);
      // Reference: −log softmax(z)[label] with a naive log-sum-exp shifted by z[0].
      double s = 0;
      for (double v : z0) s += std::exp(v - z0[0]);
      CHECK(L == doctest::Approx(std::log(s) + z0[0] - z0[label]).epsilon(1e-12));
      CHECK(am == static_cast<int>(std::max_element(z0.begin(), z0.end()) - z0.begin()));
      std::vector<double> fd(n);
      for (int j = 0; j < n; ++j)
        fd[j] = central_diff([&](double x) { z = z0; z[j] = x; int a; return softmax_xent(z.data(), n, label, tmp.data(), &a); }, z0[j]);
      const double e = rel_err(g, fd);
      INFO("n=", n, " label=", label, " rel err ", e);
      CHECK(e < 1e-6);
    }
  }
}

TEST_CASE("bce_logit: value, gradient and stability") {
  for (double y : {0.0, 0.3, 1.0}) {
    std::vector<double> an, fd;
    for (double z : {-6.0, -1.5, -0.2, 0.0, 0.7, 3.0, 9.0}) {
      double g;
      const double L = bce_logit(z, y, &g);
      const double sig = 1 / (1 + std::exp(-z));
      CHECK(L == doctest::Approx(-(y * std::log(sig) + (1 - y) * std::log(1 - sig))).epsilon(1e-9));
      an.push_back(g);
      fd.push_back(central_diff([&](double x) { double t; return bce_logit(x, y, &t); }, z));
    }
    const double e = rel_err(an, fd);
    INFO("y=", y, " rel err ", e);
    CHECK(e < 1e-6);
  }
  for (double z : {-80.0, 80.0}) {
    for (double y : {0.0, 1.0}) {
      double g;
      const double L = bce_logit(z, y, &g);
      const float Lf = [&] { float gf; return bce_logit(static_cast<float>(z), static_cast<float>(y), &gf); }();
      CHECK(std::isfinite(L));
      CHECK(std::isfinite(Lf));
      // Wrong side: loss ≈ |z|; right side: loss ≈ e^{−80}.
      const bool wrong = (z > 0) != (y > 0.5);
      CHECK(L == doctest::Approx(wrong ? 80.0 : std::exp(-80.0)).epsilon(1e-9).scale(0));  // relative
      CHECK(Lf == doctest::Approx(wrong ? 80.0f : 0.0f).epsilon(1e-6));
      CHECK(g == doctest::Approx((z > 0 ? 1.0 : 0.0) - y).epsilon(1e-12));
    }
  }
}

TEST_CASE("regression losses: gradients by central differences") {
  std::vector<double> an, fd;
  auto add = [&](auto loss, double p, double y) {
    double g;
    loss(p, y, &g);
    an.push_back(g);
    fd.push_back(central_diff([&](double x) { double t; return loss(x, y, &t); }, p));
  };
  auto mse = [](double p, double y, double* g) { return mse_elem(p, y, g); };
  auto mae = [](double p, double y, double* g) { return mae_elem(p, y, g); };
  const double delta = 0.8;
  auto hub = [&](double p, double y, double* g) { return huber_elem(p, y, delta, g); };
  for (double p : {-2.5, -0.3, 0.4, 1.9}) {
    for (double y : {-1.0, 0.25, 1.5}) {
      an.clear();
      fd.clear();
      add(mse, p, y);
      if (std::abs(p - y) > 1e-3) add(mae, p, y);
      add(hub, p, y);
      CHECK(rel_err(an, fd) < 1e-7);
    }
  }
  double g;
  CHECK(mse_elem(3.0, 1.0, &g) == 4.0);
  CHECK(mae_elem(-1.0, 1.5, &g) == 2.5);
  CHECK(g == -1.0);
  // Huber quadratic region: ½d², linear region: δ(|d| − ½δ), both from the formula.
  CHECK(huber_elem(0.5, 0.0, delta, &g) == doctest::Approx(0.125));
  CHECK(g == doctest::Approx(0.5));
  CHECK(huber_elem(-2.0, 1.0, delta, &g) == doctest::Approx(delta * (3.0 - 0.5 * delta)));
  CHECK(g == doctest::Approx(-delta));
}

namespace {

OptStep make_h(double lr, double b1, double b2, double eps, double wd, double mom, double alpha,
               bool nesterov, int t) {
  OptStep h{};
  h.lr = float(lr); h.beta1 = float(b1); h.beta2 = float(b2); h.eps = float(eps);
  h.weight_decay = float(wd); h.momentum = float(mom); h.alpha = float(alpha); h.nesterov = nesterov;
  h.bias_correction1 = float(1 - std::pow(float(b1), t));
  h.bias_correction2 = float(1 - std::pow(float(b2), t));
  return h;
}

const double kGrads[] = {0.3, -0.7, 1.2};
const double kP0 = 1.5;

// Runs 3 steps of update_param<O> and returns the parameter after each.
template <OptimizerType O>
std::vector<double> run_steps(double lr, double b1, double b2, double eps, double wd, double mom,
                              double alpha, bool nesterov) {
  float p = float(kP0), s1 = 0, s2 = 0;
  std::vector<double> out;
  for (int t = 1; t <= 3; ++t) {
    update_param<O>(p, float(kGrads[t - 1]), s1, s2, make_h(lr, b1, b2, eps, wd, mom, alpha, nesterov, t));
    out.push_back(p);
  }
  return out;
}

void check_close(const std::vector<double>& got, const std::vector<double>& want) {
  for (std::size_t i = 0; i < got.size(); ++i) {
    INFO("step ", i + 1, ": got ", got[i], " want ", want[i]);
    CHECK(std::abs(got[i] - want[i]) <= 1e-6 + 1e-5 * std::abs(want[i]));
  }
}

}  // namespace

TEST_CASE("optimizer steps match the PyTorch formulas") {
  SUBCASE("sgd (plain, momentum, nesterov, weight decay)") {
    for (double mom : {0.0, 0.9}) {
      for (bool nest : {false, true}) {
        for (double wd : {0.0, 0.05}) {
          if (nest && mom == 0) continue;
          const double lr = 0.1;
          double p = kP0, buf = 0;
          std::vector<double> want;
          for (int t = 1; t <= 3; ++t) {
            double d = kGrads[t - 1] + wd * p;           // d_p = grad + wd·p
            if (mom != 0) {
              buf = t == 1 ? d : mom * buf + d;            // buf = μ·buf + d_p (dampening 0)
              d = nest ? d + mom * buf : buf;              // nesterov: d_p + μ·buf
            }
            p -= lr * d;
            want.push_back(p);
          }
          INFO("momentum ", mom, " nesterov ", nest, " wd ", wd);
          check_close(run_steps<OptimizerType::Sgd>(lr, 0, 0, 0, wd, mom, 0, nest), want);
        }
      }
    }
  }
  SUBCASE("adam and adamw") {
    const double lr = 0.01, b1 = 0.9, b2 = 0.999;
    // eps = 0.05 checks that eps sits outside the square root.
    for (auto [wd, decoupled, eps] : {std::tuple{0.0, false, 1e-8}, {0.1, false, 1e-8}, {0.1, true, 1e-8},
                                      {0.0, true, 0.05}, {0.1, false, 0.05}, {0.1, true, 0.05}}) {
      double p = kP0, m = 0, v = 0;
      std::vector<double> want;
      for (int t = 1; t <= 3; ++t) {
        double g = kGrads[t - 1];
        if (decoupled) p *= 1 - lr * wd;  // AdamW: θ ← θ − γλθ
        else g += wd * p;                 // Adam: L2 in the gradient
        m = b1 * m + (1 - b1) * g;
        v = b2 * v + (1 - b2) * g * g;
        const double mhat = m / (1 - std::pow(b1, t)), vhat = v / (1 - std::pow(b2, t));
        p -= lr * mhat / (std::sqrt(vhat) + eps);
        want.push_back(p);
      }
      INFO("wd ", wd, " decoupled ", decoupled, " eps ", eps);
      check_close(decoupled ? run_steps<OptimizerType::AdamW>(lr, b1, b2, eps, wd, 0, 0, false)
                            : run_steps<OptimizerType::Adam>(lr, b1, b2, eps, wd, 0, 0, false), want);
    }
    // With weight decay the two rules really differ.
    const auto a = run_steps<OptimizerType::Adam>(lr, b1, b2, 1e-8, 0.1, 0, 0, false);
    const auto w = run_steps<OptimizerType::AdamW>(lr, b1, b2, 1e-8, 0.1, 0, 0, false);
    CHECK(std::abs(a[2] - w[2]) > 1e-4);
  }
  SUBCASE("rmsprop with and without momentum") {
    const double lr = 0.01, alpha = 0.99;
    for (auto [mom, wd, eps] : {std::tuple{0.0, 0.0, 1e-8}, {0.8, 0.0, 1e-8}, {0.0, 0.02, 1e-8},
                                {0.8, 0.02, 1e-8}, {0.0, 0.0, 0.05}, {0.8, 0.02, 0.05}}) {
      double p = kP0, v = 0, buf = 0;
      std::vector<double> want;
      for (int t = 1; t <= 3; ++t) {
        const double g = kGrads[t - 1] + wd * p;
        v = alpha * v + (1 - alpha) * g * g;
        const double avg = std::sqrt(v) + eps;
        buf = mom * buf + g / avg;  // momentum buffer (only used when momentum > 0)
        p -= lr * (mom > 0 ? buf : g / avg);
        want.push_back(p);
      }
      INFO("momentum ", mom, " wd ", wd, " eps ", eps);
      check_close(run_steps<OptimizerType::RmsProp>(lr, 0, 0, eps, wd, mom, alpha, false), want);
    }
  }
}

TEST_CASE("optimizer.l1: one step by hand, l1·sign(w) added to the gradient") {
  // p = 0.5, −2, 0 with gradient 1 and l1 = 0.3: the gradients become 1.3, 0.7, 1.0 (sign 0).
  OptStep h{};
  h.lr = 0.1f;
  h.l1 = 0.3f;
  h.beta1 = 0.9f;
  h.beta2 = 0.999f;
  h.eps = 1e-8f;
  h.bias_correction1 = 0.1f;     // 1 − 0.9
  h.bias_correction2 = 0.001f;   // 1 − 0.999
  const float p0[3] = {0.5f, -2.0f, 0.0f};
  const float sgd[3] = {0.5f - 0.13f, -2.0f - 0.07f, -0.1f};
  for (int i = 0; i < 3; ++i) {
    float p = p0[i], s1 = 0, s2 = 0;
    update_param<OptimizerType::Sgd>(p, 1.0f, s1, s2, h);
    CHECK(p == doctest::Approx(sgd[i]).epsilon(1e-6));
  }
  // Adam's first step moves by lr·g/(|g| + eps) ≈ lr·sign(g + l1·sign(p)): p = 0.5 with g = −0.2
  // gets +0.1 and steps down; p = −2 with g = 0.2 gets −0.1 and steps up. L1 is not decoupled
  // in adamw either: the same step.
  for (float gsign : {1.0f, -1.0f}) {
    const float p_start = gsign > 0 ? -2.0f : 0.5f;
    float p = p_start, s1 = 0, s2 = 0, q = p_start, r1 = 0, r2 = 0;
    update_param<OptimizerType::Adam>(p, 0.2f * gsign, s1, s2, h);
    update_param<OptimizerType::AdamW>(q, 0.2f * gsign, r1, r2, h);
    CHECK(p == doctest::Approx(p_start + 0.1f * gsign).epsilon(1e-5));
    CHECK(q == p);
  }
  // l1 = 0 changes nothing.
  h.l1 = 0.0f;
  float p = 0.5f, s1 = 0, s2 = 0;
  update_param<OptimizerType::Sgd>(p, 1.0f, s1, s2, h);
  CHECK(p == 0.4f);
}

TEST_CASE("clip_scale is min(1, clip / (norm + 1e-6))") {
  CHECK(clip_scale(1.0f, 16.0) == doctest::Approx(1.0 / (4.0 + 1e-6)).epsilon(1e-6));
  CHECK(clip_scale(0.5f, 2.25) == doctest::Approx(0.5 / 1.5).epsilon(1e-6));
  CHECK(clip_scale(10.0f, 16.0) == 1.0f);
  CHECK(clip_scale(1.0f, 0.0) == 1.0f);
  CHECK(clip_scale(3.0f, 9.0) == doctest::Approx(3.0 / (3.0 + 1e-6)).epsilon(1e-7));
}

TEST_CASE("philox4x32_10 known-answer vectors (Random123 kat_vectors)") {
  struct Kat { std::uint32_t c[4], k[2], out[4]; };
  const Kat kats[] = {
      {{0, 0, 0, 0}, {0, 0}, {0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u}},
      {{0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu}, {0xffffffffu, 0xffffffffu},
       {0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu}},
      {{0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u}, {0xa4093822u, 0x299f31d0u},
       {0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u}},
  };
  for (const Kat& k : kats) {
    const Philox4x32 r = philox4x32_10(k.c[0], k.c[1], k.c[2], k.c[3], k.k[0], k.k[1]);
    for (int i = 0; i < 4; ++i) CHECK(r.v[i] == k.out[i]);
  }
}

TEST_CASE("random_words is a pure function of (seed, member, purpose, counter)") {
  auto eq = [](Philox4x32 a, Philox4x32 b) { return std::equal(a.v, a.v + 4, b.v); };
  const Philox4x32 base = random_words(42, 3, Purpose::Init, 7);
  CHECK(eq(base, random_words(42, 3, Purpose::Init, 7)));
  CHECK_FALSE(eq(base, random_words(43, 3, Purpose::Init, 7)));
  CHECK_FALSE(eq(base, random_words(42, 4, Purpose::Init, 7)));
  CHECK_FALSE(eq(base, random_words(42, 3, Purpose::Shuffle, 7)));
  CHECK_FALSE(eq(base, random_words(42, 3, Purpose::Init, 8)));
  CHECK_FALSE(eq(base, random_words(42, 3, Purpose::Init, 7 + (1ull << 32))));  // high counter bits
  CHECK_FALSE(eq(base, random_words(42 + (1ull << 32), 3, Purpose::Init, 7)));  // high seed bits
}

TEST_CASE("uniform01, standard_normal and uniform_below statistics") {
  const int N = 100000;
  double su = 0, sn = 0, sn2 = 0;
  float umin = 1, umax = 0;
  int bad = 0;
  for (int i = 0; i < N; ++i) {
    const Philox4x32 r = random_words(9, 0, Purpose::Data, i);
    const float u = uniform01(r.v[0]);
    umin = std::min(umin, u);
    umax = std::max(umax, u);
    su += u;
    const float z = standard_normal(r.v[1], r.v[2]);
    bad += !std::isfinite(z);
    sn += z;
    sn2 += double(z) * z;
    bad += uniform_below(r.v[3], 7u) >= 7u;
  }
  CHECK(bad == 0);
  const double mean_u = su / N, mean_n = sn / N, var_n = sn2 / N - mean_n * mean_n;
  MESSAGE("uniform mean ", mean_u, "  normal mean ", mean_n, " var ", var_n);
  // Standard errors: uniform mean 0.289/√N ≈ 9e-4; normal mean 3.2e-3; variance √(2/N) ≈ 4.5e-3.
  // Bounds are ~5 standard errors.
  CHECK(std::abs(mean_u - 0.5) < 0.005);
  CHECK(umin >= 0.0f);
  CHECK(umax < 1.0f);
  CHECK(std::abs(mean_n) < 0.016);
  CHECK(std::abs(var_n - 1.0) < 0.025);
  CHECK(uniform_below(0xffffffffu, 10u) == 9u);
  CHECK(uniform_below(0u, 10u) == 0u);
  CHECK(uniform01(0xffffffffu) < 1.0f);
  CHECK(uniform01(0u) == 0.0f);
  // 53-bit doubles: all bits set gives 1 − 2⁻⁵³, the lowest used bit (bit 11 of lo) 2⁻⁵³.
  CHECK(uniform01_double(0xffffffffu, 0xffffffffu) == 1.0 - std::ldexp(1.0, -53));
  CHECK(uniform01_double(0u, 1u << 11) == std::ldexp(1.0, -53));
  CHECK(uniform01_double(0x80000000u, 0u) == 0.5);
}

TEST_CASE("bootstrap resampling statistics") {
  const std::uint32_t n = 10000;
  std::vector<std::uint32_t> a(n), b(n);
  int out_of_range = 0;
  for (std::uint32_t j = 0; j < n; ++j) {
    a[j] = BatchSampler::bootstrap_index(123, 0, j, n);
    b[j] = BatchSampler::bootstrap_index(123, 1, j, n);
    out_of_range += (a[j] >= n) + (b[j] >= n);
  }
  CHECK(out_of_range == 0);
  const std::set<std::uint32_t> ua(a.begin(), a.end()), ub(b.begin(), b.end());
  const double expect = 1.0 - std::pow(1.0 - 1.0 / n, n);  // ≈ 1 − 1/e, sd ≈ 0.003
  MESSAGE("unique fraction ", double(ua.size()) / n, " / ", double(ub.size()) / n, " expected ", expect);
  CHECK(std::abs(double(ua.size()) / n - expect) < 0.01);
  CHECK(std::abs(double(ub.size()) / n - expect) < 0.01);
  int same = 0;
  for (std::uint32_t j = 0; j < n; ++j) same += a[j] == b[j];
  CHECK(same < 20);  // two independent resamples agree at ~1 position in expectation
  // Sampler::index in bootstrap mode goes through the order, then the member's resample.
  std::vector<std::uint32_t> order(n);
  epoch_order(5, 0, n, order.data());
  BatchSampler s{SampleMode::Bootstrap, 123, n, order.data()};
  CHECK(s.index(1, 17) == b[order[17]]);
  s.mode = SampleMode::Shared;
  CHECK(s.index(1, 17) == order[17]);
}

TEST_CASE("epoch_order is a deterministic per-epoch permutation") {
  for (std::uint32_t n : {1u, 2u, 7u, 1000u}) {
    std::vector<std::uint32_t> e0(n), e0b(n), e1(n);
    epoch_order(77, 0, n, e0.data());
    epoch_order(77, 0, n, e0b.data());
    epoch_order(77, 1, n, e1.data());
    std::vector<std::uint32_t> iota(n), sorted0 = e0, sorted1 = e1;
    for (std::uint32_t i = 0; i < n; ++i) iota[i] = i;
    std::sort(sorted0.begin(), sorted0.end());
    std::sort(sorted1.begin(), sorted1.end());
    CHECK(sorted0 == iota);
    CHECK(sorted1 == iota);
    CHECK(e0 == e0b);
    if (n >= 7) CHECK(e0 != e1);
    if (n == 1000) {  // a shuffled order moves almost everything
      int fixed = 0;
      for (std::uint32_t i = 0; i < n; ++i) fixed += e0[i] == i;
      CHECK(fixed < 10);
    }
  }
  // Uniform over all 3! orders (Fisher–Yates; e.g. Sattolo's variant gives only the 2 cycles):
  // 6000 epochs, expected 1000 each, sd ≈ 29; allow ±150.
  std::vector<int> count(9 * 9 * 9, 0);
  for (std::uint32_t e = 0; e < 6000; ++e) {
    std::uint32_t o[3];
    epoch_order(3, e, 3, o);
    ++count[o[0] * 81 + o[1] * 9 + o[2]];
  }
  int distinct = 0;
  for (int c : count) {
    if (c == 0) continue;
    ++distinct;
    CHECK(std::abs(c - 1000) < 150);
  }
  CHECK(distinct == 6);
}

TEST_CASE("make_schedule factors") {
  // {type, warmup_epochs, step_every, gamma, min_lr} with base lr 0.1, 10 steps/epoch, 10
  // epochs (100 steps); expected factors at steps t by the formulas in the comments.
  struct Case { ScheduleType type; double warmup; int every; double gamma, min_lr; std::vector<std::pair<double, double>> t_f; };
  const double r = 0.1;  // min_lr / lr for cosine and linear below
  const Case cases[] = {
      {ScheduleType::Constant, 0, 0, 0.1, 0, {{0, 1}, {1, 1}, {50, 1}, {99, 1}}},
      // warm-up (t+1)/20 over 20 steps, then 1
      {ScheduleType::Constant, 2, 0, 0.1, 0, {{0, 0.05}, {9, 0.5}, {19, 1}, {20, 1}, {99, 1}}},
      {ScheduleType::Constant, 0.5, 0, 0.1, 0, {{0, 0.2}, {4, 1}, {5, 1}}},
      // γ^⌊t/30⌋
      {ScheduleType::Step, 0, 3, 0.5, 0, {{0, 1}, {29, 1}, {30, 0.5}, {59, 0.5}, {60, 0.25}, {90, 0.125}}},
      // r + (1 − r)·½(1 + cos πp), p = t/100
      {ScheduleType::Cosine, 0, 0, 0.1, 0.01,
       {{0, 1}, {25, r + (1 - r) * 0.5 * (1 + std::cos(M_PI / 4))}, {50, r + (1 - r) * 0.5}, {100, r}}},
      // warm-up 10 steps, then p = (t − 10)/90
      {ScheduleType::Cosine, 1, 0, 0.1, 0.01, {{0, 0.1}, {9, 1}, {10, 1}, {55, 0.55}, {100, r}}},
      // 1 − (1 − r')·p with r' = 0.2
      {ScheduleType::Linear, 0, 0, 0.1, 0.02, {{0, 1}, {50, 1 - 0.8 * 0.5}, {75, 1 - 0.8 * 0.75}, {100, 0.2}}},
  };
  for (const Case& k : cases) {
    ScheduleConfig c;
    c.type = k.type;
    c.warmup_epochs = k.warmup;
    c.step_every = k.every;
    c.gamma = k.gamma;
    c.min_lr = k.min_lr;
    const LrSchedule s = make_schedule(c, 0.1, 10, 10);
    for (const auto& [t, f] : k.t_f) {
      INFO("type ", int(k.type), " warmup ", k.warmup, " t ", t);
      CHECK(s.factor(t) == doctest::Approx(f).epsilon(1e-12));
    }
  }
  ScheduleConfig c;
  c.type = ScheduleType::Cosine;
  c.min_lr = 0.01;
  CHECK(make_schedule(c, 0.1, 10, 10).factor(99) > 0.1);  // still above min_lr on the last step
}
