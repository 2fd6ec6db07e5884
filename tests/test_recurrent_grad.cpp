// LSTM and GRU layers: gradients of the backend's forward + loss + backward (CpuBackend)
// against finite differences of an independent double-precision forward pass written here
// from the equations, and against a golden fixture produced by PyTorch
// (scripts/make_rnn_fixture.py → tests/data/rnn_golden.txt).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "math/rng.h"
#include "model/model_ops.h"
#include "swarm/shape.h"

using namespace tn;

namespace {

double sig(double x) { return 1.0 / (1.0 + std::exp(-x)); }

// One member's model problem: parameters (layout order, tensors concatenated), B windows of
// [T, F] inputs and their targets, MSE loss.
struct Problem {
  const ModelShape* shape = nullptr;
  int B = 0;
  std::vector<double> w;
  std::vector<double> X, Y;  // [B, T·F], [B, O]
};

// Double forward pass of one window straight from the equations (PyTorch's conventions).
std::vector<double> ref_output(const Problem& pb, int b) {
  const ModelShape& s = *pb.shape;
  const int T = s.seq_len;
  std::size_t off = 0;
  auto take = [&](std::size_t n) { const double* p = pb.w.data() + off; off += n; return p; };
  // seq[t] = the current layer's input at step t
  std::vector<std::vector<double>> seq(T);
  for (int t = 0; t < T; ++t)
    seq[t].assign(pb.X.begin() + (std::size_t(b) * T + t) * s.step_features,
                  pb.X.begin() + (std::size_t(b) * T + t + 1) * s.step_features);
  for (const RecurrentLayer& l : s.recurrent) {
    const int H = l.units, G = l.gates() * H, in = l.in;
    const double* Wx = take(std::size_t(in) * G);
    const double* Wh = take(std::size_t(H) * G);
    const double* bx = take(G);
    const double* bh = l.cell == CellType::Gru ? take(G) : nullptr;
    std::vector<double> h(H, 0.0), c(H, 0.0);
    for (int t = 0; t < T; ++t) {
      std::vector<double> gx(G), gh(G, 0.0);
      for (int k = 0; k < G; ++k) {
        gx[k] = bx[k];
        for (int i = 0; i < in; ++i) gx[k] += seq[t][i] * Wx[i * G + k];
        if (bh) gh[k] = bh[k];
        for (int i = 0; i < H; ++i) gh[k] += h[i] * Wh[i * G + k];
      }
      std::vector<double> hn(H);
      for (int j = 0; j < H; ++j) {
        if (l.cell == CellType::Lstm) {
          const double ig = sig(gx[j] + gh[j]), fg = sig(gx[H + j] + gh[H + j]);
          const double gg = std::tanh(gx[2 * H + j] + gh[2 * H + j]), og = sig(gx[3 * H + j] + gh[3 * H + j]);
          c[j] = fg * c[j] + ig * gg;
          hn[j] = og * std::tanh(c[j]);
        } else {
          const double r = sig(gx[j] + gh[j]), z = sig(gx[H + j] + gh[H + j]);
          const double n = std::tanh(gx[2 * H + j] + r * gh[2 * H + j]);
          hn[j] = (1 - z) * n + z * h[j];
        }
      }
      h = hn;
      seq[t] = h;
    }
  }
  std::vector<double> a = seq[T - 1];
  for (const DenseLayer& l : s.layers) {
    const double* W = take(std::size_t(l.in) * l.out);
    const double* bias = take(l.out);
    std::vector<double> z(l.out);
    for (int j = 0; j < l.out; ++j) {
      z[j] = bias[j];
      for (int i = 0; i < l.in; ++i) z[j] += a[i] * W[i * l.out + j];
      if (l.act == Activation::Tanh) z[j] = std::tanh(z[j]);
    }
    a = z;
  }
  return a;
}

double ref_loss(const Problem& pb) {
  const int O = pb.shape->outputs();
  double total = 0;
  for (int b = 0; b < pb.B; ++b) {
    const std::vector<double> z = ref_output(pb, b);
    for (int j = 0; j < O; ++j) total += (z[j] - pb.Y[b * O + j]) * (z[j] - pb.Y[b * O + j]);
  }
  return total / (pb.B * O);
}

struct BackendResult {
  std::vector<float> grads;  // layout order, whole block
  std::vector<float> out;    // [S, B, O]
  std::vector<double> loss;  // per member: sum over the batch of the per-sample loss
};

// forward + MSE loss + backward of all members at once, with room for Bcap > B rows (NaN
// in the unused rows must not reach any result).
BackendResult run_backend(const ModelShape& shape, const std::vector<Problem>& pbs, int Bcap) {
  CpuBackend be(1);
  const int S = static_cast<int>(pbs.size()), B = pbs[0].B, F = shape.inputs(), O = shape.outputs();
  const ParamLayout layout(shape, S);
  std::vector<float> P(layout.total);
  for (int s = 0; s < S; ++s) {
    std::size_t k = 0;
    for (int t = 0; t < shape.tensors(); ++t)
      for (std::int64_t i = 0; i < layout.size[t]; ++i) P[layout.at(t, s) + i] = static_cast<float>(pbs[s].w[k++]);
  }
  ModelBuffers buf(be, shape, S, Bcap, O);
  std::fill(buf.X, buf.X + std::int64_t(S) * Bcap * F, std::numeric_limits<float>::quiet_NaN());
  std::fill(buf.Y, buf.Y + std::int64_t(S) * Bcap * O, std::numeric_limits<float>::quiet_NaN());
  for (int s = 0; s < S; ++s) {
    std::copy(pbs[s].X.begin(), pbs[s].X.end(), buf.X + std::int64_t(s) * Bcap * F);
    std::copy(pbs[s].Y.begin(), pbs[s].Y.end(), buf.Y + std::int64_t(s) * Bcap * O);
  }
  BackendResult r;
  r.grads.assign(layout.total, std::numeric_limits<float>::quiet_NaN());
  const BlockParams p(P.data(), layout, 0), g(r.grads.data(), layout, 0);
  const float* Z = model_forward(be, shape, p, buf, S, B);
  for (int s = 0; s < S; ++s)
    r.out.insert(r.out.end(), Z + std::int64_t(s) * Bcap * O, Z + std::int64_t(s) * Bcap * O + std::int64_t(B) * O);
  r.loss.assign(S, 0.0);
  std::vector<double> correct(S, 0.0);
  LossConfig mse;
  mse.type = LossType::Mse;
  be.loss_backward(mse, S, B, O, Z, std::int64_t(Bcap) * O, buf.Y, std::int64_t(Bcap) * O, buf.dA, r.loss.data(),
                   correct.data(), nullptr);
  model_backward(be, shape, p, g, buf, S, B);
  return r;
}

double member_grad(const ModelShape& shape, const BackendResult& r, int S, int s, std::size_t k) {
  const ParamLayout layout(shape, S);
  for (int t = 0; t < shape.tensors(); ++t) {
    if (k < static_cast<std::size_t>(layout.size[t])) return r.grads[layout.at(t, s) + k];
    k -= layout.size[t];
  }
  return NAN;
}

ModelShape make_shape(int T, int F, std::vector<std::pair<CellType, int>> rec, std::vector<int> dense) {
  ModelShape s;
  s.seq_len = T;
  s.step_features = F;
  int in = F;
  for (std::size_t i = 0; i < rec.size(); ++i) {
    s.recurrent.push_back({rec[i].first, in, rec[i].second, i + 1 < rec.size(), 1.0f});
    in = rec[i].second;
  }
  for (std::size_t i = 0; i < dense.size(); ++i) {
    s.layers.push_back({in, dense[i], i + 1 < dense.size() ? Activation::Tanh : Activation::Identity});
    in = dense[i];
  }
  return s;
}

double rnd(std::uint64_t seed, std::uint64_t i, double lo, double hi) {
  return lo + (hi - lo) * uniform01(random_words(seed, 0, Purpose::Data, i).v[0]);
}

void check_fd(const ModelShape& shape, int S, int B, int Bcap, std::uint64_t seed) {
  const std::int64_t n = shape.params_per_member();
  std::vector<Problem> pbs(S);
  std::uint64_t c = 0;
  for (Problem& pb : pbs) {
    pb.shape = &shape;
    pb.B = B;
    for (std::int64_t i = 0; i < n; ++i) pb.w.push_back(static_cast<float>(rnd(seed, c++, -0.7, 0.7)));
    for (int i = 0; i < B * shape.inputs(); ++i) pb.X.push_back(static_cast<float>(rnd(seed, c++, -1.5, 1.5)));
    for (int i = 0; i < B * shape.outputs(); ++i) pb.Y.push_back(static_cast<float>(rnd(seed, c++, -1, 1)));
  }
  const BackendResult r = run_backend(shape, pbs, Bcap);
  double worst = 0;
  for (int s = 0; s < S; ++s) {
    Problem pb = pbs[s];
    CHECK(r.loss[s] / B == doctest::Approx(ref_loss(pb)).epsilon(1e-5));
    for (std::int64_t k = 0; k < n; ++k) {
      const double w0 = pb.w[k], h = 1e-5;
      pb.w[k] = w0 + h;
      const double up = ref_loss(pb);
      pb.w[k] = w0 - h;
      const double down = ref_loss(pb);
      pb.w[k] = w0;
      const double fd = (up - down) / (2 * h), got = member_grad(shape, r, S, s, k);
      const double err = std::abs(got - fd) / std::max(1.0, std::abs(fd));
      worst = std::max(worst, err);
      if (err > 1e-4) {
        CHECK_MESSAGE(err <= 1e-4, "member " << s << " parameter " << k << ": backend " << got << " vs finite difference " << fd);
        return;
      }
    }
  }
  MESSAGE("largest relative gradient error " << worst << " over " << S * n << " parameters");
}

}  // namespace

TEST_CASE("model shape: tensor sizes are the products of their dimensions") {
  const ModelShape s = make_shape(5, 3, {{CellType::Gru, 7}, {CellType::Lstm, 4}}, {6, 2});
  REQUIRE(s.tensors() == 4 + 3 + 4);
  std::int64_t total = 0;
  for (int t = 0; t < s.tensors(); ++t) {
    std::int64_t n = 1;
    for (std::int64_t d : s.tensor_dims(t)) n *= d;
    INFO("tensor ", t, " ", s.tensor_name(t));
    CHECK(s.tensor_size(t) == n);
    total += n;
  }
  // GRU(3->7): Wx 3x21, Wh 7x21, bx 21, bh 21; LSTM(7->4): Wx 7x16, Wh 4x16, b 16; dense 4x6+6, 6x2+2.
  CHECK(total == 63 + 147 + 21 + 21 + 112 + 64 + 16 + 24 + 6 + 12 + 2);
  CHECK(s.params_per_member() == total);
}

TEST_CASE("recurrent gradients: lstm against finite differences (3 members, B < Bcap)") {
  check_fd(make_shape(5, 2, {{CellType::Lstm, 4}}, {3, 1}), 3, 4, 6, 11);
}

TEST_CASE("recurrent gradients: gru against finite differences") {
  check_fd(make_shape(4, 3, {{CellType::Gru, 5}}, {2}), 2, 3, 3, 12);
}

TEST_CASE("recurrent gradients: stacked gru -> lstm -> gru with two outputs") {
  check_fd(make_shape(4, 2, {{CellType::Gru, 3}, {CellType::Lstm, 4}, {CellType::Gru, 3}}, {2}), 2, 3, 5, 13);
}

TEST_CASE("recurrent gradients: a single time step (no recurrent projection)") {
  check_fd(make_shape(1, 2, {{CellType::Lstm, 3}, {CellType::Gru, 2}}, {1}), 2, 2, 4, 14);
}

namespace {

// One case of tests/data/rnn_golden.txt (format documented in scripts/make_rnn_fixture.py).
struct Golden {
  std::string name;
  int B = 0, T = 0, F = 0;
  ModelShape shape;
  std::vector<double> w, X, Y, P, grads;
  double loss = 0;
};

std::vector<Golden> read_golden(const std::string& path) {
  std::ifstream in(path);
  REQUIRE_MESSAGE(in.good(), "cannot open " << path);
  std::vector<Golden> cases;
  std::string word;
  Golden g;
  std::vector<std::pair<std::string, std::vector<int>>> layers;
  auto values = [&](std::vector<double>& out) {
    long rows = 0, cols = 0;
    in >> word >> rows >> cols;
    for (long i = 0; i < rows * cols; ++i) {
      double v = 0;
      in >> v;
      out.push_back(v);
    }
  };
  while (in >> word) {
    if (word == "case") {
      g = Golden{};
      layers.clear();
      in >> g.name;
    } else if (word == "dims") {
      in >> g.B >> g.T >> g.F;
    } else if (word == "layer") {
      std::string type;
      int a = 0, b = 0;
      in >> type >> a >> b;
      layers.push_back({type, {a, b}});
    } else if (word == "tensor") {
      values(g.w);
    } else if (word == "input") {
      std::string peek;
      in >> peek;
      in.seekg(-static_cast<std::streamoff>(peek.size()), std::ios::cur);
      values(peek == "X" ? g.X : g.Y);
    } else if (word == "output") {
      std::string peek;
      in >> peek;
      in.seekg(-static_cast<std::streamoff>(peek.size()), std::ios::cur);
      std::vector<double> v;
      values(v);
      if (peek == "P") g.P = v;
      else g.loss = v.at(0);
    } else if (word == "grad") {
      values(g.grads);
    } else if (word == "end") {
      g.shape.seq_len = g.T;
      g.shape.step_features = g.F;
      std::size_t rec = 0;
      while (rec < layers.size() && layers[rec].first != "dense") ++rec;
      for (std::size_t i = 0; i < layers.size(); ++i) {
        const auto& [type, d] = layers[i];
        if (type == "dense") g.shape.layers.push_back({d[0], d[1], Activation::Identity});
        else g.shape.recurrent.push_back({type == "lstm" ? CellType::Lstm : CellType::Gru, d[0], d[1], i + 1 < rec, 0.0f});
      }
      cases.push_back(g);
    } else {
      FAIL("unexpected word '" << word << "' in " << path);
    }
  }
  return cases;
}

}  // namespace

TEST_CASE("recurrent layers match PyTorch on the golden fixture (lstm, gru, stacked)") {
  const std::vector<Golden> cases = read_golden(std::string(TURBANET_SOURCE_DIR) + "/tests/data/rnn_golden.txt");
  REQUIRE(cases.size() == 3);
  for (const Golden& g : cases) {
    CAPTURE(g.name);
    REQUIRE(static_cast<std::int64_t>(g.w.size()) == g.shape.params_per_member());
    REQUIRE(g.grads.size() == g.w.size());
    // Two members with the same problem, the second one in rows with room to spare.
    Problem pb{&g.shape, g.B, g.w, g.X, g.Y};
    const BackendResult r = run_backend(g.shape, {pb, pb}, g.B + 2);
    const int O = g.shape.outputs();
    for (int s = 0; s < 2; ++s) {
      for (int i = 0; i < g.B * O; ++i) CHECK(r.out[s * g.B * O + i] == doctest::Approx(g.P[i]).epsilon(1e-5));
      CHECK(r.loss[s] / (g.B * O) * O == doctest::Approx(g.loss).epsilon(1e-5));
      for (std::size_t k = 0; k < g.grads.size(); ++k) {
        const double got = member_grad(g.shape, r, 2, s, k);
        CHECK_MESSAGE(std::abs(got - g.grads[k]) <= 1e-5 + 1e-4 * std::abs(g.grads[k]),
                      "member " << s << " gradient " << k << ": " << got << " vs PyTorch " << g.grads[k]);
      }
    }
  }
}
