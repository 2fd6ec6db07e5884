// CUDA versions of the recurrent-layer ops: one work item per (member, row, unit), through
// the cell equations of math/recurrent_cells.h that the CPU backend runs.
#include <cstdint>

#include "backend/cuda/cuda_backend.h"
#include "backend/cuda/grid_stride.cuh"
#include "math/recurrent_cells.h"

namespace tn {
namespace {

using i64 = std::int64_t;

// Splits item i of S·B·H into member s, row b, unit j.
struct Item {
  i64 s;
  int b, j;
  __device__ Item(i64 i, int B, int H) : s(i / (static_cast<i64>(B) * H)), b(static_cast<int>(i / H % B)), j(static_cast<int>(i % H)) {}
  template <class P>
  __device__ P row(P base, i64 stride, int width) const {
    return base ? base + s * stride + static_cast<i64>(b) * width : nullptr;
  }
};

struct TimeMajor {  // item = (member, b, t, f)
  int B, T, F;
  const float* src; i64 ss; float* dst; i64 sd;
  __device__ void operator()(i64 i) const {
    const i64 per = static_cast<i64>(B) * T * F;
    const i64 s = i / per, r = i % per;
    const int b = static_cast<int>(r / (static_cast<i64>(T) * F)), t = static_cast<int>(r / F % T), f = static_cast<int>(r % F);
    dst[s * sd + (static_cast<i64>(t) * B + b) * F + f] = src[s * ss + r];
  }
};

struct LstmFwd {
  int B, H;
  float* G; i64 sG; const float* c_prev; float* c; float* h; i64 sC;
  __device__ void operator()(i64 i) const {
    const Item it(i, B, H);
    lstm_forward_unit(H, it.j, it.row(G, sG, 4 * H), it.row(c_prev, sC, H), it.row(c, sC, H), it.row(h, sC, H));
  }
};

struct LstmBwd {
  int B, H;
  const float* G; i64 sG; const float* c_prev; const float* c; const float* dh; i64 sC; float* dc; i64 sdc; float* dG;
  __device__ void operator()(i64 i) const {
    const Item it(i, B, H);
    lstm_backward_unit(H, it.j, it.row(G, sG, 4 * H), it.row(c_prev, sC, H), it.row(c, sC, H), it.row(dh, sC, H),
                       it.row(dc, sdc, H), it.row(dG, sG, 4 * H));
  }
};

struct GruFwd {
  int B, H;
  float* Gx; float* Gh; i64 sG; const float* bh; i64 sb; const float* h_prev; float* h; i64 sH;
  __device__ void operator()(i64 i) const {
    const Item it(i, B, H);
    float* gh = it.row(Gh, sG, 3 * H);
    gru_forward_unit(H, it.j, it.row(Gx, sG, 3 * H), h_prev ? gh : nullptr, bh + it.s * sb, it.row(h_prev, sH, H),
                     gh + 2 * H + it.j, it.row(h, sH, H));
  }
};

struct GruBwd {
  int B, H;
  const float* Gx; const float* Gh; i64 sG; const float* h_prev; const float* dh; i64 sH; float* dGx; float* dGh;
  float* dh_prev;
  __device__ void operator()(i64 i) const {
    const Item it(i, B, H);
    gru_backward_unit(H, it.j, it.row(Gx, sG, 3 * H), it.row(Gh, sG, 3 * H)[2 * H + it.j], it.row(h_prev, sH, H),
                      it.row(dh, sH, H), it.row(dGx, sG, 3 * H), it.row(dGh, sG, 3 * H), it.row(dh_prev, sH, H));
  }
};

}  // namespace

void CudaBackend::to_time_major(int S, int B, int T, int F, const float* src, std::int64_t ss, float* dst,
                                std::int64_t sd) {
  launch(stream_, info_.sm_count, static_cast<i64>(S) * B * T * F, TimeMajor{B, T, F, src, ss, dst, sd});
}

void CudaBackend::lstm_forward(int S, int B, int H, float* G, std::int64_t sG, const float* c_prev, float* c,
                               float* h, std::int64_t sC) {
  launch(stream_, info_.sm_count, static_cast<i64>(S) * B * H, LstmFwd{B, H, G, sG, c_prev, c, h, sC});
}

void CudaBackend::lstm_backward(int S, int B, int H, const float* G, std::int64_t sG, const float* c_prev,
                                const float* c, const float* dh, std::int64_t sC, float* dc, std::int64_t sdc,
                                float* dG) {
  launch(stream_, info_.sm_count, static_cast<i64>(S) * B * H, LstmBwd{B, H, G, sG, c_prev, c, dh, sC, dc, sdc, dG});
}

void CudaBackend::gru_forward(int S, int B, int H, float* Gx, float* Gh, std::int64_t sG, const float* bh,
                              std::int64_t sb, const float* h_prev, float* h, std::int64_t sH) {
  launch(stream_, info_.sm_count, static_cast<i64>(S) * B * H, GruFwd{B, H, Gx, Gh, sG, bh, sb, h_prev, h, sH});
}

void CudaBackend::gru_backward(int S, int B, int H, const float* Gx, const float* Gh, std::int64_t sG,
                               const float* h_prev, const float* dh, std::int64_t sH, float* dGx, float* dGh,
                               float* dh_prev) {
  launch(stream_, info_.sm_count, static_cast<i64>(S) * B * H,
         GruBwd{B, H, Gx, Gh, sG, h_prev, dh, sH, dGx, dGh, dh_prev});
}

}  // namespace tn
