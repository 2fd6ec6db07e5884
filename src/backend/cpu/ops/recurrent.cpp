// The CPU backend's recurrent-layer ops (cpu_ops.h): the cell equations of math/recurrent_cells.h
// applied row by row, member by member (the GEMMs around them are the backend's ordinary
// GEMMs), compiled once for every SIMD target (foreach_target). Each row's units run as one
// vectorized loop: the pointers are restrict-qualified and the first step's missing state is
// a separate instantiation, so the loop body has no branches.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "backend/cpu/ops/recurrent.cpp"
#include <hwy/foreach_target.h>  // must come before highway.h
#include <hwy/highway.h>

#include <algorithm>

#include "backend/cpu/ops/decl-inl.h"
#include "math/recurrent_cells.h"

HWY_BEFORE_NAMESPACE();
namespace tn {
namespace HWY_NAMESPACE {
namespace ops {
namespace {

// Row b of a [B, width] step in member s (member stride `stride`).
template <class P>
P row(P base, int s, std::int64_t stride, int b, int width) {
  return base + s * stride + static_cast<std::int64_t>(b) * width;
}

template <bool First>
void lstm_forward_rows(int S, int B, int H, float* G, std::int64_t sG, const float* c_prev, float* c, float* h,
                       std::int64_t sC) {
  for (int s = 0; s < S; ++s)
    for (int b = 0; b < B; ++b) {
      float* __restrict g = row(G, s, sG, b, 4 * H);
      const float* __restrict cp = First ? nullptr : row(c_prev, s, sC, b, H);
      float* __restrict cr = row(c, s, sC, b, H);
      float* __restrict hr = row(h, s, sC, b, H);
#pragma omp simd
      for (int j = 0; j < H; ++j) lstm_forward_unit(H, j, g, First ? nullptr : cp, cr, hr);
    }
}

template <bool First>
void lstm_backward_rows(int S, int B, int H, const float* G, std::int64_t sG, const float* c_prev, const float* c,
                        const float* dh, std::int64_t sC, float* dc, std::int64_t sdc, float* dG) {
  for (int s = 0; s < S; ++s)
    for (int b = 0; b < B; ++b) {
      const float* __restrict g = row(G, s, sG, b, 4 * H);
      const float* __restrict cp = First ? nullptr : row(c_prev, s, sC, b, H);
      const float* __restrict cr = row(c, s, sC, b, H);
      const float* __restrict d = row(dh, s, sC, b, H);
      float* __restrict dcr = row(dc, s, sdc, b, H);
      float* __restrict dg = row(dG, s, sG, b, 4 * H);
#pragma omp simd
      for (int j = 0; j < H; ++j) lstm_backward_unit(H, j, g, First ? nullptr : cp, cr, d, dcr, dg);
    }
}

template <bool First>
void gru_forward_rows(int S, int B, int H, float* Gx, float* Gh, std::int64_t sG, const float* bh, std::int64_t sb,
                      const float* h_prev, float* h, std::int64_t sH) {
  for (int s = 0; s < S; ++s)
    for (int b = 0; b < B; ++b) {
      float* __restrict gx = row(Gx, s, sG, b, 3 * H);
      float* __restrict gh = row(Gh, s, sG, b, 3 * H);
      const float* __restrict hp = First ? nullptr : row(h_prev, s, sH, b, H);
      float* __restrict hr = row(h, s, sH, b, H);
      const float* __restrict bias = bh + s * sb;
#pragma omp simd
      for (int j = 0; j < H; ++j)
        gru_forward_unit(H, j, gx, First ? nullptr : gh, bias, First ? nullptr : hp, gh + 2 * H + j, hr);
    }
}

template <bool First>
void gru_backward_rows(int S, int B, int H, const float* Gx, const float* Gh, std::int64_t sG, const float* h_prev,
                       const float* dh, std::int64_t sH, float* dGx, float* dGh, float* dh_prev) {
  for (int s = 0; s < S; ++s)
    for (int b = 0; b < B; ++b) {
      const float* __restrict gx = row(Gx, s, sG, b, 3 * H);
      const float* __restrict gh = row(Gh, s, sG, b, 3 * H);
      const float* __restrict hp = First ? nullptr : row(h_prev, s, sH, b, H);
      const float* __restrict d = row(dh, s, sH, b, H);
      float* __restrict dgx = row(dGx, s, sG, b, 3 * H);
      float* __restrict dgh = row(dGh, s, sG, b, 3 * H);
      float* __restrict dhp = First ? nullptr : row(dh_prev, s, sH, b, H);
#pragma omp simd
      for (int j = 0; j < H; ++j)
        gru_backward_unit(H, j, gx, gh[2 * H + j], First ? nullptr : hp, d, dgx, dgh, First ? nullptr : dhp);
    }
}

}  // namespace

void lstm_forward(int S, int B, int H, float* G, std::int64_t sG, const float* c_prev, float* c,
                              float* h, std::int64_t sC) {
  if (c_prev) lstm_forward_rows<false>(S, B, H, G, sG, c_prev, c, h, sC);
  else lstm_forward_rows<true>(S, B, H, G, sG, c_prev, c, h, sC);
}

void lstm_backward(int S, int B, int H, const float* G, std::int64_t sG, const float* c_prev,
                               const float* c, const float* dh, std::int64_t sC, float* dc, std::int64_t sdc,
                               float* dG) {
  if (c_prev) lstm_backward_rows<false>(S, B, H, G, sG, c_prev, c, dh, sC, dc, sdc, dG);
  else lstm_backward_rows<true>(S, B, H, G, sG, c_prev, c, dh, sC, dc, sdc, dG);
}

void gru_forward(int S, int B, int H, float* Gx, float* Gh, std::int64_t sG, const float* bh,
                             std::int64_t sb, const float* h_prev, float* h, std::int64_t sH) {
  if (h_prev) gru_forward_rows<false>(S, B, H, Gx, Gh, sG, bh, sb, h_prev, h, sH);
  else gru_forward_rows<true>(S, B, H, Gx, Gh, sG, bh, sb, h_prev, h, sH);
}

void gru_backward(int S, int B, int H, const float* Gx, const float* Gh, std::int64_t sG,
                              const float* h_prev, const float* dh, std::int64_t sH, float* dGx, float* dGh,
                              float* dh_prev) {
  // The first step has no previous state and nothing to pass dL/dh back to.
  if (h_prev) gru_backward_rows<false>(S, B, H, Gx, Gh, sG, h_prev, dh, sH, dGx, dGh, dh_prev);
  else gru_backward_rows<true>(S, B, H, Gx, Gh, sG, h_prev, dh, sH, dGx, dGh, nullptr);
}

}  // namespace ops
}  // namespace HWY_NAMESPACE
}  // namespace tn
HWY_AFTER_NAMESPACE();
