// Device memory planner: per-member estimates and the chunking decision.
#include "train/memory_plan.h"

#include <algorithm>
#include <cstdio>

#include "backend/backend.h"
#include "model/model_ops.h"

namespace tn {

MemoryEstimate estimate_memory(const ModelShape& shape, int batch, int targets, std::int64_t data_bytes,
                               long steps) {
  MemoryEstimate e;
  const std::int64_t B = std::max(1, batch);
  const std::int64_t O = shape.outputs();
  e.params = shape.params_per_member();
  e.param_bytes = 4 * e.params * static_cast<std::int64_t>(sizeof(float));  // P, G, S1, S2
  e.activation_bytes = model_buffer_bytes_per_member(shape, static_cast<int>(B), targets) +
                       B * O * static_cast<std::int64_t>(sizeof(float));  // + predictions
  // Train and validation loss/correct sums and norm² (double); per step of an epoch the step
  // scalars, valid rows and (sets mode) batch rows; the loss kernels' per-sample scratch
  // (loss and correct as doubles, softmax rows as floats).
  const std::int64_t S = std::max(1l, steps);
  e.scalar_bytes = 5 * static_cast<std::int64_t>(sizeof(double)) +
                   S * (static_cast<std::int64_t>(sizeof(OptStep)) + static_cast<std::int64_t>(sizeof(int)) +
                        B * static_cast<std::int64_t>(sizeof(std::uint32_t))) +
                   B * (2 * static_cast<std::int64_t>(sizeof(double)) + O * static_cast<std::int64_t>(sizeof(float)));
  e.per_member = e.param_bytes + e.activation_bytes + e.scalar_bytes;
  e.data_bytes = data_bytes;
  e.reserve_bytes = kDeviceReserveBytes;
  return e;
}

std::string format_bytes(std::int64_t bytes) {
  char buf[64];
  const double b = static_cast<double>(bytes);
  if (bytes >= (1ll << 30)) std::snprintf(buf, sizeof buf, "%.1f GiB", b / (1ll << 30));
  else if (bytes >= (1ll << 20)) std::snprintf(buf, sizeof buf, "%.1f MiB", b / (1ll << 20));
  else if (bytes >= (1ll << 10)) std::snprintf(buf, sizeof buf, "%.1f KiB", b / (1ll << 10));
  else std::snprintf(buf, sizeof buf, "%lld B", static_cast<long long>(bytes));
  return buf;
}

ChunkPlan plan_chunks(const MemoryEstimate& est, int S, std::uint64_t free_bytes, double usable) {
  const auto budget = static_cast<std::int64_t>(static_cast<double>(free_bytes) * std::clamp(usable, 0.0, 1.0));
  const std::int64_t room = budget - est.reserve_bytes - est.data_bytes;
  const std::int64_t fit = est.per_member > 0 ? std::max<std::int64_t>(0, room) / est.per_member : S;
  if (fit < 1) {
    // The activations scale with the batch: the largest batch with which one member fits.
    std::string hint;
    const std::int64_t fixed = est.param_bytes;
    if (room > fixed && est.activation_bytes + est.scalar_bytes > 0)
      hint = "; chunk size 0 fits, so splitting the swarm cannot help: reduce train.batch_size "
             "(activations take " + format_bytes(est.activation_bytes + est.scalar_bytes) +
             " of it) or the model width";
    else
      hint = "; chunk size 0 fits even without activations: reduce the model (parameters and "
             "optimizer state take " + format_bytes(fixed) + "), or free device memory";
    throw BackendError("the swarm does not fit the device: one member needs an estimated " +
                       format_bytes(est.per_member) + " (parameters+gradients+optimizer state " +
                       format_bytes(est.param_bytes) + ", activations " + format_bytes(est.activation_bytes) +
                       ", scalars " + format_bytes(est.scalar_bytes) + ") plus " + format_bytes(est.data_bytes) +
                       " of data and " + format_bytes(est.reserve_bytes) + " reserved, but " +
                       format_bytes(budget) + " of " + format_bytes(static_cast<std::int64_t>(free_bytes)) +
                       " free device memory is usable" + hint);
  }
  ChunkPlan p;
  p.chunk = static_cast<int>(std::min<std::int64_t>(fit, std::max(1, S)));
  p.chunks = (std::max(1, S) + p.chunk - 1) / p.chunk;
  p.bytes = est.total(p.chunk);
  if (p.chunks > 1)
    p.note = "swarm of " + std::to_string(S) + " members does not fit the device (" + format_bytes(est.total(S)) +
             " estimated, " + format_bytes(budget) + " usable): training " + std::to_string(p.chunks) +
             " chunks of up to " + std::to_string(p.chunk) + " members (" + format_bytes(est.per_member) +
             " per member)";
  return p;
}

}  // namespace tn
