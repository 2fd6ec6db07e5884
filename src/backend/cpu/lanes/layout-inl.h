// Where a lane group's arrays live in a worker's scratch (parameters, gradients, a chunk of
// rows' activations), how many rows a chunk holds, which shapes take the shallow kernel, and
// the gathering of a chunk's inputs and targets into lanes.
// Per-target code: included by backend/cpu/lanes_mlp.cpp once for every SIMD target
// (Highway's foreach_target), inside that target's namespace.
#if defined(TN_LANES_LAYOUT_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef TN_LANES_LAYOUT_INL_H_
#undef TN_LANES_LAYOUT_INL_H_
#else
#define TN_LANES_LAYOUT_INL_H_
#endif

#include <hwy/highway.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "backend/cpu/lanes/vec-inl.h"
#include "backend/step_kernel.h"
#include "math/dropout.h"
HWY_BEFORE_NAMESPACE();
namespace tn {
namespace HWY_NAMESPACE {
namespace {

// ---- layout ----

// Activations whose derivative needs z besides a = f(z) keep Z apart from A; the others
// store only a (relu's derivative is read off a: a > 0 exactly when z > 0).
constexpr bool keeps_z(Activation a) { return a == Activation::LeakyRelu || a == Activation::Gelu; }

// Networks with one hidden layer, at most this many inputs and outputs and no output
// activation run the shallow kernel (shallow-inl.h), compiled for each input and output width and
// hidden activation: on the AVX-512 and AVX2 targets (the generic target's vectors emulated in
// SSE registers would take the compiler minutes for little gain).
constexpr bool kShallowKernel = HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX2;
constexpr int kShallowMaxIn = 4, kShallowMaxOut = 4;
// Gelu's erf and exp would double the kernel's code for a rarely used hidden activation.
constexpr bool shallow_activation(Activation a) { return a != Activation::Gelu; }
// Dense layer li drops out when training (never the output layer): the generic kernel only.
bool has_dropout(const ModelShape& s, std::size_t li) { return s.layers[li].dropout > 0 && li + 1 < s.layers.size(); }
bool is_shallow(const ModelShape& s) {
  return kShallowKernel && s.layers.size() == 2 && !has_dropout(s, 0) && shallow_activation(s.layers[0].act) &&
         s.layers[1].act == Activation::Identity && s.inputs() <= kShallowMaxIn && s.outputs() <= kShallowMaxOut;
}
// Rows the shallow kernel keeps in registers at once (a block's inputs and outputs and a
// unit's weights fill AVX-512's 32 vector registers at 4 rows, AVX2's 16 at 2), and rows it
// gathers at once.
constexpr int kRowBlock = HWY_TARGET == HWY_AVX3 ? 4 : 2, kShallowChunk = 16;

// Rows of the batch that go through forward, loss and backward together (the generic
// kernel): while the parameters and gradients fit in L1 next to them (up to kResidentBytes),
// the chunk's activations get about kChunkBytes; otherwise the parameters stream from L2 for
// every chunk and the largest chunks amortize that best. Between 4 and 32 rows, a multiple
// of 4; results do not depend on it.
constexpr std::int64_t kChunkBytes = 12 << 10, kResidentBytes = 24 << 10;
constexpr int kMaxChunk = 32;

int chunk_rows(const ModelShape& s, int T, bool shallow) {
  if (shallow) return kShallowChunk;  // only inputs and targets are kept per row
  constexpr std::int64_t vec = L * static_cast<std::int64_t>(sizeof(float));
  if (2 * s.params_per_member() * vec > kResidentBytes) return kMaxChunk;
  std::int64_t v = s.inputs() + T + s.outputs();  // X, Y, dL/dA of the outputs
  for (std::size_t li = 0; li < s.layers.size(); ++li)
    v += s.layers[li].out * ((keeps_z(s.layers[li].act) ? 2 : 1) + (has_dropout(s, li) ? 2 : 0));
  return static_cast<int>(std::clamp<std::int64_t>(kChunkBytes / (v * vec) / 4 * 4, 4, kMaxChunk));
}

// Offsets (in floats) of one lane group's arrays inside the worker's scratch. Parameters
// and gradients share one sub-layout: tensor t at tensor[t] (floats) inside each.
struct LaneLayout {
  int R = 0;                // rows per chunk
  bool shallow = false;
  std::int64_t params = 0;  // lane vectors per parameter block (floats per member)
  std::vector<std::int64_t> tensor;
  std::int64_t P = 0, G = 0, Gm = -1, X = 0, Y = 0, dOut = 0, Hb = -1, Zb = -1, total = 0;
  std::vector<std::int64_t> A, Z;  // generic kernel, per layer: [R][out]; Z == A unless keeps_z
  // Layers with dropout: the factors M [R][out] of the chunk's rows and the dropped outputs
  // D [R][out] the next layer reads (M = -1 and D == A without dropout).
  std::vector<std::int64_t> M, D;

  LaneLayout(const ModelShape& s, int B, int T, bool update, bool shallow_kernel)
      : R(std::min(B, chunk_rows(s, T, shallow_kernel))), shallow(shallow_kernel) {
    for (int t = 0; t < s.tensors(); ++t) {
      tensor.push_back(params * L);
      params += s.tensor_size(t);
    }
    auto take = [&](std::int64_t n) { const std::int64_t at = total; total += n * L; return at; };
    P = take(params);
    G = take(params);
    X = take(static_cast<std::int64_t>(R) * s.inputs());
    Y = take(static_cast<std::int64_t>(R) * T);
    if (shallow) {
      Hb = take(static_cast<std::int64_t>(s.layers[0].out) * R);  // per block of rows: [hidden][row]
      Zb = take(static_cast<std::int64_t>(R) * s.outputs());
      dOut = take(static_cast<std::int64_t>(R) * s.outputs());
    } else {
      for (std::size_t li = 0; li < s.layers.size(); ++li) {
        const DenseLayer& l = s.layers[li];
        A.push_back(take(static_cast<std::int64_t>(R) * l.out));
        Z.push_back(keeps_z(l.act) ? take(static_cast<std::int64_t>(R) * l.out) : A.back());
        M.push_back(has_dropout(s, li) ? take(static_cast<std::int64_t>(R) * l.out) : -1);
        D.push_back(has_dropout(s, li) ? take(static_cast<std::int64_t>(R) * l.out) : A.back());
      }
      dOut = take(static_cast<std::int64_t>(R) * s.outputs());
    }
    if (update) Gm = take(params);  // the gradients in member rows, for the optimizer step
  }
  std::int64_t W(int li) const { return tensor[2 * li]; }
  std::int64_t b(int li) const { return tensor[2 * li + 1]; }
};

// ---- loss ----

// A lane group's per-lane loss constants and sums.
struct LossLanes {
  alignas(64) int valid[L];   // valid rows of each lane's batch
  alignas(64) float inv_b[L];  // 1 / valid
  alignas(64) double loss[L];
  alignas(64) double correct[L];
};

// Inputs and targets of batch rows [r0, r0 + rows) for the group's lanes. Unused lanes get
// lane 0's sample (finite data; their results are discarded). With a shared sample order
// every lane's row is the same: one broadcast per value.
void gather_rows(const StepBatch& fb, const LaneLayout& lay, float* ws, int g0, int nm, int r0, int rows) {
  const int F = fb.shape->inputs(), T = fb.targets;
  float* x = ws + lay.X;
  float* y = ws + lay.Y;
  const bool shared = fb.sampler->mode == SampleMode::Shared;
  for (int b = 0; b < rows; ++b) {
    const std::uint32_t pos = fb.pos0 + r0 + b;
    std::int64_t idx[L];
    idx[0] = fb.sampler->index(fb.member0 + g0, pos);
    if (shared) {
      const float* xs = fb.X + idx[0] * F;
      const float* ys = fb.Y + idx[0] * T;
      for (int f = 0; f < F; ++f) store(x + (static_cast<std::int64_t>(b) * F + f) * L, splat(xs[f]));
      for (int t = 0; t < T; ++t) store(y + (static_cast<std::int64_t>(b) * T + t) * L, splat(ys[t]));
      continue;
    }
    for (int l = 1; l < nm; ++l) idx[l] = fb.sampler->index(fb.member0 + g0 + l, pos);
    std::fill(idx + nm, idx + L, idx[0]);
    for (int f = 0; f < F; ++f) {
      float* xo = x + (static_cast<std::int64_t>(b) * F + f) * L;
      for (int l = 0; l < L; ++l) xo[l] = fb.X[idx[l] * F + f];
    }
    for (int t = 0; t < T; ++t) {
      float* yo = y + (static_cast<std::int64_t>(b) * T + t) * L;
      for (int l = 0; l < L; ++l) yo[l] = fb.Y[idx[l] * T + t];
    }
  }
}

}  // namespace
}  // namespace HWY_NAMESPACE
}  // namespace tn
HWY_AFTER_NAMESPACE();

#endif  // TN_LANES_LAYOUT_INL_H_
