// LSTM and GRU cell equations for one (row, unit) of a time step, shared by the CPU and CUDA
// backends (and instantiated in double by the gradient tests). Gate layouts follow PyTorch:
//   LSTM gates [i, f, g, o], each H wide:  i, f, o = σ(·), g = tanh(·)
//     c_t = f ⊙ c_{t−1} + i ⊙ g,  h_t = o ⊙ tanh(c_t)
//   GRU gates [r, z, n] (PyTorch's / cuDNN's variant, the reset gate applied after the
//   recurrent projection):
//     r = σ(x·Wx_r + bx_r + h·Wh_r + bh_r),  z = σ(x·Wx_z + bx_z + h·Wh_z + bh_z)
//     n = tanh(x·Wx_n + bx_n + r ⊙ (h·Wh_n + bh_n)),  h_t = (1 − z) ⊙ n + z ⊙ h_{t−1}
// The pre-activations arrive in gate buffers (`g` for one row: 4H or 3H values); forward
// overwrites them with the activated gates, which is what backward reads. A missing previous
// state (the first step) is zero.
#pragma once

#include "math/activations.h"
#include "math/host_device.h"
#include "math/scalar.h"

namespace tn {

// tanh of the cell: 2σ(2x) − 1, one exponential and one division (the activation's tanh also
// evaluates a polynomial for small |x|, for relative accuracy the gates do not need).
template <class T>
TN_HD T cell_tanh(T x) { return T(2) * sigmoid(T(2) * x) - T(1); }

// Unit j of one row. g: the row's 4H gate values (pre-activations in, activations out);
// c_prev may be null (zero state). Writes c and h.
template <class T>
TN_HD void lstm_forward_unit(int H, int j, T* g, const T* c_prev, T* c, T* h) {
  const T i = sigmoid(g[j]), f = sigmoid(g[H + j]), gg = cell_tanh(g[2 * H + j]), o = sigmoid(g[3 * H + j]);
  g[j] = i;
  g[H + j] = f;
  g[2 * H + j] = gg;
  g[3 * H + j] = o;
  const T cn = (c_prev ? f * c_prev[j] : T(0)) + i * gg;
  c[j] = cn;
  h[j] = o * cell_tanh(cn);
}

// Backward of unit j: g holds the activated gates, c this step's cell state, c_prev the
// previous one (null: zero), dh = dL/dh_t, dc = dL/dc_t from the later step (in) and
// dL/dc_{t−1} (out). Writes the pre-activation gradients into dg (4H values of the row).
template <class T>
TN_HD void lstm_backward_unit(int H, int j, const T* g, const T* c_prev, const T* c, const T* dh, T* dc,
                              T* dg) {
  const T i = g[j], f = g[H + j], gg = g[2 * H + j], o = g[3 * H + j];
  const T tc = cell_tanh(c[j]);
  const T dct = dc[j] + dh[j] * o * (T(1) - tc * tc);
  const T cp = c_prev ? c_prev[j] : T(0);
  dg[j] = dct * gg * i * (T(1) - i);
  dg[H + j] = dct * cp * f * (T(1) - f);
  dg[2 * H + j] = dct * i * (T(1) - gg * gg);
  dg[3 * H + j] = dh[j] * tc * o * (T(1) - o);
  dc[j] = dct * f;
}

// Unit j of one GRU row. gx: x·Wx + bx (3H, overwritten with r, z, n); gh: h_{t−1}·Wh (3H; null
// on the first step, where h_{t−1} = 0), bh the recurrent bias. gh_n_out receives
// h_{t−1}·Wh_n + bh_n (what backward needs); h_prev may be null.
template <class T>
TN_HD void gru_forward_unit(int H, int j, T* gx, const T* gh, const T* bh, const T* h_prev, T* gh_n_out,
                            T* h) {
  const T hr = (gh ? gh[j] : T(0)) + bh[j], hz = (gh ? gh[H + j] : T(0)) + bh[H + j];
  const T hn = (gh ? gh[2 * H + j] : T(0)) + bh[2 * H + j];
  const T r = sigmoid(gx[j] + hr), z = sigmoid(gx[H + j] + hz);
  const T n = cell_tanh(gx[2 * H + j] + r * hn);
  gx[j] = r;
  gx[H + j] = z;
  gx[2 * H + j] = n;
  *gh_n_out = hn;
  h[j] = (T(1) - z) * n + z * (h_prev ? h_prev[j] : T(0));
}

// Backward of GRU unit j: gx holds r, z, n; hn = h_{t−1}·Wh_n + bh_n; dh = dL/dh_t. Writes the
// pre-activation gradients of the input projection (dgx, 3H) and of the recurrent projection
// (dgh, 3H), and adds the direct path z ⊙ dh to dh_prev (when not null).
template <class T>
TN_HD void gru_backward_unit(int H, int j, const T* gx, T hn, const T* h_prev, const T* dh, T* dgx, T* dgh,
                             T* dh_prev) {
  const T r = gx[j], z = gx[H + j], n = gx[2 * H + j];
  const T hp = h_prev ? h_prev[j] : T(0);
  const T dn = dh[j] * (T(1) - z) * (T(1) - n * n);
  const T dz = dh[j] * (hp - n) * z * (T(1) - z);
  const T dr = dn * hn * r * (T(1) - r);
  dgx[j] = dr;
  dgx[H + j] = dz;
  dgx[2 * H + j] = dn;
  dgh[j] = dr;
  dgh[H + j] = dz;
  dgh[2 * H + j] = dn * r;
  if (dh_prev) dh_prev[j] += dh[j] * z;
}

}  // namespace tn
