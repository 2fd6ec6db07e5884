// MLP passes written once against the backend interface.
#include "model/mlp_ops.h"

#include <utility>

namespace tn {

std::int64_t mlp_buffer_bytes_per_member(const MlpShape& shape, int batch, int targets) {
  std::int64_t floats = static_cast<std::int64_t>(batch) * (shape.inputs() + targets + 2 * shape.max_width());
  for (const auto& l : shape.layers) floats += static_cast<std::int64_t>(batch) * l.out * (l.act == Activation::Identity ? 1 : 2);
  return floats * static_cast<std::int64_t>(sizeof(float));
}

MlpBuffers::MlpBuffers(Backend& be, const MlpShape& shape, int members_, int batch_, int targets)
    : members(members_), batch(batch_), be_(be) {
  auto take = [&](std::int64_t per_member) {
    const std::size_t n = static_cast<std::size_t>(per_member) * members * batch;
    float* p = be_.alloc<float>(n);
    owned_.push_back(p);
    bytes += static_cast<std::int64_t>(n * sizeof(float));
    return p;
  };
  X = take(shape.inputs());
  Y = take(targets);
  for (const auto& l : shape.layers) {
    Z.push_back(take(l.out));
    A.push_back(l.act == Activation::Identity ? Z.back() : take(l.out));
  }
  dA = take(shape.max_width());
  dB = take(shape.max_width());
}

MlpBuffers::~MlpBuffers() {
  for (void* p : owned_) be_.release(p);
}

const float* mlp_forward(Backend& be, const MlpShape& shape, const BlockParams& p, MlpBuffers& buf,
                         int Sb, int B) {
  const float* in = buf.X;
  std::int64_t s_in = static_cast<std::int64_t>(buf.batch) * shape.inputs();
  for (std::size_t li = 0; li < shape.layers.size(); ++li) {
    const DenseLayer& l = shape.layers[li];
    const std::int64_t s_out = static_cast<std::int64_t>(buf.batch) * l.out;
    // Z [B, out] = in [B, in] · W [in, out], per member.
    gemm_rm(be, Trans::N, Trans::N, B, l.out, l.in, 1.0f, in, l.in, s_in, p.t[2 * li], l.out,
            p.stride(2 * li), 0.0f, buf.Z[li], l.out, s_out, Sb);
    be.bias_activation(l.act, l.slope, Sb, B, l.out, buf.Z[li], s_out, p.t[2 * li + 1],
                       p.stride(2 * li + 1), buf.A[li], s_out);
    in = buf.A[li];
    s_in = s_out;
  }
  return buf.A.back();
}

void mlp_backward(Backend& be, const MlpShape& shape, const BlockParams& p, const BlockParams& g,
                  MlpBuffers& buf, int Sb, int B) {
  float* dZ = buf.dA;   // dL/dZ of the current layer
  float* dIn = buf.dB;  // dL/dA of the layer below
  for (int li = static_cast<int>(shape.layers.size()) - 1; li >= 0; --li) {
    const DenseLayer& l = shape.layers[li];
    const std::int64_t s_act = static_cast<std::int64_t>(buf.batch) * l.out;
    // dZ holds dL/dA_l (for the last layer: the loss gradient w.r.t. the model output);
    // turn it into dL/dZ_l.
    // Gradient buffers hold [Sb, Bcap, width] with member stride Bcap·width of the layer.
    be.activation_backward(l.act, l.slope, Sb, B, l.out, buf.Z[li], buf.A[li], s_act, dZ);
    const float* in = li > 0 ? buf.A[li - 1] : buf.X;
    const std::int64_t s_in = static_cast<std::int64_t>(buf.batch) * l.in;
    // dW [in, out] = inᵀ [in, B] · dZ [B, out].
    gemm_rm(be, Trans::T, Trans::N, l.in, l.out, B, 1.0f, in, l.in, s_in, dZ, l.out, s_act, 0.0f,
            g.t[2 * li], l.out, g.stride(2 * li), Sb);
    be.bias_grad(Sb, B, l.out, dZ, s_act, g.t[2 * li + 1], g.stride(2 * li + 1));
    if (li == 0) break;
    // dA_{l-1} [B, in] = dZ [B, out] · Wᵀ [out, in].
    gemm_rm(be, Trans::N, Trans::T, B, l.in, l.out, 1.0f, dZ, l.out, s_act, p.t[2 * li], l.out,
            p.stride(2 * li), 0.0f, dIn, l.in, s_in, Sb);
    std::swap(dZ, dIn);
  }
}

}  // namespace tn
