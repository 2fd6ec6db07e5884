// Where a lane group's arrays live in a worker's scratch (parameters, gradients, a chunk of
// rows' activations), how many rows a chunk holds, which shapes take the shallow kernel, the
// transposes between member rows and lanes, and the gathering of a chunk's inputs and
// targets into lanes.
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

// ---- transposes between member rows and lanes ----

#if HWY_TARGET == HWY_AVX3
// r[i] (row i of a 16×16 block) becomes column i.
inline void transpose16(__m512 r[16]) {
  __m512 t[16];
  for (int i = 0; i < 8; ++i) {
    t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
  // Per 128-bit lane j, r[4i + m] = rows 4i..4i+3 of column 4j + m.
  for (int i = 0; i < 4; ++i) {
    const __m512d a = _mm512_castps_pd(t[4 * i]), b = _mm512_castps_pd(t[4 * i + 1]);
    const __m512d c = _mm512_castps_pd(t[4 * i + 2]), d = _mm512_castps_pd(t[4 * i + 3]);
    r[4 * i] = _mm512_castpd_ps(_mm512_unpacklo_pd(a, c));
    r[4 * i + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a, c));
    r[4 * i + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(b, d));
    r[4 * i + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(b, d));
  }
  for (int m = 0; m < 4; ++m) {
    const __m512 a = _mm512_shuffle_f32x4(r[m], r[4 + m], 0x88), b = _mm512_shuffle_f32x4(r[m], r[4 + m], 0xDD);
    const __m512 c = _mm512_shuffle_f32x4(r[8 + m], r[12 + m], 0x88), d = _mm512_shuffle_f32x4(r[8 + m], r[12 + m], 0xDD);
    t[m] = _mm512_shuffle_f32x4(a, c, 0x88);
    t[8 + m] = _mm512_shuffle_f32x4(a, c, 0xDD);
    t[4 + m] = _mm512_shuffle_f32x4(b, d, 0x88);
    t[12 + m] = _mm512_shuffle_f32x4(b, d, 0xDD);
  }
  for (int i = 0; i < 16; ++i) r[i] = t[i];
}
#elif HWY_TARGET == HWY_AVX2
// r[i] (row i of an 8×8 block) becomes column i.
inline void transpose8(__m256 r[8]) {
  __m256 t[8], u[8];
  for (int i = 0; i < 4; ++i) {
    t[2 * i] = _mm256_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm256_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
  // Per 128-bit half h, u[4i + m] = rows 4i..4i+3 of column 4h + m.
  for (int i = 0; i < 2; ++i) {
    u[4 * i] = _mm256_shuffle_ps(t[4 * i], t[4 * i + 2], _MM_SHUFFLE(1, 0, 1, 0));
    u[4 * i + 1] = _mm256_shuffle_ps(t[4 * i], t[4 * i + 2], _MM_SHUFFLE(3, 2, 3, 2));
    u[4 * i + 2] = _mm256_shuffle_ps(t[4 * i + 1], t[4 * i + 3], _MM_SHUFFLE(1, 0, 1, 0));
    u[4 * i + 3] = _mm256_shuffle_ps(t[4 * i + 1], t[4 * i + 3], _MM_SHUFFLE(3, 2, 3, 2));
  }
  for (int m = 0; m < 4; ++m) {
    r[m] = _mm256_permute2f128_ps(u[m], u[4 + m], 0x20);
    r[4 + m] = _mm256_permute2f128_ps(u[m], u[4 + m], 0x31);
  }
}
#endif

void to_lanes(const float* src, std::int64_t n, int nm, float* dst) {
#if HWY_TARGET == HWY_AVX3
  static_assert(L == 16);
  for (std::int64_t k0 = 0; k0 < n; k0 += 16) {
    const int w = static_cast<int>(std::min<std::int64_t>(16, n - k0));
    const auto m = static_cast<__mmask16>((1u << w) - 1);
    __m512 r[16];
    for (int l = 0; l < 16; ++l) r[l] = l < nm ? _mm512_maskz_loadu_ps(m, src + l * n + k0) : _mm512_setzero_ps();
    transpose16(r);
    for (int j = 0; j < w; ++j) _mm512_storeu_ps(dst + (k0 + j) * L, r[j]);
  }
#else
  std::int64_t k = 0;
#if HWY_TARGET == HWY_AVX2
  // Whole 8×8 blocks through registers (members' rows may end anywhere, so the last n % 8
  // elements go one by one: a whole load there would read past the last member's row).
  static_assert(L == 8);
  for (; k + 8 <= n; k += 8) {
    __m256 r[8];
    for (int l = 0; l < 8; ++l) r[l] = l < nm ? _mm256_loadu_ps(src + l * n + k) : _mm256_setzero_ps();
    transpose8(r);
    for (int j = 0; j < 8; ++j) _mm256_storeu_ps(dst + (k + j) * L, r[j]);
  }
#endif
  for (; k < n; ++k)
    for (int l = 0; l < L; ++l) dst[k * L + l] = l < nm ? src[l * n + k] : 0.0f;
#endif
}

void from_lanes(const float* src, std::int64_t n, int nm, std::uint32_t write, float* dst) {
#if HWY_TARGET == HWY_AVX3
  for (std::int64_t k0 = 0; k0 < n; k0 += 16) {
    const int w = static_cast<int>(std::min<std::int64_t>(16, n - k0));
    const auto m = static_cast<__mmask16>((1u << w) - 1);
    __m512 r[16];
    for (int j = 0; j < 16; ++j) r[j] = j < w ? _mm512_loadu_ps(src + (k0 + j) * L) : _mm512_setzero_ps();
    transpose16(r);
    for (int l = 0; l < nm; ++l)
      if (write >> l & 1) _mm512_mask_storeu_ps(dst + l * n + k0, m, r[l]);
  }
#else
  std::int64_t k0 = 0;
#if HWY_TARGET == HWY_AVX2
  for (; k0 + 8 <= n; k0 += 8) {
    __m256 r[8];
    for (int j = 0; j < 8; ++j) r[j] = _mm256_loadu_ps(src + (k0 + j) * L);
    transpose8(r);
    for (int l = 0; l < nm; ++l)
      if (write >> l & 1) _mm256_storeu_ps(dst + l * n + k0, r[l]);
  }
#endif
  for (int l = 0; l < nm; ++l)
    if (write >> l & 1)
      for (std::int64_t k = k0; k < n; ++k) dst[l * n + k] = src[k * L + l];
#endif
}

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
// every lane's row is the same: one broadcast per value. With per-member target statistics
// (fb.Ystats) each lane's targets are scaled by its member's, as Backend::gather_batch does.
void gather_rows(const StepBatch& fb, const LaneLayout& lay, float* ws, int g0, int nm, int r0, int rows) {
  const int F = fb.shape->inputs(), T = fb.targets;
  float* x = ws + lay.X;
  float* y = ws + lay.Y;
  const bool shared = fb.sampler->mode == SampleMode::Shared && !fb.Ystats;
  const float* stats[L];  // each lane's member's means (its stds follow, T on)
  if (fb.Ystats)
    for (int l = 0; l < L; ++l) stats[l] = fb.Ystats + static_cast<std::int64_t>(2 * (g0 + (l < nm ? l : 0))) * T;
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
      if (fb.Ystats)
        for (int l = 0; l < L; ++l) yo[l] = (fb.Y[idx[l] * T + t] - stats[l][t]) / stats[l][T + t];
      else
        for (int l = 0; l < L; ++l) yo[l] = fb.Y[idx[l] * T + t];
    }
  }
}

}  // namespace
}  // namespace HWY_NAMESPACE
}  // namespace tn
HWY_AFTER_NAMESPACE();

#endif  // TN_LANES_LAYOUT_INL_H_
