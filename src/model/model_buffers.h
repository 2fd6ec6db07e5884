// Activation buffers of a swarm model over one block of members, on a backend: the dense
// layers' [Sb, Bcap, width] and the recurrent layers' time-major [Sb, T, Bcap, width] buffers
// that model/model_ops.h and model/recurrent_ops.h pass through.
#pragma once
#include <cstdint>
#include <vector>

#include "backend/backend.h"
#include "swarm/shape.h"

namespace tn {

// A recurrent layer's buffers, each with capacity for Bcap rows per time step.
struct RecurrentBuffers {
  float* in = nullptr;   // layer 0 only: time-major inputs [Sb, T, Bcap, F]
  float* G = nullptr;    // [Sb, T, Bcap, gates·H] gate pre-activations, then activations
  float* Gh = nullptr;   // GRU: [Sb, T, Bcap, 3H] recurrent projections
  float* Hs = nullptr;   // [Sb, T, Bcap, H] h_t of every step
  float* C = nullptr;    // LSTM: [Sb, T, Bcap, H] c_t of every step
  float* dG = nullptr;   // like G: gradients of the pre-activations
  float* dGh = nullptr;  // GRU: like Gh
  float* dHs = nullptr;  // like Hs: dL/dh_t
  float* dc = nullptr;   // LSTM: [Sb, Bcap, H] running dL/dc
  float* WhT = nullptr;  // [Sb, gates·H, H] the recurrent weights transposed (for backward)
  std::int64_t sG = 0, sH = 0, s_in = 0;  // member strides
};

// Per-worker activation buffers for up to `members` members and `batch` rows.
struct ModelBuffers {
  int members = 0, batch = 0;
  float* X = nullptr;               // [Sb, Bcap, inputs] inputs (a row is a [T, F] window for sequences)
  float* Y = nullptr;               // [Sb, Bcap, targets] targets
  std::vector<float*> Z, A;         // per dense layer [Sb, Bcap, out]; A aliases Z for identity
  std::vector<float*> D;            // per dense layer [Sb, Bcap, out]: A after dropout (aliases A without)
  float* dA = nullptr;              // [Sb, Bcap, max_width] two gradient buffers, ping-pong
  float* dB = nullptr;
  std::vector<RecurrentBuffers> rec;  // per recurrent layer
  std::int64_t bytes = 0;

  ModelBuffers(Backend& be, const ModelShape& shape, int members, int batch, int targets);
  ~ModelBuffers();
  ModelBuffers(const ModelBuffers&) = delete;
  ModelBuffers& operator=(const ModelBuffers&) = delete;

 private:
  Backend& be_;
  std::vector<void*> owned_;
};

// Bytes ModelBuffers needs per member (for choosing block sizes and planning device memory).
std::int64_t model_buffer_bytes_per_member(const ModelShape& shape, int batch, int targets);

}  // namespace tn
