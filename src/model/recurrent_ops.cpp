// Recurrent layers as backend ops (see recurrent_ops.h). Inside a layer everything is
// time-major and dense in the batch: step t of a [T, B, width] buffer is rows [t·B, t·B + B).
#include "model/recurrent_ops.h"

namespace tn {

const float* recurrent_forward(Backend& be, const ModelShape& shape, const BlockParams& p, ModelBuffers& buf,
                               int Sb, int B, std::int64_t* stride) {
  const int T = shape.seq_len;
  RecurrentBuffers& r0 = buf.rec.front();
  be.to_time_major(Sb, B, T, shape.step_features, buf.X, static_cast<std::int64_t>(buf.batch) * shape.inputs(),
                   r0.in, r0.s_in);
  const float* in = r0.in;
  std::int64_t s_in = r0.s_in;
  for (std::size_t r = 0; r < shape.recurrent.size(); ++r) {
    const RecurrentLayer& l = shape.recurrent[r];
    RecurrentBuffers& rb = buf.rec[r];
    const int H = l.units, Gw = l.gates() * H, t0 = shape.recurrent_tensor(static_cast<int>(r));
    const bool lstm = l.cell == CellType::Lstm;
    const float *Wx = p.t[t0], *Wh = p.t[t0 + 1], *bx = p.t[t0 + 2];
    const std::int64_t sWx = p.stride(t0), sWh = p.stride(t0 + 1), sb = p.stride(t0 + 2);
    const std::int64_t step_G = static_cast<std::int64_t>(B) * Gw, step_H = static_cast<std::int64_t>(B) * H;
    // Input projection of every step at once: G [T·B, Gw] = in [T·B, in] · Wx + b.
    gemm_rm(be, Trans::N, Trans::N, T * B, Gw, l.in, 1.0f, in, l.in, s_in, Wx, Gw, sWx, 0.0f, rb.G, Gw, rb.sG, Sb);
    be.bias_activation(Activation::Identity, 0.0f, Sb, T * B, Gw, rb.G, rb.sG, bx, sb, rb.G, rb.sG);
    for (int t = 0; t < T; ++t) {
      float* G = rb.G + t * step_G;
      const float* h_prev = t > 0 ? rb.Hs + (t - 1) * step_H : nullptr;
      float* h = rb.Hs + t * step_H;
      if (lstm) {
        // G_t += h_{t−1} · Wh (nothing on the first step: h_{−1} = 0).
        if (h_prev) gemm_rm(be, Trans::N, Trans::N, B, Gw, H, 1.0f, h_prev, H, rb.sH, Wh, Gw, sWh, 1.0f, G, Gw, rb.sG, Sb);
        be.lstm_forward(Sb, B, H, G, rb.sG, t > 0 ? rb.C + (t - 1) * step_H : nullptr, rb.C + t * step_H, h, rb.sH);
      } else {
        float* Gh = rb.Gh + t * step_G;
        if (h_prev) gemm_rm(be, Trans::N, Trans::N, B, Gw, H, 1.0f, h_prev, H, rb.sH, Wh, Gw, sWh, 0.0f, Gh, Gw, rb.sG, Sb);
        be.gru_forward(Sb, B, H, G, Gh, rb.sG, p.t[t0 + 3], p.stride(t0 + 3), h_prev, h, rb.sH);
      }
    }
    in = rb.Hs;
    s_in = rb.sH;
  }
  const RecurrentBuffers& top = buf.rec.back();
  *stride = top.sH;
  return top.Hs + static_cast<std::int64_t>(T - 1) * B * shape.recurrent.back().units;
}

float* recurrent_head_grad(Backend& be, const ModelShape& shape, ModelBuffers& buf, int Sb, int B,
                           std::int64_t* stride) {
  RecurrentBuffers& top = buf.rec.back();
  be.fill_zero(top.dHs, static_cast<std::size_t>(Sb) * top.sH * sizeof(float));
  *stride = top.sH;
  return top.dHs + static_cast<std::int64_t>(shape.seq_len - 1) * B * shape.recurrent.back().units;
}

void recurrent_backward(Backend& be, const ModelShape& shape, const BlockParams& p, const BlockParams& g,
                        ModelBuffers& buf, int Sb, int B) {
  const int T = shape.seq_len;
  for (int r = static_cast<int>(shape.recurrent.size()) - 1; r >= 0; --r) {
    const RecurrentLayer& l = shape.recurrent[r];
    RecurrentBuffers& rb = buf.rec[r];
    const int H = l.units, Gw = l.gates() * H, t0 = shape.recurrent_tensor(r);
    const bool lstm = l.cell == CellType::Lstm;
    const std::int64_t step_G = static_cast<std::int64_t>(B) * Gw, step_H = static_cast<std::int64_t>(B) * H;
    const std::int64_t sdc = static_cast<std::int64_t>(buf.batch) * H;
    // The gradient that flows through the recurrent weights: dG (LSTM) or dGh (GRU).
    float* dR = lstm ? rb.dG : rb.dGh;
    if (lstm) be.fill_zero(rb.dc, static_cast<std::size_t>(Sb) * sdc * sizeof(float));
    // Whᵀ [Gw, H] once per pass instead of a transposed operand in every step's GEMM
    // (to_time_major with one feature swaps the two axes of [H, Gw]).
    const std::int64_t sWhT = static_cast<std::int64_t>(Gw) * H;
    if (T > 1) be.to_time_major(Sb, H, Gw, 1, p.t[t0 + 1], p.stride(t0 + 1), rb.WhT, sWhT);
    for (int t = T - 1; t >= 0; --t) {
      float* dh = rb.dHs + t * step_H;
      // dL/dh_t += dR_{t+1} · Whᵀ.
      if (t < T - 1)
        gemm_rm(be, Trans::N, Trans::N, B, H, Gw, 1.0f, dR + (t + 1) * step_G, Gw, rb.sG, rb.WhT, H, sWhT, 1.0f, dh,
                H, rb.sH, Sb);
      if (lstm) {
        be.lstm_backward(Sb, B, H, rb.G + t * step_G, rb.sG, t > 0 ? rb.C + (t - 1) * step_H : nullptr,
                         rb.C + t * step_H, dh, rb.sH, rb.dc, sdc, rb.dG + t * step_G);
      } else {
        be.gru_backward(Sb, B, H, rb.G + t * step_G, rb.Gh + t * step_G, rb.sG,
                        t > 0 ? rb.Hs + (t - 1) * step_H : nullptr, dh, rb.sH, rb.dG + t * step_G,
                        rb.dGh + t * step_G, t > 0 ? rb.dHs + (t - 1) * step_H : nullptr);
      }
    }
    const float* in = r == 0 ? rb.in : buf.rec[r - 1].Hs;
    const std::int64_t s_in = r == 0 ? rb.s_in : buf.rec[r - 1].sH;
    // dWx [in, Gw] = inᵀ · dG over all T·B rows; the input bias gradient sums them.
    gemm_rm(be, Trans::T, Trans::N, l.in, Gw, T * B, 1.0f, in, l.in, s_in, rb.dG, Gw, rb.sG, 0.0f, g.t[t0], Gw,
            g.stride(t0), Sb);
    be.bias_grad(Sb, T * B, Gw, rb.dG, rb.sG, g.t[t0 + 2], g.stride(t0 + 2));
    // dWh [H, Gw] = Σ_t h_{t−1}ᵀ dR_t: rows of steps 0..T−2 against dR of steps 1..T−1.
    if (T > 1)
      gemm_rm(be, Trans::T, Trans::N, H, Gw, (T - 1) * B, 1.0f, rb.Hs, H, rb.sH, dR + step_G, Gw, rb.sG, 0.0f,
              g.t[t0 + 1], Gw, g.stride(t0 + 1), Sb);
    else
      be.fill_zero(g.t[t0 + 1], static_cast<std::size_t>(Sb) * g.stride(t0 + 1) * sizeof(float));
    if (!lstm) be.bias_grad(Sb, T * B, Gw, rb.dGh, rb.sG, g.t[t0 + 3], g.stride(t0 + 3));
    // The layer below gets dL/d(its h_t) = dG · Wxᵀ for every step.
    if (r > 0)
      gemm_rm(be, Trans::N, Trans::T, T * B, l.in, Gw, 1.0f, rb.dG, Gw, rb.sG, p.t[t0], Gw, p.stride(t0), 0.0f,
              buf.rec[r - 1].dHs, l.in, buf.rec[r - 1].sH, Sb);
  }
}

}  // namespace tn
