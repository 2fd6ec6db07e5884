// The CPU backend's recurrent-layer ops: the cell equations of math/recurrent.h applied row by
// row, member by member (the GEMMs around them are the backend's ordinary GEMMs).
#include <algorithm>

#include "backend/cpu/cpu_backend.h"
#include "math/recurrent.h"

namespace tn {
namespace {

// Offset of row b of a [B, width] step in member s (member stride `stride`), or null.
template <class P>
P row(P base, int s, std::int64_t stride, int b, int width) {
  return base ? base + s * stride + static_cast<std::int64_t>(b) * width : nullptr;
}

}  // namespace

void CpuBackend::to_time_major(int S, int B, int T, int F, const float* src, std::int64_t ss, float* dst,
                               std::int64_t sd) {
  for (int s = 0; s < S; ++s)
    for (int b = 0; b < B; ++b)
      for (int t = 0; t < T; ++t)
        std::copy_n(src + s * ss + (static_cast<std::int64_t>(b) * T + t) * F, F,
                    dst + s * sd + (static_cast<std::int64_t>(t) * B + b) * F);
}

void CpuBackend::lstm_forward(int S, int B, int H, float* G, std::int64_t sG, const float* c_prev, float* c,
                              float* h, std::int64_t sC) {
  for (int s = 0; s < S; ++s)
    for (int b = 0; b < B; ++b) {
      float* g = row(G, s, sG, b, 4 * H);
      const float* cp = row(c_prev, s, sC, b, H);
      float* cr = row(c, s, sC, b, H);
      float* hr = row(h, s, sC, b, H);
      for (int j = 0; j < H; ++j) lstm_forward_unit(H, j, g, cp, cr, hr);
    }
}

void CpuBackend::lstm_backward(int S, int B, int H, const float* G, std::int64_t sG, const float* c_prev,
                               const float* c, const float* dh, std::int64_t sC, float* dc, std::int64_t sdc,
                               float* dG) {
  for (int s = 0; s < S; ++s)
    for (int b = 0; b < B; ++b) {
      const float* g = row(G, s, sG, b, 4 * H);
      const float* cp = row(c_prev, s, sC, b, H);
      const float* cr = row(c, s, sC, b, H);
      const float* d = row(dh, s, sC, b, H);
      float* dcr = row(dc, s, sdc, b, H);
      float* dg = row(dG, s, sG, b, 4 * H);
      for (int j = 0; j < H; ++j) lstm_backward_unit(H, j, g, cp, cr, d, dcr, dg);
    }
}

void CpuBackend::gru_forward(int S, int B, int H, float* Gx, float* Gh, std::int64_t sG, const float* bh,
                             std::int64_t sb, const float* h_prev, float* h, std::int64_t sH) {
  for (int s = 0; s < S; ++s)
    for (int b = 0; b < B; ++b) {
      float* gx = row(Gx, s, sG, b, 3 * H);
      float* gh = row(Gh, s, sG, b, 3 * H);
      const float* hp = row(h_prev, s, sH, b, H);
      float* hr = row(h, s, sH, b, H);
      const float* bias = bh + s * sb;
      for (int j = 0; j < H; ++j) gru_forward_unit(H, j, gx, hp ? gh : nullptr, bias, hp, gh + 2 * H + j, hr);
    }
}

void CpuBackend::gru_backward(int S, int B, int H, const float* Gx, const float* Gh, std::int64_t sG,
                              const float* h_prev, const float* dh, std::int64_t sH, float* dGx, float* dGh,
                              float* dh_prev) {
  for (int s = 0; s < S; ++s)
    for (int b = 0; b < B; ++b) {
      const float* gx = row(Gx, s, sG, b, 3 * H);
      const float* gh = row(Gh, s, sG, b, 3 * H);
      const float* hp = row(h_prev, s, sH, b, H);
      const float* d = row(dh, s, sH, b, H);
      float* dgx = row(dGx, s, sG, b, 3 * H);
      float* dgh = row(dGh, s, sG, b, 3 * H);
      float* dhp = row(dh_prev, s, sH, b, H);
      for (int j = 0; j < H; ++j) gru_backward_unit(H, j, gx, gh[2 * H + j], hp, d, dgx, dgh, dhp);
    }
}

}  // namespace tn
