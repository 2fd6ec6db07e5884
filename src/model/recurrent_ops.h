// Forward and backward passes of a model's recurrent layers, as backend ops: per layer one
// member-batched GEMM for the input projection of all time steps, one small GEMM per step
// for the recurrent projection, the cell op per step, and after backpropagation through time
// one GEMM each for the input and recurrent weight gradients (and the lower layer's input
// gradient).
#pragma once
#include <cstdint>

#include "backend/backend.h"
#include "model/model_buffers.h"
#include "swarm/shape.h"

namespace tn {

// Runs the recurrent layers on the B windows in buf.X; returns the last layer's final state
// h_{T−1} ([Sb, B, H] rows with member stride *stride), the dense head's input.
const float* recurrent_forward(Backend& be, const ModelShape& shape, const BlockParams& p, ModelBuffers& buf,
                               int Sb, int B, std::int64_t* stride);

// Where the dense head writes dL/d(its input) before recurrent_backward: the last layer's
// dL/dh_{T−1} rows (member stride *stride). Zeroes the rest of that layer's dL/dh.
float* recurrent_head_grad(Backend& be, const ModelShape& shape, ModelBuffers& buf, int Sb, int B,
                           std::int64_t* stride);

// Backpropagation through time: weight gradients of every recurrent layer into g.
void recurrent_backward(Backend& be, const ModelShape& shape, const BlockParams& p, const BlockParams& g,
                        ModelBuffers& buf, int Sb, int B);

}  // namespace tn
