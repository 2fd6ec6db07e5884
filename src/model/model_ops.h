// Forward and backward passes of a swarm model over one block of members, as backend ops.
// Activations are [Sb, Bcap, width] with member stride Bcap·width; a pass over a batch of
// B ≤ Bcap rows uses each member's first B rows. Recurrent layers (model/recurrent_ops.h)
// work time-major, [Sb, T, B, width], and hand their last state to the dense head.
#pragma once
#include "backend/backend.h"
#include "model/model_buffers.h"
#include "swarm/shape.h"

namespace tn {

// Forward pass of Sb members on B rows of buf.X. Returns the output logits buf.Z.back().
// `drop` (a training step; rate and layer are filled per layer): dense layers with a dropout
// rate drop out (the output layer never does); null: no dropout (validation, eval, predict).
const float* model_forward(Backend& be, const ModelShape& shape, const BlockParams& p, ModelBuffers& buf,
                           int Sb, int B, const DropoutKey* drop = nullptr);

// Gradients into g from dZ_L (the loss gradient, in buf.dA) after model_forward on the same
// rows. Overwrites buf.dA/buf.dB and the recurrent gradient buffers.
// `drop`: the same as the forward pass's.
void model_backward(Backend& be, const ModelShape& shape, const BlockParams& p, const BlockParams& g,
                    ModelBuffers& buf, int Sb, int B, const DropoutKey* drop = nullptr);

}  // namespace tn
