// Device memory planner: bytes one swarm member needs on a device (parameters, gradients,
// optimizer state, activations for the batch, per-member scalars) plus the data, and how
// many members fit at once. Host-only arithmetic, unit-tested without a GPU.
#pragma once
#include <cstdint>
#include <string>

#include "swarm/shape.h"

namespace tn {

struct MemoryEstimate {
  std::int64_t params = 0;            // floats per member
  std::int64_t param_bytes = 0;       // per member: parameters, gradients, 2 optimizer states
  std::int64_t activation_bytes = 0;  // per member: forward/backward buffers and predictions
  std::int64_t scalar_bytes = 0;      // per member: loss/correct/norm² sums, step, rows, loss scratch
  std::int64_t per_member = 0;        // the sum of the three above
  std::int64_t data_bytes = 0;        // training and validation arrays (shared by all members)
  std::int64_t reserve_bytes = 0;     // fixed: library workspaces, allocator rounding
  std::int64_t total(int members) const { return reserve_bytes + data_bytes + per_member * members; }
};

inline constexpr std::int64_t kDeviceReserveBytes = 64ll << 20;

// The estimate for a model with `targets` target values per sample, batches of `batch`
// rows, `steps` steps per epoch (per-step tables) and `data_bytes` of device-resident data.
MemoryEstimate estimate_memory(const ModelShape& shape, int batch, int targets, std::int64_t data_bytes,
                               long steps = 1);

struct ChunkPlan {
  int chunk = 0;   // members trained at once
  int chunks = 0;  // passes over the swarm: ceil(S / chunk)
  std::int64_t bytes = 0;  // estimated device bytes of one chunk
  std::string note;        // log line when the swarm is split ("" when it fits whole)
};

// Members per chunk for a swarm of S members when `free_bytes` of device memory are free,
// using at most `usable` of it (headroom for fragmentation). Throws BackendError with the
// estimate and a suggestion when not even one member fits.
ChunkPlan plan_chunks(const MemoryEstimate& est, int S, std::uint64_t free_bytes, double usable = 0.9);

// "1.5 GiB", "12.0 MiB", "512 B": sizes in messages.
std::string format_bytes(std::int64_t bytes);

}  // namespace tn
