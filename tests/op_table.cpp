// The table of backend op cases (tests/op_cases.h): every op of the Backend interface over
// shapes, strides with padding, modes and parameters, each with a reference written as plain
// double-precision loops from the op's contract in backend/backend.h. Inputs come from fixed
// seeds. The shapes are the union of what the CPU op tests, the GEMM contract test and the
// CUDA parity test used before this table.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "math/dropout.h"
#include "math/rng.h"
#include "op_cases.h"
#include "swarm/sampler.h"

namespace tn::op_test {
namespace {

using i64 = std::int64_t;
constexpr double kSentinel = 12345.0;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

template <class... A>
std::string fmt(const A&... a) {
  std::ostringstream os;
  (os << ... << a);
  return os.str();
}

const char* trans_name(Trans t) { return t == Trans::N ? "N" : "T"; }

// Element i of stream `stream`: a float in [lo, hi).
double rnd(std::uint32_t stream, std::uint64_t i, float lo, float hi) {
  return lo + (hi - lo) * uniform01(random_words(99, stream, Purpose::Data, i).v[0]);
}

std::vector<double> random_values(std::size_t n, std::uint32_t stream, float lo = -1.0f, float hi = 1.0f) {
  std::vector<double> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = rnd(stream, i, lo, hi);
  return v;
}

// S members of n values at member stride n + pad: random values, the padding a sentinel
// (which the op must leave alone).
std::vector<double> padded(int S, i64 n, i64 pad, std::uint32_t stream, float lo = -1.0f, float hi = 1.0f) {
  std::vector<double> v(static_cast<std::size_t>(S * (n + pad)), kSentinel);
  for (int s = 0; s < S; ++s)
    for (i64 i = 0; i < n; ++i) v[s * (n + pad) + i] = rnd(stream, s * 1000003ull + i, lo, hi);
  return v;
}

double sigmoid_d(double z) { return 1.0 / (1.0 + std::exp(-z)); }

const Activation kActs[] = {Activation::Identity, Activation::Relu, Activation::LeakyRelu,
                            Activation::Tanh, Activation::Sigmoid, Activation::Gelu};
const LossType kLosses[] = {LossType::CrossEntropy, LossType::Bce, LossType::Mse, LossType::Mae, LossType::Huber};
const OptimizerType kOptimizers[] = {OptimizerType::Sgd, OptimizerType::Adam, OptimizerType::AdamW,
                                     OptimizerType::RmsProp};

// ---------------------------------------------------------------------------------------
// gemm_strided_batched: C_p = alpha·op(A_p)·op(B_p) + beta·C_p, column-major.

struct GemmShape {
  int m, n, k;
  int pad_a, pad_b, pad_c;  // leading dimension beyond the rows of the stored matrix
  int batch;
  int gap_a, gap_b, gap_c;  // elements between consecutive matrices of the batch
  float alpha;
};

void add_gemm(std::vector<OpCase>& t, const GemmShape& s, Trans ta, Trans tb, float beta) {
  const int rows_a = ta == Trans::N ? s.m : s.k, cols_a = ta == Trans::N ? s.k : s.m;
  const int rows_b = tb == Trans::N ? s.k : s.n, cols_b = tb == Trans::N ? s.n : s.k;
  const int lda = std::max(1, rows_a + s.pad_a), ldb = std::max(1, rows_b + s.pad_b), ldc = std::max(1, s.m + s.pad_c);
  const i64 sA = i64(lda) * cols_a + s.gap_a, sB = i64(ldb) * cols_b + s.gap_b, sC = i64(ldc) * s.n + s.gap_c;
  // C: the m×n block of each matrix holds values (NaN when beta = 0: C must not be read),
  // everything else a sentinel.
  std::vector<double> C(static_cast<std::size_t>(sC * s.batch + 1), kSentinel);
  const std::vector<double> C0 = random_values(C.size(), 3);
  for (int p = 0; p < s.batch; ++p)
    for (int c = 0; c < s.n; ++c)
      for (int r = 0; r < s.m; ++r) {
        const i64 idx = p * sC + r + i64(c) * ldc;
        C[idx] = beta == 0.0f ? kNaN : C0[idx];
      }
  OpCase o;
  o.op = "gemm_strided_batched";
  o.name = fmt(o.op, " ", trans_name(ta), trans_name(tb), " m", s.m, " n", s.n, " k", s.k, " batch", s.batch,
               " alpha ", s.alpha, " beta ", beta, " pads ", s.pad_a, ",", s.pad_b, ",", s.pad_c, " gaps ", s.gap_a,
               ",", s.gap_b, ",", s.gap_c);
  o.arrays = {input("A", random_values(static_cast<std::size_t>(sA * s.batch + 1), 1)),
              input("B", random_values(static_cast<std::size_t>(sB * s.batch + 1), 2)), output("C", C)};
  // Against the reference: relative to the products' magnitude Σ|a·b| (sums cancel).
  o.tol = {1e-6, 1e-5};
  o.parity = Tol{1e-5, 1e-4};
  o.run = [=](Backend& be, const DeviceArrays& d) {
    be.gemm_strided_batched(ta, tb, s.m, s.n, s.k, s.alpha, d.f32("A"), lda, sA, d.f32("B"), ldb, sB, beta,
                            d.f32("C"), ldc, sC, s.batch);
  };
  o.reference = [=](HostArrays& h) {
    const std::vector<double>& A = h["A"];
    const std::vector<double>& B = h["B"];
    std::vector<double>& C = h["C"];
    std::vector<double>& scale = h.scale("C");
    scale.assign(C.size(), 0.0);
    // Element (r, c) of op(X), X column-major with leading dimension ld.
    auto at = [](const std::vector<double>& X, i64 base, Trans tr, int r, int c, int ld) {
      return tr == Trans::N ? X[base + r + i64(c) * ld] : X[base + c + i64(r) * ld];
    };
    for (int p = 0; p < s.batch; ++p)
      for (int c = 0; c < s.n; ++c)
        for (int r = 0; r < s.m; ++r) {
          double acc = 0.0, mag = 0.0;
          for (int q = 0; q < s.k; ++q) {
            const double x = at(A, p * sA, ta, r, q, lda) * at(B, p * sB, tb, q, c, ldb);
            acc += x;
            mag += std::fabs(x);
          }
          const i64 idx = p * sC + r + i64(c) * ldc;
          double v = double(s.alpha) * acc, m = std::fabs(double(s.alpha)) * mag;
          if (beta != 0.0f) {
            v += double(beta) * C[idx];
            m += std::fabs(double(beta) * C[idx]);
          }
          C[idx] = v;
          scale[idx] = m;
        }
  };
  t.push_back(std::move(o));
}

void add_gemm_cases(std::vector<OpCase>& t) {
  // Shapes that reach every path of the CPU kernel (column strips, 4-row tiles, narrow C,
  // the OpenBLAS threshold at 64) with padded leading dimensions and gaps, k = 0 included.
  const GemmShape kernel_shapes[] = {
      {1, 1, 1, 0, 0, 0, 1, 0, 0, 0, 1.0f},      {2, 16, 3, 0, 0, 0, 1, 0, 0, 0, 1.0f},
      {7, 5, 3, 0, 0, 0, 1, 0, 0, 0, 1.0f},      {7, 5, 3, 2, 3, 4, 3, 5, 5, 5, 0.75f},
      {1, 9, 4, 1, 0, 2, 2, 3, 3, 3, -1.5f},     {13, 1, 11, 0, 1, 0, 4, 1, 1, 1, 2.0f},
      {16, 16, 16, 3, 0, 1, 2, 7, 7, 7, 1.0f},   {31, 45, 7, 1, 2, 3, 2, 4, 4, 4, 1.0f},
      {3, 50, 20, 0, 1, 2, 3, 2, 2, 2, -0.5f},   {6, 13, 5, 2, 0, 1, 2, 0, 0, 0, 1.0f},
      {5, 6, 0, 0, 0, 0, 2, 1, 1, 1, 1.0f},      {63, 64, 64, 0, 0, 0, 1, 0, 0, 0, 1.0f},
      {64, 64, 64, 1, 2, 3, 2, 9, 9, 9, 0.5f},   {80, 72, 96, 0, 0, 0, 1, 0, 0, 0, 1.0f},
      {80, 72, 96, 5, 3, 7, 2, 11, 11, 11, -0.25f},
  };
  for (const GemmShape& s : kernel_shapes)
    for (Trans ta : {Trans::N, Trans::T})
      for (Trans tb : {Trans::N, Trans::T})
        for (float beta : {0.0f, 1.0f, 0.5f}) add_gemm(t, s, ta, tb, beta);
  // Larger batches with their own alpha and beta.
  struct Batched {
    GemmShape s;
    float beta;
  };
  const Batched batched[] = {
      {{1, 1, 1, 1, 2, 3, 1, 5, 1, 7, 1.0f}, 0.0f},       {{7, 5, 3, 1, 2, 3, 4, 5, 1, 7, 1.0f}, 0.0f},
      {{16, 32, 8, 1, 2, 3, 3, 5, 1, 7, 0.5f}, 1.0f},     {{33, 17, 65, 1, 2, 3, 2, 5, 1, 7, 1.0f}, 0.25f},
      {{128, 64, 96, 1, 2, 3, 8, 5, 1, 7, -1.0f}, 0.0f},
  };
  for (const Batched& b : batched)
    for (Trans ta : {Trans::N, Trans::T})
      for (Trans tb : {Trans::N, Trans::T}) add_gemm(t, b.s, ta, tb, b.beta);
}

// ---------------------------------------------------------------------------------------
// bias_activation, activation_backward, bias_grad

double ref_act(Activation a, double z, double slope) {
  switch (a) {
    case Activation::Identity: return z;
    case Activation::Relu: return std::max(z, 0.0);
    case Activation::LeakyRelu: return z > 0 ? z : slope * z;
    case Activation::Tanh: return std::tanh(z);
    case Activation::Sigmoid: return sigmoid_d(z);
    case Activation::Gelu: return 0.5 * z * (1 + std::erf(z / std::sqrt(2.0)));
  }
  return kNaN;
}

double ref_dact(Activation a, double z, double slope) {
  switch (a) {
    case Activation::Identity: return 1;
    case Activation::Relu: return z > 0 ? 1 : 0;
    case Activation::LeakyRelu: return z > 0 ? 1 : slope;
    case Activation::Tanh: return 1 - std::tanh(z) * std::tanh(z);
    case Activation::Sigmoid: return sigmoid_d(z) * (1 - sigmoid_d(z));
    case Activation::Gelu:
      return 0.5 * (1 + std::erf(z / std::sqrt(2.0))) + z * std::exp(-0.5 * z * z) / std::sqrt(2 * M_PI);
  }
  return kNaN;
}

struct ActDims {
  int S, rows, cols;
  int pad_z, pad_b, pad_a;
  float slope;
};
const ActDims kActDims[] = {
    {1, 1, 1, 0, 2, 1, 0.07f}, {3, 4, 5, 3, 2, 4, 0.07f},   {2, 7, 3, 11, 2, 12, 0.07f}, {4, 1, 9, 1, 2, 2, 0.07f},
    {1, 1, 1, 3, 1, 3, 0.1f},  {3, 5, 7, 3, 1, 3, 0.1f},    {8, 32, 16, 3, 1, 3, 0.1f},  {2, 100, 65, 3, 1, 3, 0.1f},
};

std::string dims_name(const ActDims& d) {
  return fmt(" S", d.S, " rows", d.rows, " cols", d.cols, " pads ", d.pad_z, ",", d.pad_b, ",", d.pad_a, " slope ",
             d.slope);
}

// Z += b, A = act(Z); `aliased`: A is Z itself.
void add_bias_activation(std::vector<OpCase>& t, const ActDims& d, Activation act, bool aliased) {
  const i64 n = i64(d.rows) * d.cols, sZ = n + d.pad_z, sb = d.cols + d.pad_b, sA = aliased ? sZ : n + d.pad_a;
  OpCase o;
  o.op = "bias_activation";
  o.name = fmt(o.op, " ", to_string(act), aliased ? " in place" : "", dims_name(d));
  o.arrays = {output("Z", padded(d.S, n, d.pad_z, 1, -3, 3)).with_tol(aliased ? Tol{1e-6, 1e-5} : Tol{1e-6, 1e-6}),
              input("b", padded(d.S, d.cols, d.pad_b, 2))};
  if (!aliased) o.arrays.push_back(output("A", padded(d.S, n, d.pad_a, 3)));
  o.tol = {1e-6, 1e-5};
  o.run = [=](Backend& be, const DeviceArrays& a) {
    float* Z = a.f32("Z");
    be.bias_activation(act, d.slope, d.S, d.rows, d.cols, Z, sZ, a.f32("b"), sb, aliased ? Z : a.f32("A"), sA);
  };
  o.reference = [=](HostArrays& h) {
    std::vector<double>& Z = h["Z"];
    const std::vector<double>& b = h["b"];
    std::vector<double>& A = aliased ? Z : h["A"];
    for (int s = 0; s < d.S; ++s)
      for (int r = 0; r < d.rows; ++r)
        for (int c = 0; c < d.cols; ++c) {
          const double z = Z[s * sZ + i64(r) * d.cols + c] + b[s * sb + c];
          Z[s * sZ + i64(r) * d.cols + c] = z;
          A[s * sA + i64(r) * d.cols + c] = ref_act(act, z, d.slope);
        }
  };
  t.push_back(std::move(o));
}

// dA *= act'(Z), given A = act(Z); Z, A and dA share the member stride.
void add_activation_backward(std::vector<OpCase>& t, const ActDims& d, Activation act) {
  const i64 n = i64(d.rows) * d.cols, s = n + d.pad_z;
  std::vector<double> Z = padded(d.S, n, d.pad_z, 4, -3, 3), A = padded(d.S, n, d.pad_z, 5);
  for (int m = 0; m < d.S; ++m)
    for (i64 i = 0; i < n; ++i) A[m * s + i] = static_cast<float>(ref_act(act, Z[m * s + i], d.slope));
  OpCase o;
  o.op = "activation_backward";
  o.name = fmt(o.op, " ", to_string(act), dims_name(d));
  o.arrays = {input("Z", Z), input("A", A), output("dA", padded(d.S, n, d.pad_z, 6))};
  o.tol = {1e-6, 1e-5};
  o.run = [=](Backend& be, const DeviceArrays& a) {
    be.activation_backward(act, d.slope, d.S, d.rows, d.cols, a.f32("Z"), a.f32("A"), s, a.f32("dA"));
  };
  o.reference = [=](HostArrays& h) {
    const std::vector<double>& Zh = h["Z"];
    std::vector<double>& dA = h["dA"];
    for (int m = 0; m < d.S; ++m)
      for (i64 i = 0; i < n; ++i) dA[m * s + i] *= ref_dact(act, Zh[m * s + i], d.slope);
  };
  t.push_back(std::move(o));
}

// db = Σ over rows of dZ.
// Inverted dropout: Y = X ⊙ mask / (1 − rate), the masks of math/dropout.h.
struct DropDims {
  int S, rows, cols;
  i64 pad_x, pad_y;
  float rate;
  bool in_place;
  std::uint32_t member0, epoch, pos0, layer;
};

void add_dropout(std::vector<OpCase>& t, const DropDims& d) {
  const i64 n = i64(d.rows) * d.cols, sX = n + d.pad_x, sY = d.in_place ? sX : n + d.pad_y;
  constexpr std::uint64_t kSeed = 77;
  OpCase o;
  o.op = "dropout";
  o.name = fmt(o.op, d.in_place ? " in place" : "", " S", d.S, " rows", d.rows, " cols", d.cols, " pads ", d.pad_x,
               ",", d.pad_y, " rate ", d.rate, " member0 ", d.member0, " epoch ", d.epoch, " pos0 ", d.pos0,
               " layer ", d.layer);
  o.arrays = {d.in_place ? output("X", padded(d.S, n, d.pad_x, 60, -2, 2)) : input("X", padded(d.S, n, d.pad_x, 60, -2, 2)),
              input("epoch", {double(d.epoch)}, Elem::U32)};
  if (!d.in_place) o.arrays.push_back(output("Y", padded(d.S, n, d.pad_y, 61)));
  o.tol = {0, 1e-6};
  const std::string out = d.in_place ? "X" : "Y";
  o.run = [=](Backend& be, const DeviceArrays& a) {
    DropoutKey k;
    k.rate = d.rate;
    k.seed = kSeed;
    k.member0 = d.member0;
    k.epoch = a.u32("epoch");
    k.pos0 = d.pos0;
    k.layer = d.layer;
    be.dropout(d.S, d.rows, d.cols, a.f32("X"), sX, d.in_place ? a.f32("X") : a.f32("Y"), sY, k);
  };
  o.reference = [=](HostArrays& h) {
    const std::vector<double> X = h["X"];
    std::vector<double>& Y = h[out];
    for (int s = 0; s < d.S; ++s)
      for (int r = 0; r < d.rows; ++r) {
        const Philox4x32 row = dropout_row_key(kSeed, d.member0 + s, d.epoch, d.pos0 + r);
        for (int j = 0; j < d.cols; ++j) {
          const bool dropped = uniform01(dropout_unit_words(row, d.layer, j / 4).v[j % 4]) < d.rate;
          Y[s * sY + i64(r) * d.cols + j] = dropped ? 0.0 : X[s * sX + i64(r) * d.cols + j] / (1.0 - double(d.rate));
        }
      }
  };
  // About rate·n elements dropped (within 5 standard deviations), and members with masks of
  // their own.
  o.property = [=](const HostArrays& h) -> std::string {
    const std::vector<double>& Y = h[out];
    std::vector<std::vector<char>> kept(d.S);
    double dropped = 0;
    for (int s = 0; s < d.S; ++s)
      for (i64 i = 0; i < n; ++i) {
        kept[s].push_back(Y[s * sY + i] != 0.0);
        dropped += Y[s * sY + i] == 0.0;
      }
    const double N = double(d.S) * n, sd = std::sqrt(N * d.rate * (1 - d.rate));
    if (std::fabs(dropped - d.rate * N) > 5 * sd + 1) return fmt(dropped, " of ", N, " dropped at rate ", d.rate);
    if (d.S > 1 && n >= 64 && d.rate > 0 && kept[0] == kept[1]) return "members 0 and 1 have the same mask";
    return "";
  };
  t.push_back(std::move(o));
}

void add_bias_grad(std::vector<OpCase>& t, const ActDims& d) {
  const i64 n = i64(d.rows) * d.cols, sZ = n + d.pad_z, sb = d.cols + d.pad_b;
  OpCase o;
  o.op = "bias_grad";
  o.name = fmt(o.op, dims_name(d));
  o.arrays = {input("dZ", padded(d.S, n, d.pad_z, 7)), output("db", padded(d.S, d.cols, d.pad_b, 8))};
  o.tol = {1e-6, 1e-5};
  o.parity = Tol{1e-5, 1e-5};
  o.run = [=](Backend& be, const DeviceArrays& a) {
    be.bias_grad(d.S, d.rows, d.cols, a.f32("dZ"), sZ, a.f32("db"), sb);
  };
  o.reference = [=](HostArrays& h) {
    const std::vector<double>& dZ = h["dZ"];
    std::vector<double>& db = h["db"];
    for (int s = 0; s < d.S; ++s)
      for (int c = 0; c < d.cols; ++c) {
        double acc = 0.0;
        for (int r = 0; r < d.rows; ++r) acc += dZ[s * sZ + i64(r) * d.cols + c];
        db[s * sb + c] = acc;
      }
  };
  t.push_back(std::move(o));
}

void add_activation_cases(std::vector<OpCase>& t) {
  for (const ActDims& d : kActDims) {
    for (Activation act : kActs) {
      add_bias_activation(t, d, act, false);
      add_bias_activation(t, d, act, true);
      add_activation_backward(t, d, act);
    }
    add_bias_grad(t, d);
  }
}

// ---------------------------------------------------------------------------------------
// loss_backward, loss_forward, output_transform

// One sample's loss (the mean over outputs for per-output losses); writes dL/dz (not yet
// divided by the batch size) into g and adds the sample's correct fraction.
double ref_sample_loss(LossType L, double delta, int O, const double* z, const double* y, double* g,
                       double* correct, const double* pos_weight = nullptr) {
  if (L == LossType::CrossEntropy) {
    const int label = static_cast<int>(y[0]);
    double se = 0.0;
    for (int j = 0; j < O; ++j) se += std::exp(z[j]);
    for (int j = 0; j < O; ++j) g[j] = std::exp(z[j]) / se - (j == label ? 1.0 : 0.0);
    *correct += static_cast<int>(std::max_element(z, z + O) - z) == label ? 1.0 : 0.0;
    return std::log(se) - z[label];
  }
  double total = 0.0;
  for (int j = 0; j < O; ++j) {
    const double d = z[j] - y[j];
    if (L == LossType::Bce) {
      const double p = sigmoid_d(z[j]), pw = pos_weight ? pos_weight[j] : 1.0;  // BCEWithLogitsLoss's pos_weight
      total += -(pw * y[j] * std::log(p) + (1 - y[j]) * std::log(1 - p));
      g[j] = pw * y[j] * (p - 1) + (1 - y[j]) * p;
      *correct += ((z[j] > 0) == (y[j] > 0.5)) ? 1.0 / O : 0.0;
    } else if (L == LossType::Mse) {
      total += d * d;
      g[j] = 2 * d;
    } else if (L == LossType::Mae) {
      total += std::fabs(d);
      g[j] = d > 0 ? 1.0 : (d < 0 ? -1.0 : 0.0);
    } else {
      total += std::fabs(d) <= delta ? 0.5 * d * d : delta * (std::fabs(d) - 0.5 * delta);
      g[j] = std::fabs(d) <= delta ? d : (d > 0 ? delta : -delta);
    }
  }
  for (int j = 0; j < O; ++j) g[j] /= O;
  return total / O;
}

// Which rows of each member are valid: all (no `rows` array), a spread below B, or the
// extremes 0 and B.
enum class Rows { All, Spread, Extremes };

struct LossDims {
  int S, B, O;
  int pad_z, pad_y;
  Rows rows;
  bool labelled;  // targets like a real batch: half the labels the argmax, bce targets 0, 0.3, 1
};
const LossDims kLossDims[] = {
    {1, 1, 2, 0, 2, Rows::All, true},    {3, 4, 3, 5, 7, Rows::All, true},     {2, 5, 1, 2, 4, Rows::All, true},
    {2, 6, 4, 1, 3, Rows::All, true},    {1, 1, 2, 2, 1, Rows::All, false},    {4, 17, 3, 2, 1, Rows::All, false},
    {5, 32, 10, 2, 1, Rows::Spread, false}, {3, 64, 1, 2, 1, Rows::Spread, false},
    {3, 6, 4, 1, 2, Rows::Extremes, false},
};

// weighted: cross_entropy with class weights (one of them 0 when there are 3 or more
// classes), bce with a pos_weight per output (PyTorch's CrossEntropyLoss(weight) and
// BCEWithLogitsLoss(pos_weight)).
void add_loss(std::vector<OpCase>& t, const LossDims& d, LossType L, bool backward, bool weighted = false) {
  const int T = L == LossType::CrossEntropy ? 1 : d.O;
  const i64 sZ = i64(d.B) * d.O + d.pad_z, sY = i64(d.B) * T + d.pad_y;
  LossConfig cfg;
  cfg.type = L;
  cfg.huber_delta = d.labelled ? 0.7f : 0.5f;
  std::vector<double> Z = padded(d.S, i64(d.B) * d.O, d.pad_z, 10, d.labelled ? -3 : -4, d.labelled ? 3 : 4);
  std::vector<double> Y = padded(d.S, i64(d.B) * T, d.pad_y, 11, d.labelled ? -2 : 0, d.labelled ? 2 : 1);
  for (int s = 0; s < d.S; ++s)
    for (int b = 0; b < d.B; ++b) {
      double* y = &Y[s * sY + i64(b) * T];
      const double* z = &Z[s * sZ + i64(b) * d.O];
      if (L == LossType::CrossEntropy)
        y[0] = d.labelled && b % 2 ? double(std::max_element(z, z + d.O) - z)
               : d.labelled        ? double((s + 3 * b) % d.O)
                                   : std::floor(y[0] * d.O * 0.999);
      if (L == LossType::Bce && d.labelled)
        for (int j = 0; j < T; ++j) y[j] = (b + j) % 3 == 0 ? double(0.3f) : double((s + b + j) % 2);
    }
  std::vector<double> rows(d.S, d.B);
  for (int m = 0; m < d.S; ++m) {
    if (d.rows == Rows::Spread) rows[m] = (d.B * (m + 1)) / (d.S + 1);
    if (d.rows == Rows::Extremes) rows[m] = m % 3 == 0 ? 0 : m % 3 == 1 ? d.B : d.B / 2;
  }
  const bool has_rows = d.rows != Rows::All;
  std::vector<double> w;
  if (weighted)
    for (int j = 0; j < d.O; ++j) w.push_back(L == LossType::Bce ? 0.5 + 1.5 * j : j == 1 && d.O > 2 ? 0.0 : 0.5 + 0.75 * j);
  OpCase o;
  o.op = backward ? "loss_backward" : "loss_forward";
  o.name = fmt(o.op, " ", to_string(L), " S", d.S, " B", d.B, " O", d.O, " pads ", d.pad_z, ",", d.pad_y,
               d.labelled ? " labelled" : "",
               d.rows == Rows::Spread ? " rows spread" : d.rows == Rows::Extremes ? " rows 0 and B" : "",
               weighted ? (L == LossType::Bce ? " pos_weight" : " class weights") : "");
  o.arrays = {input("Z", Z), input("Y", Y),
              output("loss", std::vector<double>(d.S, d.labelled ? 0.25 : 0.5), Elem::F64).with_parity({1e-5, 1e-5}),
              output("correct", std::vector<double>(d.S, 1.0), Elem::F64).with_tol({1e-12, 0}).with_parity({1e-9, 0})};
  if (backward) o.arrays.push_back(output("dZ", padded(d.S, i64(d.B) * d.O, d.pad_z, 12)));
  if (has_rows) o.arrays.push_back(input("rows", rows, Elem::I32));
  if (weighted) o.arrays.push_back(input("w", w));
  o.tol = {1e-6, 1e-5};
  o.run = [=](Backend& be, const DeviceArrays& a) {
    const int* r = has_rows ? a.i32("rows") : nullptr;
    LossConfig cfg_w = cfg;
    if (weighted) cfg_w.weights = a.f32("w");
    const LossConfig& cfg = cfg_w;
    if (backward)
      be.loss_backward(cfg, d.S, d.B, d.O, a.f32("Z"), sZ, a.f32("Y"), sY, a.f32("dZ"), a.f64("loss"),
                       a.f64("correct"), r);
    else
      be.loss_forward(cfg, d.S, d.B, d.O, a.f32("Z"), sZ, a.f32("Y"), sY, a.f64("loss"), a.f64("correct"), r);
  };
  o.reference = [=](HostArrays& h) {
    const std::vector<double>& Zh = h["Z"];
    const std::vector<double>& Yh = h["Y"];
    std::vector<double>& loss = h["loss"];
    std::vector<double>& correct = h["correct"];
    std::vector<double> g(d.O);
    const bool class_w = weighted && L == LossType::CrossEntropy;
    for (int s = 0; s < d.S; ++s) {
      const int valid = static_cast<int>(rows[s]);
      // Class weights: the batch loss is Σ w[y]·l / Σ w[y] over the member's valid rows; the
      // loss sum adds valid · that (so that a sum over batches / samples is still a mean).
      double wsum = 0.0;
      for (int b = 0; b < valid && class_w; ++b) wsum += w[static_cast<int>(Yh[s * sY + i64(b) * T])];
      for (int b = 0; b < d.B; ++b) {
        const i64 zo = s * sZ + i64(b) * d.O;
        if (b >= valid) {  // not one of the member's rows: no gradient, no loss
          if (backward)
            for (int j = 0; j < d.O; ++j) h["dZ"][zo + j] = 0.0;
          continue;
        }
        const double* y = &Yh[s * sY + i64(b) * T];
        const double l = ref_sample_loss(L, cfg.huber_delta, d.O, &Zh[zo], y, g.data(), &correct[s],
                                         weighted && L == LossType::Bce ? w.data() : nullptr);
        const double wy = class_w ? w[static_cast<int>(y[0])] : 1.0;
        const double gs = class_w ? (wsum > 0 ? wy / wsum : 0.0) : 1.0 / valid;
        loss[s] += class_w ? (wsum > 0 ? l * wy * valid / wsum : 0.0) : l;
        if (backward)
          for (int j = 0; j < d.O; ++j) h["dZ"][zo + j] = g[j] * gs;
      }
    }
  };
  t.push_back(std::move(o));
}

void add_output_transform(std::vector<OpCase>& t, LossType L, int S, int B, int O, int pad_z, int pad_p) {
  const i64 sZ = i64(B) * O + pad_z, sP = i64(B) * O + pad_p;
  OpCase o;
  o.op = "output_transform";
  o.name = fmt(o.op, " ", to_string(L), " S", S, " B", B, " O", O, " pads ", pad_z, ",", pad_p);
  o.arrays = {input("Z", padded(S, i64(B) * O, pad_z, 20, -4, 4)), output("P", padded(S, i64(B) * O, pad_p, 21))};
  // Softmax and sigmoid to float precision; the other losses show Z itself.
  o.tol = is_classification(L) ? Tol{1e-6, 1e-5} : Tol{0, 0};
  o.run = [=](Backend& be, const DeviceArrays& a) { be.output_transform(L, S, B, O, a.f32("Z"), sZ, a.f32("P"), sP); };
  o.reference = [=](HostArrays& h) {
    const std::vector<double>& Z = h["Z"];
    std::vector<double>& P = h["P"];
    for (int s = 0; s < S; ++s)
      for (int b = 0; b < B; ++b) {
        const double* z = &Z[s * sZ + i64(b) * O];
        double* p = &P[s * sP + i64(b) * O];
        double se = 0.0;
        for (int j = 0; j < O; ++j) se += std::exp(z[j]);
        for (int j = 0; j < O; ++j)
          p[j] = L == LossType::CrossEntropy ? std::exp(z[j]) / se : L == LossType::Bce ? sigmoid_d(z[j]) : z[j];
      }
  };
  if (L == LossType::CrossEntropy)
    o.property = [=](const HostArrays& h) -> std::string {
      const std::vector<double>& P = h["P"];
      for (int s = 0; s < S; ++s)
        for (int b = 0; b < B; ++b) {
          double sum = 0.0;
          for (int j = 0; j < O; ++j) sum += P[s * sP + i64(b) * O + j];
          if (!(std::fabs(sum - 1.0) <= 1e-6)) return fmt("softmax of member ", s, " row ", b, " sums to ", sum);
        }
      return "";
    };
  t.push_back(std::move(o));
}

void add_loss_cases(std::vector<OpCase>& t) {
  for (const LossDims& d : kLossDims)
    for (LossType L : kLosses) {
      if (L == LossType::CrossEntropy && d.O < 2) continue;
      add_loss(t, d, L, true);
      add_loss(t, d, L, false);
      if (L == LossType::CrossEntropy || L == LossType::Bce) {
        add_loss(t, d, L, true, true);
        add_loss(t, d, L, false, true);
      }
      if (!d.labelled && d.rows != Rows::Extremes)
        add_output_transform(t, L, d.S, d.B, d.O, d.pad_z, d.pad_z);
    }
  for (LossType L : kLosses) add_output_transform(t, L, 3, 4, 5, 3, 6);  // Z and P strides differ
}

// ---------------------------------------------------------------------------------------
// gather_batch: member s's rows at positions pos0..pos0+B of its sample order; with per-member
// target statistics (`scaled`), its targets scaled by its own, (Y − mean) / std in float.

struct GatherSetup {
  int n, F, T, S, B, Bcap;  // Bcap: rows each member's batch buffer holds
  std::uint32_t member0, pos0, table_member0;
  std::uint64_t seed, order_seed;
  std::uint32_t order_epoch;
  int pad_x, pad_y;
  double fill;  // initial contents of the batch buffers
};
const GatherSetup kGatherSetups[] = {
    {13, 3, 2, 3, 5, 6, 5, 7, 4, 555, 31, 2, 2, 1, kSentinel},
    {50, 3, 2, 6, 16, 16, 2, 20, 2, 11, 7, 3, 1, 0, -9.0},
};

const char* mode_name(SampleMode m) {
  switch (m) {
    case SampleMode::Shared: return "shared";
    case SampleMode::Bootstrap: return "bootstrap";
    case SampleMode::Subsample: return "subsample";
    case SampleMode::Sets: return "sets";
  }
  return "?";
}

void add_gather(std::vector<OpCase>& t, const GatherSetup& g, SampleMode mode, bool shuffled, bool scaled = false) {
  const i64 sXb = i64(g.Bcap) * g.F + g.pad_x, sYb = i64(g.Bcap) * g.T + g.pad_y;
  // Row i of X is 100·i + f, of Y −100·i − t − 1: a gathered row tells which sample it is.
  std::vector<double> X(static_cast<std::size_t>(g.n) * g.F), Y(static_cast<std::size_t>(g.n) * g.T);
  for (int i = 0; i < g.n; ++i) {
    for (int f = 0; f < g.F; ++f) X[i * g.F + f] = 100.0 * i + f;
    for (int c = 0; c < g.T; ++c) Y[i * g.T + c] = -100.0 * i - c - 1;
  }
  std::vector<std::uint32_t> order_u(g.n);
  epoch_order(g.order_seed, g.order_epoch, g.n, order_u.data());
  const std::vector<double> order(order_u.begin(), order_u.end());
  const int table_members = static_cast<int>(g.member0 - g.table_member0) + g.S;
  std::vector<double> table(static_cast<std::size_t>(table_members) * g.n);
  for (std::size_t i = 0; i < table.size(); ++i) table[i] = double((i * 7) % g.n);
  // [S, 2, T]: member s's means (some not exact in float), then its stds (not powers of two).
  std::vector<double> stats;
  for (int s = 0; s < g.S; ++s)
    for (int k = 0; k < 2 * g.T; ++k) stats.push_back(k < g.T ? 0.1 * (s + 1) - 3.0 * k : 0.3 + 1.7 * s + k);
  OpCase o;
  o.op = "gather_batch";
  o.name = fmt(o.op, " ", mode_name(mode), shuffled ? " shuffled" : "", scaled ? " scaled targets" : "", " n", g.n,
               " S", g.S, " B", g.B, " member0 ", g.member0, " pos0 ", g.pos0);
  o.arrays = {input("X", X), input("Y", Y), output("Xb", std::vector<double>(sXb * g.S, g.fill)),
              output("Yb", std::vector<double>(sYb * g.S, g.fill))};
  if (shuffled) o.arrays.push_back(input("order", order, Elem::U32));
  if (mode == SampleMode::Sets) o.arrays.push_back(input("table", table, Elem::U32));
  if (scaled) o.arrays.push_back(input("stats", stats));
  o.tol = {0, 0};
  o.run = [=](Backend& be, const DeviceArrays& a) {
    BatchSampler smp;
    smp.mode = mode;
    smp.seed = g.seed;
    smp.n = g.n;
    smp.order = shuffled ? a.u32("order") : nullptr;
    if (mode == SampleMode::Sets) {
      smp.table = a.u32("table");
      smp.table_member0 = g.table_member0;
      smp.table_stride = g.n;
    }
    be.gather_batch(smp, g.member0, g.S, g.pos0, g.B, a.f32("X"), g.F, a.f32("Y"), g.T, a.f32("Xb"), sXb,
                    a.f32("Yb"), sYb, scaled ? a.f32("stats") : nullptr);
  };
  o.reference = [=](HostArrays& h) {
    for (int s = 0; s < g.S; ++s) {
      const std::uint32_t member = g.member0 + s;
      for (int b = 0; b < g.B; ++b) {
        const std::uint32_t pos = g.pos0 + b, j = shuffled ? std::uint32_t(order[pos]) : pos;
        i64 i = 0;
        switch (mode) {
          case SampleMode::Shared: i = j; break;
          case SampleMode::Bootstrap:
            i = uniform_below(random_words(g.seed, member, Purpose::Bootstrap, j).v[0], g.n);
            break;
          case SampleMode::Subsample:
            i = keyed_permutation(random_words(g.seed, member, Purpose::Subsample, 0), j, g.n);
            break;
          case SampleMode::Sets: i = i64(table[(member - g.table_member0) * i64(g.n) + pos]); break;
        }
        for (int f = 0; f < g.F; ++f) h["Xb"][s * sXb + i64(b) * g.F + f] = X[i * g.F + f];
        for (int c = 0; c < g.T; ++c) {
          const auto m = static_cast<float>(stats[2 * s * g.T + c]), sd = static_cast<float>(stats[(2 * s + 1) * g.T + c]);
          h["Yb"][s * sYb + i64(b) * g.T + c] = scaled ? (static_cast<float>(Y[i * g.T + c]) - m) / sd : Y[i * g.T + c];
        }
      }
    }
  };
  // Shared: every member the same rows. Bootstrap: members draw different rows. Subsample:
  // members differ, and a member never sees a row twice in an epoch.
  o.property = [=](const HostArrays& h) -> std::string {
    std::vector<std::vector<long>> rows(g.S);
    for (int s = 0; s < g.S; ++s)
      for (int b = 0; b < g.B; ++b) rows[s].push_back(std::lround(h["Xb"][s * sXb + i64(b) * g.F] / 100.0));
    bool all_same = true;
    for (int s = 1; s < g.S; ++s) all_same = all_same && rows[s] == rows[0];
    if (mode == SampleMode::Shared && !all_same) return "shared sampling gave members different rows";
    if ((mode == SampleMode::Bootstrap || mode == SampleMode::Subsample) && all_same)
      return std::string(mode_name(mode)) + " sampling gave every member the same rows";
    if (mode == SampleMode::Subsample)
      for (int s = 0; s < g.S; ++s)
        if (std::set<long>(rows[s].begin(), rows[s].end()).size() != rows[s].size())
          return fmt("subsample member ", s, " saw a row twice");
    return "";
  };
  t.push_back(std::move(o));
}

void add_gather_cases(std::vector<OpCase>& t) {
  for (const GatherSetup& g : kGatherSetups)
    for (SampleMode mode : {SampleMode::Shared, SampleMode::Bootstrap, SampleMode::Subsample, SampleMode::Sets})
      for (bool shuffled : {false, true}) add_gather(t, g, mode, shuffled);
  for (SampleMode mode : {SampleMode::Bootstrap, SampleMode::Sets}) add_gather(t, kGatherSetups[0], mode, true, true);
}

// ---------------------------------------------------------------------------------------
// sum_squares, optimizer_update

void add_sum_squares(std::vector<OpCase>& t, int S, i64 n, i64 pad, float lo, float hi, std::vector<double> norm2) {
  const i64 sx = n + pad;
  OpCase o;
  o.op = "sum_squares";
  o.name = fmt(o.op, " S", S, " n", n, " pad ", pad, " from ", norm2[0]);
  o.arrays = {input("x", padded(S, n, pad, 40, lo, hi)), output("norm2", norm2, Elem::F64)};
  o.tol = {1e-12, 1e-12};
  o.parity = Tol{1e-9, 1e-12};
  o.run = [=](Backend& be, const DeviceArrays& a) { be.sum_squares(S, n, a.f32("x"), sx, a.f64("norm2")); };
  o.reference = [=](HostArrays& h) {
    const std::vector<double>& x = h["x"];
    for (int s = 0; s < S; ++s)
      for (i64 i = 0; i < n; ++i) h["norm2"][s] += x[s * sx + i] * x[s * sx + i];
  };
  t.push_back(std::move(o));
}

// One step of PyTorch's update rules in double, on one parameter.
void ref_update(OptimizerType type, double& p, double g, double& s1, double& s2, const OptStep& h) {
  g += double(h.l1) * (p > 0 ? 1.0 : p < 0 ? -1.0 : 0.0);  // the L1 subgradient, every optimizer
  switch (type) {
    case OptimizerType::Sgd:
      g += double(h.weight_decay) * p;
      if (h.momentum != 0.0f) {
        s1 = double(h.momentum) * s1 + g;
        g = h.nesterov ? g + double(h.momentum) * s1 : s1;
      }
      p -= double(h.lr) * g;
      return;
    case OptimizerType::Adam:
    case OptimizerType::AdamW: {
      if (type == OptimizerType::AdamW) p -= double(h.lr) * double(h.weight_decay) * p;
      else g += double(h.weight_decay) * p;
      s1 = double(h.beta1) * s1 + (1.0 - double(h.beta1)) * g;
      s2 = double(h.beta2) * s2 + (1.0 - double(h.beta2)) * g * g;
      const double m_hat = s1 / double(h.bias_correction1), v_hat = s2 / double(h.bias_correction2);
      p -= double(h.lr) * m_hat / (std::sqrt(v_hat) + double(h.eps));
      return;
    }
    case OptimizerType::RmsProp: {
      g += double(h.weight_decay) * p;
      s1 = double(h.alpha) * s1 + (1.0 - double(h.alpha)) * g * g;
      const double step = g / (std::sqrt(s1) + double(h.eps));
      if (h.momentum != 0.0f) {
        s2 = double(h.momentum) * s2 + step;
        p -= double(h.lr) * s2;
      } else {
        p -= double(h.lr) * step;
      }
      return;
    }
  }
}

struct OptSetup {
  std::string what;
  int S;
  i64 n, pad;
  std::vector<double> P, G, S1, S2, norm2;
  std::vector<OptStep> h;
  float clip;
  Tol tol;
};

void add_optimizer(std::vector<OpCase>& t, OptimizerType type, const OptSetup& u) {
  const i64 stride = u.n + u.pad;
  OpCase o;
  o.op = "optimizer_update";
  o.name = fmt(o.op, " ", to_string(type), " ", u.what, " S", u.S, " n", u.n, " clip ", u.clip);
  o.arrays = {output("P", u.P), input("G", u.G), output("S1", u.S1), output("S2", u.S2),
              input_structs("h", u.h), input("norm2", u.norm2, Elem::F64)};
  o.tol = u.tol;
  const int S = u.S;
  const i64 n = u.n;
  const float clip = u.clip;
  o.run = [=](Backend& be, const DeviceArrays& a) {
    be.optimizer_update(type, S, n, a.f32("P"), a.f32("G"), a.f32("S1"), a.f32("S2"), stride,
                        a.structs<OptStep>("h"), clip, a.f64("norm2"));
  };
  o.reference = [=](HostArrays& hs) {
    const std::vector<OptStep> h = hs.structs<OptStep>("h");
    for (int s = 0; s < S; ++s) {
      if (h[s].skip) continue;
      const double k = clip > 0.0f ? std::min(1.0, double(clip) / (std::sqrt(hs["norm2"][s]) + 1e-6)) : 1.0;
      for (i64 i = 0; i < n; ++i) {
        const i64 e = s * stride + i;
        ref_update(type, hs["P"][e], hs["G"][e] * k, hs["S1"][e], hs["S2"][e], h[s]);
      }
    }
  };
  t.push_back(std::move(o));
}

void add_optimizer_cases(std::vector<OpCase>& t) {
  // Three members with their own learning rates; one with Nesterov momentum. With clip the
  // norms scale the gradients by 1, 0.1 and 0.5; without it the huge norms must be ignored.
  for (float clip : {0.0f, 1.0f}) {
    OptSetup u{"nesterov member", 3, 7, 3, padded(3, 7, 3, 50), padded(3, 7, 3, 51, -3, 3),
               padded(3, 7, 3, 52, 0, 0.5f), padded(3, 7, 3, 53, 0, 0.5f),
               clip > 0 ? std::vector<double>{0.25, 100.0, 4.0} : std::vector<double>{1e6, 1e6, 1e6}, {}, clip,
               {1e-6, 1e-5}};
    for (int s = 0; s < 3; ++s) {
      u.h.push_back(OptStep{0.01f * (s + 1), 0.9f, 0.999f, 1e-8f, 0.01f, 0.5f, 0.99f, 0.19f, 0.002f, s == 2});
      u.h.back().l1 = 0.02f * s;  // members 1 and 2 with an L1 penalty
    }
    for (OptimizerType type : kOptimizers) add_optimizer(t, type, u);
  }
  // Larger members: one with Nesterov momentum, one without momentum, one skipped; the
  // norms are those of the gradients.
  for (i64 n : {1, 37, 1000, 70000})
    for (float clip : {0.0f, 0.5f}) {
      OptSetup u{"skip member", 3, n, 4, padded(3, n, 4, 15), padded(3, n, 4, 16), padded(3, n, 4, 17, 0, 1),
                 padded(3, n, 4, 18, 0, 1), std::vector<double>(3, 0.25), {}, clip, {1e-6, 1e-5}};
      for (int s = 0; s < 3; ++s) {
        for (i64 i = 0; i < n; ++i) u.norm2[s] += u.G[s * (n + 4) + i] * u.G[s * (n + 4) + i];
        u.h.push_back(OptStep{0.01f * (s + 1), 0.9f, 0.999f, 1e-8f, 0.01f, s == 1 ? 0.0f : 0.5f, 0.99f, 0.19f,
                              0.002f, s == 0, s == 2});
      }
      for (OptimizerType type : kOptimizers) add_optimizer(t, type, u);
    }
  // Clipping changes the step: a gradient of norm 10 clipped to 1 moves SGD 10 times less.
  OptSetup u{"clipped by 10", 1, 2, 0, {1.0, 1.0}, {2.0, 2.0}, {0.0, 0.0}, {0.0, 0.0}, {100.0},
             {OptStep{0.1f, 0, 0, 0, 0, 0, 0, 1, 1, false}}, 1.0f, {1e-7, 1e-6}};
  add_optimizer(t, OptimizerType::Sgd, u);
  // L1 on parameters of both signs and exactly 0 (sign 0: no pull).
  OptSetup l1{"l1 signs", 1, 3, 1, {0.5, -2.0, 0.0, kSentinel}, {1.0, 1.0, 1.0, kSentinel}, std::vector<double>(4, 0.0),
              std::vector<double>(4, 0.0), {0.0}, {OptStep{0.1f, 0.9f, 0.999f, 1e-8f, 0, 0, 0.99f, 0.1f, 0.001f, false}},
              0.0f, {1e-7, 1e-6}};
  l1.h[0].l1 = 0.3f;
  for (OptimizerType type : kOptimizers) add_optimizer(t, type, l1);
}

// Divergence isolation: members whose loss sum is NaN or ±inf, or that are frozen already, get
// skip and stay frozen; the others keep their flags (one already skipped by the host).
void add_freeze_diverged(std::vector<OpCase>& t) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  const int S = 6;
  OpCase o;
  o.op = "freeze_diverged";
  o.name = "freeze_diverged NaN, +inf, -inf, frozen before";
  std::vector<OptStep> h(S, OptStep{0.01f, 0.9f, 0.999f, 1e-8f, 0, 0, 0.99f, 0.1f, 0.001f, false});
  h[5].skip = true;
  o.arrays = {input("loss_sum", {1.0, std::nan(""), kInf, -kInf, 2.0, 3.0}, Elem::F64),
              output("frozen", {0, 0, 0, 0, 1, 0}, Elem::I32), input_structs("h", h),
              output("skip", std::vector<double>(S, -1.0), Elem::I32)};
  o.tol = {0.0, 0.0};
  o.run = [=](Backend& be, const DeviceArrays& a) {
    OptStep* dh = a.structs<OptStep>("h");
    be.freeze_diverged(S, a.f64("loss_sum"), a.i32("frozen"), dh);
    // The skip flags as an output array the comparison reads.
    std::vector<OptStep> back(S);
    be.to_host(back.data(), dh, S * sizeof(OptStep));
    std::vector<int> skip(S);
    for (int s = 0; s < S; ++s) skip[s] = back[s].skip;
    be.to_device(a.i32("skip"), skip.data(), S * sizeof(int));
  };
  o.reference = [=](HostArrays& hs) {
    hs["frozen"] = {0, 1, 1, 1, 1, 0};
    hs["skip"] = {0, 1, 1, 1, 1, 1};
  };
  t.push_back(std::move(o));
}

// ---------------------------------------------------------------------------------------
// to_time_major, fill_zero, copy

void add_to_time_major(std::vector<OpCase>& t, int S, int B, int T, int F, i64 pad_src, i64 pad_dst) {
  const i64 per = i64(B) * T * F, ss = per + pad_src, sd = per + pad_dst;
  OpCase o;
  o.op = "to_time_major";
  o.name = fmt(o.op, " S", S, " B", B, " T", T, " F", F, " pads ", pad_src, ",", pad_dst);
  o.arrays = {input("src", padded(S, per, pad_src, 30)), output("dst", padded(S, per, pad_dst, 31))};
  o.tol = {0, 0};
  o.run = [=](Backend& be, const DeviceArrays& a) { be.to_time_major(S, B, T, F, a.f32("src"), ss, a.f32("dst"), sd); };
  o.reference = [=](HostArrays& h) {
    for (int s = 0; s < S; ++s)
      for (int b = 0; b < B; ++b)
        for (int k = 0; k < T; ++k)
          for (int f = 0; f < F; ++f)
            h["dst"][s * sd + (i64(k) * B + b) * F + f] = h["src"][s * ss + (i64(b) * T + k) * F + f];
  };
  t.push_back(std::move(o));
}

void add_memory_cases(std::vector<OpCase>& t) {
  for (i64 n : {1000, 70000}) {
    const i64 count = n / 2, dst0 = 10, src0 = 3, zero0 = 7, zeros = n / 10;
    OpCase c;
    c.op = "copy";
    c.name = fmt("copy ", count, " floats of ", n);
    c.arrays = {input("x", random_values(n, 19)), output("y", random_values(n, 20))};
    c.run = [=](Backend& be, const DeviceArrays& a) {
      be.copy(a.f32("y") + dst0, a.f32("x") + src0, count * sizeof(float));
    };
    c.reference = [=](HostArrays& h) {
      for (i64 i = 0; i < count; ++i) h["y"][dst0 + i] = h["x"][src0 + i];
    };
    t.push_back(std::move(c));
    OpCase z;
    z.op = "fill_zero";
    z.name = fmt("fill_zero ", zeros, " floats of ", n);
    z.arrays = {output("x", random_values(n, 19))};
    z.run = [=](Backend& be, const DeviceArrays& a) { be.fill_zero(a.f32("x") + zero0, zeros * sizeof(float)); };
    z.reference = [=](HostArrays& h) {
      for (i64 i = 0; i < zeros; ++i) h["x"][zero0 + i] = 0.0;
    };
    t.push_back(std::move(z));
  }
}

// ---------------------------------------------------------------------------------------
// Recurrent cells (math/recurrent_cells.h): LSTM gates [i, f, g, o], GRU gates [r, z, n].

struct CellDims {
  int S, B, H;
  i64 pad_state;  // member stride of the states beyond B·H
  i64 pad_dc;     // of dc (lstm_backward) and of the GRU recurrent bias
};
const CellDims kCellDims[] = {{1, 1, 1, 3, 3}, {3, 5, 7, 3, 3}, {4, 32, 32, 3, 5}};

std::string cell_name(const std::string& op, const CellDims& d, bool first) {
  return fmt(op, " S", d.S, " B", d.B, " H", d.H, first ? " first step" : " later step");
}

// Activated gates for backward: `sig` blocks in (0, 1), the others in (−1, 1).
std::vector<double> activated_gates(const CellDims& d, int gates, i64 sG, std::uint32_t stream, int tanh_block) {
  std::vector<double> G = padded(d.S, i64(d.B) * gates * d.H, sG - i64(d.B) * gates * d.H, stream, -3, 3);
  for (int s = 0; s < d.S; ++s)
    for (int b = 0; b < d.B; ++b)
      for (int q = 0; q < gates; ++q)
        for (int j = 0; j < d.H; ++j) {
          double& v = G[s * sG + i64(b) * gates * d.H + i64(q) * d.H + j];
          v = static_cast<float>(q == tanh_block ? std::tanh(v) : sigmoid_d(v));
        }
  return G;
}

void add_lstm(std::vector<OpCase>& t, const CellDims& d, bool first) {
  const int S = d.S, B = d.B, H = d.H;
  const i64 BH = i64(B) * H, sC = BH + d.pad_state, sG = 4 * sC, sdc = BH + d.pad_dc;
  {
    OpCase o;
    o.op = "lstm_forward";
    o.name = cell_name(o.op, d, first);
    o.arrays = {output("G", padded(S, 4 * BH, sG - 4 * BH, 32, -3, 3)), output("c", padded(S, BH, sC - BH, 34)),
                output("h", padded(S, BH, sC - BH, 35))};
    if (!first) o.arrays.push_back(input("c_prev", padded(S, BH, sC - BH, 33)));
    o.tol = {1e-6, 1e-5};
    o.run = [=](Backend& be, const DeviceArrays& a) {
      be.lstm_forward(S, B, H, a.f32("G"), sG, first ? nullptr : a.f32("c_prev"), a.f32("c"), a.f32("h"), sC);
    };
    o.reference = [=](HostArrays& h) {
      for (int s = 0; s < S; ++s)
        for (int b = 0; b < B; ++b)
          for (int j = 0; j < H; ++j) {
            double* g = &h["G"][s * sG + i64(b) * 4 * H];
            const i64 e = s * sC + i64(b) * H + j;
            const double i = sigmoid_d(g[j]), f = sigmoid_d(g[H + j]), gg = std::tanh(g[2 * H + j]),
                         og = sigmoid_d(g[3 * H + j]);
            g[j] = i;
            g[H + j] = f;
            g[2 * H + j] = gg;
            g[3 * H + j] = og;
            const double c = (first ? 0.0 : f * h["c_prev"][e]) + i * gg;
            h["c"][e] = c;
            h["h"][e] = og * std::tanh(c);
          }
    };
    t.push_back(std::move(o));
  }
  {
    OpCase o;
    o.op = "lstm_backward";
    o.name = cell_name(o.op, d, first) + (sdc != sC ? " dc stride of its own" : "");
    o.arrays = {input("G", activated_gates(d, 4, sG, 32, 2)), input("c", padded(S, BH, sC - BH, 34, -2, 2)),
                input("dh", padded(S, BH, sC - BH, 36)), output("dc", padded(S, BH, sdc - BH, 37)),
                output("dG", padded(S, 4 * BH, sG - 4 * BH, 38))};
    if (!first) o.arrays.push_back(input("c_prev", padded(S, BH, sC - BH, 33)));
    o.tol = {1e-6, 1e-5};
    o.run = [=](Backend& be, const DeviceArrays& a) {
      be.lstm_backward(S, B, H, a.f32("G"), sG, first ? nullptr : a.f32("c_prev"), a.f32("c"), a.f32("dh"), sC,
                       a.f32("dc"), sdc, a.f32("dG"));
    };
    o.reference = [=](HostArrays& h) {
      for (int s = 0; s < S; ++s)
        for (int b = 0; b < B; ++b)
          for (int j = 0; j < H; ++j) {
            const double* g = &h["G"][s * sG + i64(b) * 4 * H];
            double* dg = &h["dG"][s * sG + i64(b) * 4 * H];
            const i64 e = s * sC + i64(b) * H + j;
            double& dc = h["dc"][s * sdc + i64(b) * H + j];
            const double i = g[j], f = g[H + j], gg = g[2 * H + j], og = g[3 * H + j];
            const double tc = std::tanh(h["c"][e]), dh = h["dh"][e], cp = first ? 0.0 : h["c_prev"][e];
            const double dct = dc + dh * og * (1 - tc * tc);  // dL/dc_t
            dg[j] = dct * gg * i * (1 - i);
            dg[H + j] = dct * cp * f * (1 - f);
            dg[2 * H + j] = dct * i * (1 - gg * gg);
            dg[3 * H + j] = dh * tc * og * (1 - og);
            dc = dct * f;
          }
    };
    t.push_back(std::move(o));
  }
}

void add_gru(std::vector<OpCase>& t, const CellDims& d, bool first) {
  const int S = d.S, B = d.B, H = d.H;
  const i64 BH = i64(B) * H, sH = BH + d.pad_state, sG = 3 * sH, sb = 3 * H + d.pad_dc - 3;
  {
    OpCase o;
    o.op = "gru_forward";
    o.name = cell_name(o.op, d, first) + fmt(" bias pad ", sb - 3 * H);
    o.arrays = {output("Gx", padded(S, 3 * BH, sG - 3 * BH, 40, -3, 3)),
                output("Gh", padded(S, 3 * BH, sG - 3 * BH, 41, -3, 3)), input("bh", padded(S, 3 * H, sb - 3 * H, 42)),
                output("h", padded(S, BH, sH - BH, 44))};
    if (!first) o.arrays.push_back(input("h_prev", padded(S, BH, sH - BH, 43)));
    o.tol = {1e-6, 1e-5};
    o.run = [=](Backend& be, const DeviceArrays& a) {
      be.gru_forward(S, B, H, a.f32("Gx"), a.f32("Gh"), sG, a.f32("bh"), sb, first ? nullptr : a.f32("h_prev"),
                     a.f32("h"), sH);
    };
    o.reference = [=](HostArrays& h) {
      for (int s = 0; s < S; ++s)
        for (int b = 0; b < B; ++b)
          for (int j = 0; j < H; ++j) {
            double* gx = &h["Gx"][s * sG + i64(b) * 3 * H];
            double* gh = &h["Gh"][s * sG + i64(b) * 3 * H];
            const double* bh = &h["bh"][s * sb];
            const i64 e = s * sH + i64(b) * H + j;
            // The first step has h_{t−1} = 0, so h_{t−1}·Wh = 0 whatever Gh holds.
            const double hr = (first ? 0.0 : gh[j]) + bh[j], hz = (first ? 0.0 : gh[H + j]) + bh[H + j];
            const double hn = (first ? 0.0 : gh[2 * H + j]) + bh[2 * H + j];
            const double r = sigmoid_d(gx[j] + hr), z = sigmoid_d(gx[H + j] + hz);
            const double nn = std::tanh(gx[2 * H + j] + r * hn);
            gx[j] = r;
            gx[H + j] = z;
            gx[2 * H + j] = nn;
            gh[2 * H + j] = hn;
            h["h"][e] = (1 - z) * nn + z * (first ? 0.0 : h["h_prev"][e]);
          }
    };
    t.push_back(std::move(o));
  }
  {
    OpCase o;
    o.op = "gru_backward";
    o.name = cell_name(o.op, d, first);
    o.arrays = {input("Gx", activated_gates(d, 3, sG, 40, 2)), input("Gh", padded(S, 3 * BH, sG - 3 * BH, 41, -2, 2)),
                input("dh", padded(S, BH, sH - BH, 36)), output("dGx", padded(S, 3 * BH, sG - 3 * BH, 45)),
                output("dGh", padded(S, 3 * BH, sG - 3 * BH, 46))};
    if (!first) {
      o.arrays.push_back(input("h_prev", padded(S, BH, sH - BH, 43)));
      o.arrays.push_back(output("dh_prev", padded(S, BH, sH - BH, 47)));
    }
    o.tol = {1e-6, 1e-5};
    o.run = [=](Backend& be, const DeviceArrays& a) {
      be.gru_backward(S, B, H, a.f32("Gx"), a.f32("Gh"), sG, first ? nullptr : a.f32("h_prev"), a.f32("dh"), sH,
                      a.f32("dGx"), a.f32("dGh"), first ? nullptr : a.f32("dh_prev"));
    };
    o.reference = [=](HostArrays& h) {
      for (int s = 0; s < S; ++s)
        for (int b = 0; b < B; ++b)
          for (int j = 0; j < H; ++j) {
            const i64 row = s * sG + i64(b) * 3 * H, e = s * sH + i64(b) * H + j;
            const double* gx = &h["Gx"][row];
            const double r = gx[j], z = gx[H + j], nn = gx[2 * H + j], hn = h["Gh"][row + 2 * H + j];
            const double dh = h["dh"][e], hp = first ? 0.0 : h["h_prev"][e];
            const double dn = dh * (1 - z) * (1 - nn * nn);
            const double dz = dh * (hp - nn) * z * (1 - z);
            const double dr = dn * hn * r * (1 - r);
            double* dgx = &h["dGx"][row];
            double* dgh = &h["dGh"][row];
            dgx[j] = dr;
            dgx[H + j] = dz;
            dgx[2 * H + j] = dn;
            dgh[j] = dr;
            dgh[H + j] = dz;
            dgh[2 * H + j] = dn * r;
            if (!first) h["dh_prev"][e] += dh * z;
          }
    };
    t.push_back(std::move(o));
  }
}

void add_recurrent_cases(std::vector<OpCase>& t) {
  for (const CellDims& d : kCellDims) add_to_time_major(t, d.S, d.B, 4, 3, 2, 2);
  add_to_time_major(t, 3, 5, 6, 1, 1, 4);  // one feature per step: the CPU's transposing path
  add_to_time_major(t, 2, 7, 3, 1, 0, 0);
  add_to_time_major(t, 2, 3, 5, 2, 3, 0);
  for (const CellDims& d : kCellDims)
    for (bool first : {true, false}) {
      add_lstm(t, d, first);
      add_gru(t, d, first);
    }
}

std::vector<OpCase> build() {
  std::vector<OpCase> t;
  add_gemm_cases(t);
  add_activation_cases(t);
  add_loss_cases(t);
  for (const DropDims& d : {DropDims{1, 1, 1, 0, 0, 0.5f, false, 0, 0, 0, 0}, DropDims{3, 5, 7, 3, 2, 0.25f, false, 4, 2, 16, 1},
                            DropDims{3, 5, 7, 3, 2, 0.25f, true, 4, 2, 16, 1}, DropDims{4, 32, 33, 1, 5, 0.5f, false, 9, 7, 64, 2},
                            DropDims{2, 64, 100, 0, 3, 0.1f, true, 100000, 70000, 4000000000u, 3},
                            DropDims{2, 8, 9, 2, 2, 0.0f, true, 0, 1, 0, 0}, DropDims{2, 16, 6, 2, 1, 0.9f, false, 3, 5, 8, 5}})
    add_dropout(t, d);
  add_gather_cases(t);
  for (i64 n : {1, 37, 1000, 70000}) add_sum_squares(t, 3, n, 4, -1, 1, std::vector<double>(3, 0.25));
  add_sum_squares(t, 3, 1000, 5, -2, 2, {1.0, 2.0, 3.0});
  add_sum_squares(t, 3, 0, 5, -2, 2, {1.0, 2.0, 3.0});  // n = 0 adds nothing
  add_optimizer_cases(t);
  add_freeze_diverged(t);
  add_recurrent_cases(t);
  add_memory_cases(t);
  return t;
}

}  // namespace

const std::vector<OpCase>& op_cases() {
  static const std::vector<OpCase> cases = build();
  return cases;
}

}  // namespace tn::op_test
