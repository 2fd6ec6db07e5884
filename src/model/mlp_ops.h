// Forward and backward passes of a swarm MLP over one block of members, as backend ops.
// Activations are [Sb, Bcap, width] with member stride Bcap·width; a pass over a batch of
// B ≤ Bcap rows uses each member's first B rows.
#pragma once
#include <vector>

#include "backend/backend.h"
#include "model/mlp.h"

namespace tn {

// Per-worker activation buffers for up to `members` members and `batch` rows.
struct MlpBuffers {
  int members = 0, batch = 0;
  float* X = nullptr;               // [Sb, Bcap, F] inputs
  float* Y = nullptr;               // [Sb, Bcap, T] targets
  std::vector<float*> Z, A;         // per layer [Sb, Bcap, out]; A aliases Z for identity
  float* dA = nullptr;              // [Sb, Bcap, max_width] two gradient buffers, ping-pong
  float* dB = nullptr;
  std::int64_t bytes = 0;

  MlpBuffers(Backend& be, const MlpShape& shape, int members, int batch, int targets);
  ~MlpBuffers();
  MlpBuffers(const MlpBuffers&) = delete;
  MlpBuffers& operator=(const MlpBuffers&) = delete;

 private:
  Backend& be_;
  std::vector<void*> owned_;
};

// Bytes MlpBuffers needs per member (for choosing block sizes).
std::int64_t mlp_buffer_bytes_per_member(const MlpShape& shape, int batch, int targets);

// Z_l, A_l for Sb members on B rows of buf.X. Returns the output logits buf.Z.back().
const float* mlp_forward(Backend& be, const MlpShape& shape, const BlockParams& p, MlpBuffers& buf,
                         int Sb, int B);

// Gradients into g from dZ_L (the loss gradient, in buf.dA) after mlp_forward on the same
// rows. Overwrites buf.dA/buf.dB.
void mlp_backward(Backend& be, const MlpShape& shape, const BlockParams& p, const BlockParams& g,
                  MlpBuffers& buf, int Sb, int B);

}  // namespace tn
