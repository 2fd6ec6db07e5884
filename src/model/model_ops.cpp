// Model passes written once against the backend interface: the recurrent layers (if any),
// then the dense head.
#include "model/model_ops.h"

#include "model/recurrent_ops.h"

namespace tn {
namespace {

// Whether dense layer li drops out in this pass (training with `drop`; never the output layer),
// and its key.
bool drops(const ModelShape& shape, const DropoutKey* drop, std::size_t li) {
  return drop && shape.layers[li].dropout > 0 && li + 1 < shape.layers.size();
}
DropoutKey layer_key(const ModelShape& shape, const DropoutKey& drop, std::size_t li) {
  DropoutKey k = drop;
  k.rate = shape.layers[li].dropout;
  k.layer = static_cast<std::uint32_t>(li);
  return k;
}

}  // namespace

const float* model_forward(Backend& be, const ModelShape& shape, const BlockParams& p, ModelBuffers& buf,
                           int Sb, int B, const DropoutKey* drop) {
  std::int64_t s_in = static_cast<std::int64_t>(buf.batch) * shape.inputs();
  const float* in = shape.recurrent.empty() ? buf.X : recurrent_forward(be, shape, p, buf, Sb, B, &s_in);
  for (std::size_t li = 0; li < shape.layers.size(); ++li) {
    const DenseLayer& l = shape.layers[li];
    const int w = shape.dense_tensor(static_cast<int>(li));
    const std::int64_t s_out = static_cast<std::int64_t>(buf.batch) * l.out;
    // Z [B, out] = in [B, in] · W [in, out], per member.
    gemm_rm(be, Trans::N, Trans::N, B, l.out, l.in, 1.0f, in, l.in, s_in, p.t[w], l.out, p.stride(w), 0.0f,
            buf.Z[li], l.out, s_out, Sb);
    be.bias_activation(l.act, l.slope, Sb, B, l.out, buf.Z[li], s_out, p.t[w + 1], p.stride(w + 1), buf.A[li], s_out);
    in = buf.A[li];
    if (drops(shape, drop, li)) {  // D = A ⊙ mask / (1 − rate) feeds the next layer
      be.dropout(Sb, B, l.out, buf.A[li], s_out, buf.D[li], s_out, layer_key(shape, *drop, li));
      in = buf.D[li];
    }
    s_in = s_out;
  }
  return buf.A.back();
}

void model_backward(Backend& be, const ModelShape& shape, const BlockParams& p, const BlockParams& g,
                    ModelBuffers& buf, int Sb, int B, const DropoutKey* drop) {
  float* dZ = buf.dA;   // dL/dZ of the current layer
  float* dIn = buf.dB;  // dL/dA of the layer below
  // The head's input: the data, or the last recurrent layer's final state.
  const float* head_in = buf.X;
  std::int64_t s_head = static_cast<std::int64_t>(buf.batch) * shape.inputs();
  if (!shape.recurrent.empty()) {
    const RecurrentBuffers& top = buf.rec.back();
    const int H = shape.recurrent.back().units;
    head_in = top.Hs + static_cast<std::int64_t>(shape.seq_len - 1) * B * H;
    s_head = top.sH;
  }
  for (int li = static_cast<int>(shape.layers.size()) - 1; li >= 0; --li) {
    const DenseLayer& l = shape.layers[li];
    const int w = shape.dense_tensor(li);
    const std::int64_t s_act = static_cast<std::int64_t>(buf.batch) * l.out;
    // dZ holds dL/dA_l (for the last layer: the loss gradient w.r.t. the model output; with
    // dropout: dL/dD_l, which the same mask turns into dL/dA_l); turn it into dL/dZ_l.
    if (drops(shape, drop, static_cast<std::size_t>(li)))
      be.dropout(Sb, B, l.out, dZ, s_act, dZ, s_act, layer_key(shape, *drop, static_cast<std::size_t>(li)));
    be.activation_backward(l.act, l.slope, Sb, B, l.out, buf.Z[li], buf.A[li], s_act, dZ);
    const float* in = li > 0 ? (drops(shape, drop, static_cast<std::size_t>(li - 1)) ? buf.D[li - 1] : buf.A[li - 1])
                             : head_in;
    const std::int64_t s_in = li > 0 ? static_cast<std::int64_t>(buf.batch) * l.in : s_head;
    // dW [in, out] = inᵀ [in, B] · dZ [B, out].
    gemm_rm(be, Trans::T, Trans::N, l.in, l.out, B, 1.0f, in, l.in, s_in, dZ, l.out, s_act, 0.0f, g.t[w], l.out,
            g.stride(w), Sb);
    be.bias_grad(Sb, B, l.out, dZ, s_act, g.t[w + 1], g.stride(w + 1));
    if (li == 0 && shape.recurrent.empty()) break;
    // dA_{l-1} [B, in] = dZ [B, out] · Wᵀ [out, in]; below the head: dL/dh_{T−1}.
    std::int64_t s_d = static_cast<std::int64_t>(buf.batch) * l.in;
    float* dst = li > 0 ? dIn : recurrent_head_grad(be, shape, buf, Sb, B, &s_d);
    gemm_rm(be, Trans::N, Trans::T, B, l.in, l.out, 1.0f, dZ, l.out, s_act, p.t[w], l.out, p.stride(w), 0.0f, dst,
            l.in, s_d, Sb);
    std::swap(dZ, dIn);
  }
  if (!shape.recurrent.empty()) recurrent_backward(be, shape, p, g, buf, Sb, B);
}

}  // namespace tn
