// Memory planner: bytes one swarm member needs on a device (parameters, gradients, optimizer
// state, activations for the batch, per-member scalars) plus the data, and how many members
// fit at once; and, for runs on the CPU, the whole run's host memory against what the machine
// has available. Host-only arithmetic, unit-tested without a GPU.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "swarm/shape.h"
#include "util/host_memory.h"  // available_memory, format_bytes

namespace tn {

struct MemoryEstimate {
  std::int64_t params = 0;            // floats per member
  std::int64_t param_bytes = 0;       // per member: parameters, gradients, 2 optimizer states
  std::int64_t activation_bytes = 0;  // per member: forward/backward buffers and predictions
  std::int64_t scalar_bytes = 0;      // per member: loss/correct/norm² sums, step, rows, loss scratch
  std::int64_t per_member = 0;        // the sum of the three above
  std::int64_t data_bytes = 0;        // training and validation arrays (shared by all members)
  std::int64_t reserve_bytes = 0;     // fixed: library workspaces, allocator rounding
  std::int64_t total(std::int64_t members) const;  // saturating (math/saturate.h)
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

// Memory of a whole run in host memory (the CPU backend, where the swarm's arrays are host
// memory too), phase by phase: training, the final evaluation, writing the run file. Each
// part is a fixed size plus a size per member, so the largest swarm that fits follows from
// it. Sizes saturate (math/saturate.h).
struct HostMemoryPart {
  std::string what;  // "parameters, gradients and optimizer state 6 x [S, P]", ...
  std::int64_t fixed = 0, per_member = 0;
  // The bytes for the estimate's swarm when they are not linear in its size (-1: they are);
  // fixed + per_member · members is then an upper bound for a swarm of any size.
  std::int64_t exact = -1;
  std::vector<std::string> reduce;  // what makes this part smaller, besides swarm.size
  std::int64_t bytes(std::int64_t members) const;
};
struct HostMemoryPhase {
  std::string name;  // "training", ...
  std::vector<HostMemoryPart> parts;
  std::int64_t bytes(std::int64_t members) const;  // of the estimate's swarm (members == its size)
};
struct HostMemoryEstimate {
  std::int64_t members = 0;
  std::int64_t loaded_bytes = 0;  // already allocated when estimated (the data): taken from
                                  // MemAvailable already, so added to it for the comparison
  std::vector<HostMemoryPhase> phases;
  const HostMemoryPhase& peak_phase() const;
  std::int64_t peak() const { return peak_phase().bytes(members); }
  // The largest swarm whose every phase fits in `available` bytes (0 when none does).
  std::int64_t max_members(std::int64_t available) const;
};

// Throws ConfigError when the estimate's peak exceeds `available` bytes plus what is already
// loaded (available == 0: unknown, not checked). The message gives the estimate, its largest
// parts, the available memory, the largest swarm that fits and what else to reduce.
void check_host_memory(const HostMemoryEstimate& est, std::uint64_t available);

}  // namespace tn
