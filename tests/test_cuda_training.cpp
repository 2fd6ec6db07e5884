// Backend parity: every op on the CPU backend vs the CUDA backend over a table of shapes
// (|got − ref| ≤ atol + rtol·|ref|, max error printed), and one training run on both. Without
// a GPU each case prints one "SKIPPED: no CUDA device" line and returns.
#if defined(TURBANET_HAVE_CUDA)
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "backend/cuda/cuda_backend.h"
#include "backend/devices.h"
#include "data/prepare.h"
#include "math/rng.h"
#include "train/trainer.h"

using namespace tn;

namespace {

bool skip_without_gpu() {
  static const bool have = !list_gpus().empty();
  if (!have) MESSAGE("SKIPPED: no CUDA device");
  return !have;
}

std::vector<float> rnd(std::size_t n, std::uint32_t stream, float lo = -1.0f, float hi = 1.0f) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i)
    v[i] = lo + (hi - lo) * uniform01(random_words(5, stream, Purpose::Data, i).v[0]);
  return v;
}

// A host array mirrored on the GPU: h is the CPU backend's copy, d the device's.
template <class T>
struct Mirror {
  CudaBackend& gpu;
  std::vector<T> h;
  T* d;
  Mirror(CudaBackend& g, std::vector<T> v) : gpu(g), h(std::move(v)), d(g.alloc<T>(h.size())) {
    gpu.to_device(d, h.data(), h.size() * sizeof(T));
  }
  ~Mirror() { gpu.release(d); }
  std::vector<T> fetch() const {
    std::vector<T> r(h.size());
    gpu.to_host(r.data(), d, r.size() * sizeof(T));
    return r;
  }
};

template <class T>
void compare(const std::string& what, const Mirror<T>& m, double atol, double rtol) {
  const std::vector<T> got = m.fetch();
  double max_err = 0.0;
  std::size_t bad = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double ref = static_cast<double>(m.h[i]), g = static_cast<double>(got[i]);
    const double err = std::fabs(g - ref);
    max_err = std::max(max_err, err);
    if (!(err <= atol + rtol * std::fabs(ref))) ++bad;
  }
  MESSAGE(what << ": max |cuda - cpu| = " << max_err << " over " << got.size() << " values");
  CHECK_MESSAGE(bad == 0, what << ": " << bad << " values outside atol " << atol << " + rtol " << rtol);
}

struct Pair {
  CpuBackend cpu{1};
  CudaBackend gpu{0, false};
};

}  // namespace

TEST_CASE("cuda parity: gemm_strided_batched over transposes, shapes, alpha/beta") {
  if (skip_without_gpu()) return;
  Pair b;
  struct Shape { int m, n, k, batch; float alpha, beta; };
  const Shape shapes[] = {{1, 1, 1, 1, 1, 0}, {7, 5, 3, 4, 1, 0}, {16, 32, 8, 3, 0.5f, 1},
                          {33, 17, 65, 2, 1, 0.25f}, {128, 64, 96, 8, -1, 0}};
  for (const Shape& s : shapes)
    for (Trans ta : {Trans::N, Trans::T})
      for (Trans tb : {Trans::N, Trans::T}) {
        const int lda = (ta == Trans::N ? s.m : s.k) + 1, ldb = (tb == Trans::N ? s.k : s.n) + 2, ldc = s.m + 3;
        const std::int64_t sA = static_cast<std::int64_t>(lda) * (ta == Trans::N ? s.k : s.m) + 5;
        const std::int64_t sB = static_cast<std::int64_t>(ldb) * (tb == Trans::N ? s.n : s.k) + 1;
        const std::int64_t sC = static_cast<std::int64_t>(ldc) * s.n + 7;
        Mirror<float> A(b.gpu, rnd(sA * s.batch, 1)), B(b.gpu, rnd(sB * s.batch, 2)), C(b.gpu, rnd(sC * s.batch, 3));
        b.cpu.gemm_strided_batched(ta, tb, s.m, s.n, s.k, s.alpha, A.h.data(), lda, sA, B.h.data(), ldb, sB,
                                   s.beta, C.h.data(), ldc, sC, s.batch);
        b.gpu.gemm_strided_batched(ta, tb, s.m, s.n, s.k, s.alpha, A.d, lda, sA, B.d, ldb, sB, s.beta, C.d,
                                   ldc, sC, s.batch);
        compare("gemm " + std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k) +
                    (ta == Trans::N ? " N" : " T") + (tb == Trans::N ? "N" : "T"),
                C, 1e-5, 1e-4);
      }
}

TEST_CASE("cuda parity: bias_activation, activation_backward, bias_grad") {
  if (skip_without_gpu()) return;
  Pair b;
  struct Shape { int S, rows, cols; };
  for (const Shape s : {Shape{1, 1, 1}, Shape{3, 5, 7}, Shape{8, 32, 16}, Shape{2, 100, 65}})
    for (Activation act : {Activation::Identity, Activation::Relu, Activation::LeakyRelu, Activation::Tanh,
                           Activation::Sigmoid, Activation::Gelu}) {
      const std::int64_t n = static_cast<std::int64_t>(s.rows) * s.cols, sz = n + 3, sb = s.cols + 1;
      const std::string tag = std::string(to_string(act)) + " S" + std::to_string(s.S) + " " +
                              std::to_string(s.rows) + "x" + std::to_string(s.cols);
      Mirror<float> Z(b.gpu, rnd(sz * s.S, 4, -3, 3)), bias(b.gpu, rnd(sb * s.S, 5)), A(b.gpu, rnd(sz * s.S, 6));
      float* Ah = act == Activation::Identity ? Z.h.data() : A.h.data();
      float* Ad = act == Activation::Identity ? Z.d : A.d;
      b.cpu.bias_activation(act, 0.1f, s.S, s.rows, s.cols, Z.h.data(), sz, bias.h.data(), sb, Ah, sz);
      b.gpu.bias_activation(act, 0.1f, s.S, s.rows, s.cols, Z.d, sz, bias.d, sb, Ad, sz);
      compare("bias_activation Z " + tag, Z, 1e-6, 1e-6);
      compare("bias_activation A " + tag, A, 1e-6, 1e-5);
      Mirror<float> dA(b.gpu, rnd(sz * s.S, 7));
      b.cpu.activation_backward(act, 0.1f, s.S, s.rows, s.cols, Z.h.data(), Ah, sz, dA.h.data());
      b.gpu.activation_backward(act, 0.1f, s.S, s.rows, s.cols, Z.d, Ad, sz, dA.d);
      compare("activation_backward " + tag, dA, 1e-6, 1e-5);
      Mirror<float> db(b.gpu, rnd(sb * s.S, 8));
      b.cpu.bias_grad(s.S, s.rows, s.cols, dA.h.data(), sz, db.h.data(), sb);
      b.gpu.bias_grad(s.S, s.rows, s.cols, dA.d, sz, db.d, sb);
      compare("bias_grad " + tag, db, 1e-5, 1e-5);
    }
}

TEST_CASE("cuda parity: loss_backward, loss_forward, output_transform") {
  if (skip_without_gpu()) return;
  Pair b;
  struct Shape { int S, B, O; bool masked; };
  for (const Shape s : {Shape{1, 1, 2, false}, Shape{4, 17, 3, false}, Shape{5, 32, 10, true}, Shape{3, 64, 1, true}})
    for (LossType lt : {LossType::CrossEntropy, LossType::Bce, LossType::Mse, LossType::Mae, LossType::Huber}) {
      if (lt == LossType::CrossEntropy && s.O < 2) continue;
      LossConfig cfg;
      cfg.type = lt;
      cfg.huber_delta = 0.5f;
      const int T = lt == LossType::CrossEntropy ? 1 : s.O;
      const std::int64_t sZ = static_cast<std::int64_t>(s.B) * s.O + 2, sY = static_cast<std::int64_t>(s.B) * T + 1;
      std::vector<float> y = rnd(sY * s.S, 10, 0, 1);
      if (lt == LossType::CrossEntropy)
        for (float& v : y) v = std::floor(v * s.O * 0.999f);
      std::vector<int> rows_h(s.S);
      for (int m = 0; m < s.S; ++m) rows_h[m] = s.masked ? (s.B * (m + 1)) / (s.S + 1) : s.B;
      const std::string tag = std::string(to_string(lt)) + " S" + std::to_string(s.S) + " B" +
                              std::to_string(s.B) + " O" + std::to_string(s.O) + (s.masked ? " masked" : "");
      Mirror<float> Z(b.gpu, rnd(sZ * s.S, 9, -4, 4)), Y(b.gpu, y), dZ(b.gpu, rnd(sZ * s.S, 11));
      Mirror<double> loss(b.gpu, std::vector<double>(s.S, 0.5)), correct(b.gpu, std::vector<double>(s.S, 1.0));
      Mirror<int> rows(b.gpu, rows_h);
      const int* rh = s.masked ? rows.h.data() : nullptr;
      const int* rd = s.masked ? rows.d : nullptr;
      b.cpu.loss_backward(cfg, s.S, s.B, s.O, Z.h.data(), sZ, Y.h.data(), sY, dZ.h.data(), loss.h.data(),
                          correct.h.data(), rh);
      b.gpu.loss_backward(cfg, s.S, s.B, s.O, Z.d, sZ, Y.d, sY, dZ.d, loss.d, correct.d, rd);
      compare("loss_backward dZ " + tag, dZ, 1e-6, 1e-5);
      compare("loss_backward loss " + tag, loss, 1e-5, 1e-5);
      compare("loss_backward correct " + tag, correct, 1e-9, 0);
      b.cpu.loss_forward(cfg, s.S, s.B, s.O, Z.h.data(), sZ, Y.h.data(), sY, loss.h.data(), correct.h.data(), rh);
      b.gpu.loss_forward(cfg, s.S, s.B, s.O, Z.d, sZ, Y.d, sY, loss.d, correct.d, rd);
      compare("loss_forward loss " + tag, loss, 1e-5, 1e-5);
      compare("loss_forward correct " + tag, correct, 1e-9, 0);
      Mirror<float> P(b.gpu, rnd(sZ * s.S, 12));
      b.cpu.output_transform(lt, s.S, s.B, s.O, Z.h.data(), sZ, P.h.data(), sZ);
      b.gpu.output_transform(lt, s.S, s.B, s.O, Z.d, sZ, P.d, sZ);
      compare("output_transform " + tag, P, 1e-6, 1e-5);
    }
}

TEST_CASE("cuda parity: gather_batch for every sampling mode") {
  if (skip_without_gpu()) return;
  Pair b;
  const int n = 50, F = 3, T = 2, S = 6, B = 16;
  Mirror<float> X(b.gpu, rnd(static_cast<std::size_t>(n) * F, 13)), Y(b.gpu, rnd(static_cast<std::size_t>(n) * T, 14));
  std::vector<std::uint32_t> order_h(n);
  epoch_order(7, 3, n, order_h.data());
  Mirror<std::uint32_t> order(b.gpu, order_h);
  std::vector<std::uint32_t> table_h(static_cast<std::size_t>(S) * n);
  for (std::size_t i = 0; i < table_h.size(); ++i) table_h[i] = static_cast<std::uint32_t>((i * 7) % n);
  Mirror<std::uint32_t> table(b.gpu, table_h);
  for (SampleMode mode : {SampleMode::Shared, SampleMode::Bootstrap, SampleMode::Subsample, SampleMode::Sets})
    for (bool shuffled : {false, true}) {
      BatchSampler hs, ds;
      hs.mode = ds.mode = mode;
      hs.seed = ds.seed = 11;
      hs.n = ds.n = n;
      hs.order = shuffled ? order.h.data() : nullptr;
      ds.order = shuffled ? order.d : nullptr;
      hs.table = table.h.data();
      ds.table = table.d;
      hs.table_member0 = ds.table_member0 = 2;
      hs.table_stride = ds.table_stride = n;
      const std::int64_t sXb = static_cast<std::int64_t>(B) * F + 1, sYb = static_cast<std::int64_t>(B) * T;
      Mirror<float> Xb(b.gpu, std::vector<float>(sXb * S, -9.0f)), Yb(b.gpu, std::vector<float>(sYb * S, -9.0f));
      b.cpu.gather_batch(hs, 2, S, 20, B, X.h.data(), F, Y.h.data(), T, Xb.h.data(), sXb, Yb.h.data(), sYb);
      b.gpu.gather_batch(ds, 2, S, 20, B, X.d, F, Y.d, T, Xb.d, sXb, Yb.d, sYb);
      const std::string tag = "mode " + std::to_string(static_cast<int>(mode)) + (shuffled ? " shuffled" : "");
      compare("gather_batch X " + tag, Xb, 0, 0);
      compare("gather_batch Y " + tag, Yb, 0, 0);
    }
}

TEST_CASE("cuda parity: sum_squares and optimizer_update (clip, skip)") {
  if (skip_without_gpu()) return;
  Pair b;
  for (std::int64_t n : {1, 37, 1000, 70000})
    for (OptimizerType ot : {OptimizerType::Sgd, OptimizerType::Adam, OptimizerType::AdamW, OptimizerType::RmsProp})
      for (float clip : {0.0f, 0.5f}) {
        const int S = 3;
        const std::int64_t stride = n + 4;
        const std::string tag = std::string(to_string(ot)) + " n" + std::to_string(n) + " clip " + std::to_string(clip);
        Mirror<float> P(b.gpu, rnd(stride * S, 15)), G(b.gpu, rnd(stride * S, 16)), S1(b.gpu, rnd(stride * S, 17, 0, 1)),
            S2(b.gpu, rnd(stride * S, 18, 0, 1));
        Mirror<double> norm2(b.gpu, std::vector<double>(S, 0.25));
        b.cpu.sum_squares(S, n, G.h.data(), stride, norm2.h.data());
        b.gpu.sum_squares(S, n, G.d, stride, norm2.d);
        compare("sum_squares " + tag, norm2, 1e-9, 1e-12);
        std::vector<OptStep> h(S);
        for (int s = 0; s < S; ++s)
          h[s] = OptStep{0.01f * (s + 1), 0.9f, 0.999f, 1e-8f, 0.01f, s == 1 ? 0.0f : 0.5f, 0.99f, 0.19f, 0.002f,
                         s == 0, s == 2};
        Mirror<OptStep> hm(b.gpu, h);
        b.cpu.optimizer_update(ot, S, n, P.h.data(), G.h.data(), S1.h.data(), S2.h.data(), stride, hm.h.data(),
                               clip, norm2.h.data());
        b.gpu.optimizer_update(ot, S, n, P.d, G.d, S1.d, S2.d, stride, hm.d, clip, norm2.d);
        compare("optimizer P " + tag, P, 1e-6, 1e-5);
        compare("optimizer S1 " + tag, S1, 1e-6, 1e-5);
        compare("optimizer S2 " + tag, S2, 1e-6, 1e-5);
      }
}

TEST_CASE("cuda parity: fill_zero and copy, and a recorded sequence replayed with new staged data") {
  if (skip_without_gpu()) return;
  Pair b;
  Mirror<float> x(b.gpu, rnd(1000, 19)), y(b.gpu, rnd(1000, 20));
  b.cpu.copy(y.h.data() + 10, x.h.data() + 3, 500 * sizeof(float));
  b.gpu.copy(y.d + 10, x.d + 3, 500 * sizeof(float));
  b.cpu.fill_zero(x.h.data() + 7, 100 * sizeof(float));
  b.gpu.fill_zero(x.d + 7, 100 * sizeof(float));
  compare("copy", y, 0, 0);
  compare("fill_zero", x, 0, 0);
  // z = x + bias with x staged before each run, through a recorded copy + bias_activation.
  Mirror<float> z(b.gpu, std::vector<float>(64, 0.0f)), bias(b.gpu, std::vector<float>(8, 0.5f));
  for (int run = 0; run < 4; ++run) {
    const std::vector<float> staged = rnd(64, 30 + run);
    b.gpu.to_device(x.d, staged.data(), 64 * sizeof(float));
    b.gpu.run_recorded(77, [&] {
      b.gpu.copy(z.d, x.d, 64 * sizeof(float));
      b.gpu.bias_activation(Activation::Identity, 0.0f, 1, 8, 8, z.d, 64, bias.d, 8, z.d, 64);
    });
    std::vector<float> ref = staged;
    b.cpu.bias_activation(Activation::Identity, 0.0f, 1, 8, 8, ref.data(), 64, bias.h.data(), 8, ref.data(), 64);
    z.h = ref;
    compare("recorded run " + std::to_string(run), z, 1e-6, 1e-6);
  }
  CHECK(b.gpu.graph_launches() == 3);  // run 0 eager, run 1 captured and launched, runs 2-3 replays
  CHECK(b.gpu.recordings() == 1);
}

namespace {

void cmp(const std::string& what, const std::vector<float>& ref, const std::vector<float>& got, double tol) {
  REQUIRE(ref.size() == got.size());
  double max_err = 0.0;
  for (std::size_t i = 0; i < ref.size(); ++i)
    max_err = std::max(max_err, std::fabs(static_cast<double>(ref[i]) - got[i]) / (1.0 + std::fabs(ref[i])));
  MESSAGE(what << ": max relative difference " << max_err);
  CHECK(max_err <= tol);
}

void cmp_runs(const std::string& tag, const TrainOutput& a, const TrainOutput& g) {
  cmp(tag + " final weights", a.params, g.params, 1e-3);
  cmp(tag + " train loss curve", a.train_loss, g.train_loss, 1e-4);
  cmp(tag + " val loss curve", a.val_loss, g.val_loss, 1e-4);
  cmp(tag + " predictions", a.pred_members, g.pred_members, 1e-3);
}

const char* kE2eYaml =
    "name: t\nseed: 7\nswarm: {size: 8}\nmodel:\n  layers:\n"
    "    - {type: dense, units: 16, activation: tanh}\n    - {type: dense, units: 16, activation: relu}\n"
    "    - {type: dense, units: 2}\nloss: cross_entropy\noptimizer: {type: adam, lr: 0.01, grad_clip: 1.0}\n"
    "data:\n  source: {type: spirals, n: 200}\n  split: {train: 0.7, val: 0.2, test: 0.1}\n  per_member: bootstrap\n"
    "train: {epochs: 6, batch_size: 32, shuffle: true}\n";

}  // namespace

TEST_CASE("cuda parity: end-to-end training on both backends (epochs replayed as CUDA graphs)") {
  if (skip_without_gpu()) return;
  for (const std::string mode : {"bootstrap", "group_by"}) {
    Config cfg = parse_config(kE2eYaml, "test");
    PreparedData data = prepare_data(load_dataset(cfg.data, true), cfg.data);
    if (mode == "group_by") {  // unequal member sets: per-step valid rows and row tables
      cfg.data.per_member = PerMember::GroupBy;
      cfg.data.group_by = "g";
      data.train.group.resize(data.train.n);
      for (int i = 0; i < data.train.n; ++i) data.train.group[i] = i < 40 ? i % 2 : i % 8;
      data.group_names = {"a", "b", "c", "d", "e", "f", "g", "h"};
    }
    CpuBackend cpu(1);
    CudaBackend gpu(0, false);
    const TrainOutput a = train_swarm(cfg, data, cpu, nullptr);
    const TrainOutput g = train_swarm(cfg, data, gpu, nullptr);
    MESSAGE(mode << ": " << g.kernel << "; graph launches " << gpu.graph_launches());
    CHECK(gpu.graph_launches() >= cfg.train.epochs - 1);  // every epoch after the first is a replay
    cmp_runs(mode, a, g);
    // Chunks of 3 members on the GPU give the same members.
    const TrainOutput c = train_swarm_in_chunks(cfg, data, make_member_sets(cfg, data), gpu, nullptr, 3);
    cmp_runs(mode + " chunked", a, c);
  }
}

TEST_CASE("cuda: tf32 GEMMs stay close to fp32 on a training run") {
  if (skip_without_gpu()) return;
  const Config cfg = parse_config(kE2eYaml, "test");
  const PreparedData data = prepare_data(load_dataset(cfg.data, true), cfg.data);
  CudaBackend fp32(0, false), tf32(0, true);
  CHECK(tf32.describe().find("TF32") != std::string::npos);
  const TrainOutput a = train_swarm(cfg, data, fp32, nullptr);
  const TrainOutput t = train_swarm(cfg, data, tf32, nullptr);
  cmp("tf32 train loss curve", a.train_loss, t.train_loss, 2e-2);
}

TEST_CASE("cuda parity: recurrent cell ops (time-major copy, lstm and gru steps, first step and later)") {
  if (skip_without_gpu()) return;
  Pair b;
  struct Shape { int S, B, H; };
  for (const Shape s : {Shape{1, 1, 1}, Shape{3, 5, 7}, Shape{4, 32, 32}}) {
    const std::string tag = "S" + std::to_string(s.S) + " B" + std::to_string(s.B) + " H" + std::to_string(s.H);
    {  // [B, T, F] -> [T, B, F]
      const int T = 4, F = 3;
      const std::int64_t ss = static_cast<std::int64_t>(s.B) * T * F + 2;
      Mirror<float> src(b.gpu, rnd(ss * s.S, 30)), dst(b.gpu, rnd(ss * s.S, 31));
      b.cpu.to_time_major(s.S, s.B, T, F, src.h.data(), ss, dst.h.data(), ss);
      b.gpu.to_time_major(s.S, s.B, T, F, src.d, ss, dst.d, ss);
      compare("to_time_major " + tag, dst, 0, 0);
    }
    const std::int64_t sC = static_cast<std::int64_t>(s.B) * s.H + 3, sG4 = 4 * sC, sG3 = 3 * sC;
    for (bool first : {true, false}) {
      const std::string t2 = tag + (first ? " first step" : " later step");
      Mirror<float> G(b.gpu, rnd(sG4 * s.S, 32, -3, 3)), cp(b.gpu, rnd(sC * s.S, 33)), c(b.gpu, rnd(sC * s.S, 34)),
          h(b.gpu, rnd(sC * s.S, 35));
      b.cpu.lstm_forward(s.S, s.B, s.H, G.h.data(), sG4, first ? nullptr : cp.h.data(), c.h.data(), h.h.data(), sC);
      b.gpu.lstm_forward(s.S, s.B, s.H, G.d, sG4, first ? nullptr : cp.d, c.d, h.d, sC);
      compare("lstm_forward gates " + t2, G, 1e-6, 1e-5);
      compare("lstm_forward c " + t2, c, 1e-6, 1e-5);
      compare("lstm_forward h " + t2, h, 1e-6, 1e-5);
      Mirror<float> dh(b.gpu, rnd(sC * s.S, 36)), dc(b.gpu, rnd(sC * s.S, 37)), dG(b.gpu, rnd(sG4 * s.S, 38));
      b.cpu.lstm_backward(s.S, s.B, s.H, G.h.data(), sG4, first ? nullptr : cp.h.data(), c.h.data(), dh.h.data(), sC,
                          dc.h.data(), sC, dG.h.data());
      b.gpu.lstm_backward(s.S, s.B, s.H, G.d, sG4, first ? nullptr : cp.d, c.d, dh.d, sC, dc.d, sC, dG.d);
      compare("lstm_backward dG " + t2, dG, 1e-6, 1e-5);
      compare("lstm_backward dc " + t2, dc, 1e-6, 1e-5);

      Mirror<float> Gx(b.gpu, rnd(sG3 * s.S, 40, -3, 3)), Gh(b.gpu, rnd(sG3 * s.S, 41, -3, 3)),
          bh(b.gpu, rnd(3 * s.H * s.S + 1, 42)), hp(b.gpu, rnd(sC * s.S, 43)), hn(b.gpu, rnd(sC * s.S, 44));
      b.cpu.gru_forward(s.S, s.B, s.H, Gx.h.data(), Gh.h.data(), sG3, bh.h.data(), 3 * s.H,
                        first ? nullptr : hp.h.data(), hn.h.data(), sC);
      b.gpu.gru_forward(s.S, s.B, s.H, Gx.d, Gh.d, sG3, bh.d, 3 * s.H, first ? nullptr : hp.d, hn.d, sC);
      compare("gru_forward gates " + t2, Gx, 1e-6, 1e-5);
      compare("gru_forward Gh " + t2, Gh, 1e-6, 1e-5);
      compare("gru_forward h " + t2, hn, 1e-6, 1e-5);
      Mirror<float> dgx(b.gpu, rnd(sG3 * s.S, 45)), dgh(b.gpu, rnd(sG3 * s.S, 46)), dhp(b.gpu, rnd(sC * s.S, 47));
      b.cpu.gru_backward(s.S, s.B, s.H, Gx.h.data(), Gh.h.data(), sG3, first ? nullptr : hp.h.data(), dh.h.data(), sC,
                         dgx.h.data(), dgh.h.data(), first ? nullptr : dhp.h.data());
      b.gpu.gru_backward(s.S, s.B, s.H, Gx.d, Gh.d, sG3, first ? nullptr : hp.d, dh.d, sC, dgx.d, dgh.d,
                         first ? nullptr : dhp.d);
      compare("gru_backward dGx " + t2, dgx, 1e-6, 1e-5);
      compare("gru_backward dGh " + t2, dgh, 1e-6, 1e-5);
      compare("gru_backward dh_prev " + t2, dhp, 1e-6, 1e-5);
    }
  }
}

TEST_CASE("cuda parity: lstm and gru swarms trained on both backends (per-series data, graphs)") {
  if (skip_without_gpu()) return;
  for (const char* cell : {"lstm", "gru"}) {
    const std::string yaml = std::string(
        "name: t\nseed: 3\nswarm: {size: 6}\nmodel:\n  layers:\n    - {type: ") + cell +
        ", units: 8, return_sequences: true}\n    - {type: gru, units: 6}\n    - {type: dense, units: 1}\n"
        "loss: mse\noptimizer: {type: adam, lr: 0.01}\n"
        "data:\n  source: {type: random_walk, series: 6, length: 160, seed: 5}\n"
        "  split: {train: 0.7, val: 0.15, test: 0.15}\n  per_member: {group_by: ticker}\n"
        "  normalize: standard\n  normalize_per_member: true\n  sequence: {window: 8, horizon: 1, target: close}\n"
        "train: {epochs: 3, batch_size: 16}\n";
    const Config cfg = parse_config(yaml, "test");
    const PreparedData data = prepare_data(load_dataset(cfg.data, false), cfg.data);
    CpuBackend cpu(1);
    CudaBackend gpu(0, false);
    const TrainOutput a = train_swarm(cfg, data, cpu, nullptr);
    const TrainOutput g = train_swarm(cfg, data, gpu, nullptr);
    MESSAGE(cell << ": " << g.kernel << "; graph launches " << gpu.graph_launches());
    CHECK(gpu.graph_launches() >= cfg.train.epochs - 1);
    cmp_runs(cell, a, g);
  }
}

#endif  // TURBANET_HAVE_CUDA
