// The CUDA backend beyond single ops (those are the table in tests/op_table.cpp, whose CUDA
// row is tests/cuda/test_cuda_ops.cpp): a recorded op sequence replayed with new data, and training runs on the
// CPU and CUDA backends compared (dense, chunked, group_by, tf32, lstm and gru swarms, a
// diverging member). Without a GPU each case prints one "SKIPPED: no CUDA device (why)" line
// and passes.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "backend/cuda/cuda_backend.h"
#include "backend/device_choice.h"
#include "cuda_test_util.h"
#include "data/prepare.h"
#include "math/rng.h"
#include "train/trainer.h"
#include "train_test_util.h"

using namespace tn;

namespace {

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

}  // namespace

TEST_CASE("cuda: a recorded op sequence replayed with new staged data") {
  if (skip_without_gpu()) return;
  CpuBackend cpu(1);
  CudaBackend gpu(0, false);
  Mirror<float> x(gpu, rnd(64, 19));
  // z = x + bias with x staged before each run, through a recorded copy + bias_activation.
  Mirror<float> z(gpu, std::vector<float>(64, 0.0f)), bias(gpu, std::vector<float>(8, 0.5f));
  for (int run = 0; run < 4; ++run) {
    const std::vector<float> staged = rnd(64, 30 + run);
    gpu.to_device(x.d, staged.data(), 64 * sizeof(float));
    gpu.run_recorded(77, [&] {
      gpu.copy(z.d, x.d, 64 * sizeof(float));
      gpu.bias_activation(Activation::Identity, 0.0f, 1, 8, 8, z.d, 64, bias.d, 8, z.d, 64);
    });
    std::vector<float> ref = staged;
    cpu.bias_activation(Activation::Identity, 0.0f, 1, 8, 8, ref.data(), 64, bias.h.data(), 8, ref.data(), 64);
    z.h = ref;
    compare("recorded run " + std::to_string(run), z, 1e-6, 1e-6);
  }
  CHECK(gpu.graph_launches() == 3);  // run 0 eager, run 1 captured and launched, runs 2-3 replays
  CHECK(gpu.recordings() == 1);
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
      cfg.data.group_by = std::string(1, 'g');  // not "g": GCC 12 warns falsely (-Wrestrict) on that
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

TEST_CASE("cuda parity: a member with an absurd lr diverges and is frozen at the same step on both backends") {
  if (skip_without_gpu()) return;
  // Member 1 takes lr 1e30: its first step is finite but huge, its next loss is not.
  const Config cfg = parse_config(
      "name: t\nseed: 4\nswarm: {size: 4}\nmodel:\n  layers:\n    - {type: dense, units: 8, activation: relu}\n"
      "    - {type: dense, units: 2}\nloss: cross_entropy\noptimizer: {type: sgd, lr: {values: [0.05, 1.0e30, 0.1, 0.02]}}\n"
      "data:\n  source: {type: spirals, n: 80}\n  split: {train: 0.75, test: 0.25}\ntrain: {epochs: 4, batch_size: 16}\n",
      "test");
  const PreparedData data = prepare_data(load_dataset(cfg.data, true), cfg.data);
  CpuBackend cpu(1);
  CudaBackend gpu(0, false);
  const TrainOutput a = train_swarm(cfg, data, cpu, nullptr);
  const TrainOutput g = train_swarm(cfg, data, gpu, nullptr);
  CHECK(a.diverged_epoch == std::vector<int>{-1, 1, -1, -1});
  CHECK(g.diverged_epoch == a.diverged_epoch);
  for (int k = 0; k < 4; ++k) {  // the frozen member keeps the finite parameters it was frozen with
    const std::vector<float> on_gpu = tn::test::member_params(g, k);
    for (float v : on_gpu) REQUIRE(std::isfinite(v));
    cmp("member " + std::to_string(k) + " final weights", tn::test::member_params(a, k), on_gpu, 1e-3);
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
