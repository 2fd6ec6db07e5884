// Device memory planner: per-member estimates and the chunking decision.
#include "train/memory_plan.h"

#include <algorithm>

#include "backend/backend.h"
#include "config/config.h"
#include "math/saturate.h"
#include "model/model_ops.h"

namespace tn {

MemoryEstimate estimate_memory(const ModelShape& shape, int batch, int targets, std::int64_t data_bytes,
                               long steps) {
  // Every product saturates (math/saturate.h): an absurd shape gives an absurd estimate,
  // which the plan refuses, never a wrapped-around small or negative one.
  MemoryEstimate e;
  const std::int64_t B = std::max(1, batch);
  const std::int64_t O = shape.outputs();
  constexpr std::int64_t f32 = sizeof(float), f64 = sizeof(double);
  e.params = shape.params_per_member();
  e.param_bytes = sat_mul(4, e.params, f32);  // P, G, S1, S2
  e.activation_bytes = sat_add(model_buffer_bytes_per_member(shape, static_cast<int>(B), targets),
                               sat_mul(B, O, f32));  // + predictions
  // Train and validation loss/correct sums and norm² (double); per step of an epoch the step
  // scalars, valid rows and (sets mode) batch rows; the loss kernels' per-sample scratch
  // (loss and correct as doubles, softmax rows as floats).
  const std::int64_t S = std::max(1l, steps);
  const std::int64_t per_step = sat_add(static_cast<std::int64_t>(sizeof(OptStep) + sizeof(int)),
                                        sat_mul(B, static_cast<std::int64_t>(sizeof(std::uint32_t))));
  e.scalar_bytes = sat_add(sat_add(5 * f64, sat_mul(S, per_step)), sat_mul(B, sat_add(2 * f64, sat_mul(O, f32))));
  e.per_member = sat_add(sat_add(e.param_bytes, e.activation_bytes), e.scalar_bytes);
  e.data_bytes = std::max<std::int64_t>(0, data_bytes);
  e.reserve_bytes = kDeviceReserveBytes;
  return e;
}

std::int64_t MemoryEstimate::total(std::int64_t members) const {
  return sat_add(sat_add(reserve_bytes, data_bytes), sat_mul(per_member, members));
}

ChunkPlan plan_chunks(const MemoryEstimate& est, int S, std::uint64_t free_bytes, double usable) {
  const auto budget = static_cast<std::int64_t>(
      std::min(static_cast<double>(free_bytes) * std::clamp(usable, 0.0, 1.0), 9.0e18));
  const std::int64_t room = budget - sat_add(est.reserve_bytes, est.data_bytes);
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
  p.chunks = static_cast<int>((static_cast<std::int64_t>(std::max(1, S)) + p.chunk - 1) / p.chunk);
  p.bytes = est.total(p.chunk);
  if (p.chunks > 1)
    p.note = "swarm of " + std::to_string(S) + " members does not fit the device (" + format_bytes(est.total(S)) +
             " estimated, " + format_bytes(budget) + " usable): training " + std::to_string(p.chunks) +
             " chunks of up to " + std::to_string(p.chunk) + " members (" + format_bytes(est.per_member) +
             " per member)";
  return p;
}

std::int64_t HostMemoryPart::bytes(std::int64_t members) const {
  return exact >= 0 ? exact : sat_add(fixed, sat_mul(per_member, members));
}

std::int64_t HostMemoryPhase::bytes(std::int64_t members) const {
  std::int64_t b = 0;
  for (const HostMemoryPart& p : parts) b = sat_add(b, p.bytes(members));
  return b;
}

const HostMemoryPhase& HostMemoryEstimate::peak_phase() const {
  static const HostMemoryPhase none;
  const HostMemoryPhase* peak = &none;
  for (const HostMemoryPhase& ph : phases)
    if (peak == &none || ph.bytes(members) > peak->bytes(members)) peak = &ph;
  return *peak;
}

std::int64_t HostMemoryEstimate::max_members(std::int64_t available) const {
  std::int64_t fit = kSaturated;
  for (const HostMemoryPhase& ph : phases) {
    std::int64_t fixed = 0, per = 0;
    for (const HostMemoryPart& p : ph.parts) {
      fixed = sat_add(fixed, p.fixed);
      per = sat_add(per, p.per_member);
    }
    if (fixed > available) return 0;
    if (per > 0) fit = std::min(fit, (available - fixed) / per);
  }
  return fit;
}

void check_host_memory(const HostMemoryEstimate& est, std::uint64_t available) {
  if (available == 0) return;  // unknown: nothing to compare with
  const std::int64_t avail_now = static_cast<std::int64_t>(std::min<std::uint64_t>(available, kSaturated));
  const std::int64_t avail = sat_add(avail_now, est.loaded_bytes);
  const HostMemoryPhase& peak = est.peak_phase();
  const std::int64_t need = peak.bytes(est.members);
  if (need <= avail) return;
  std::vector<const HostMemoryPart*> parts;
  for (const HostMemoryPart& p : peak.parts)
    if (p.bytes(est.members) > 0) parts.push_back(&p);
  std::stable_sort(parts.begin(), parts.end(), [&](const HostMemoryPart* a, const HostMemoryPart* b) {
    return a->bytes(est.members) > b->bytes(est.members);
  });
  const std::size_t shown = std::min<std::size_t>(3, parts.size());
  std::string largest;
  for (std::size_t i = 0; i < shown; ++i)
    largest += std::string(i == 0 ? "" : i + 1 == shown ? " and " : ", ") + parts[i]->what + " (" +
               format_bytes(parts[i]->bytes(est.members)) + ")";
  // What makes the two largest parts smaller.
  std::vector<std::string> items;
  for (std::size_t i = 0; i < std::min<std::size_t>(2, parts.size()); ++i)
    for (const std::string& r : parts[i]->reduce)
      if (std::find(items.begin(), items.end(), r) == items.end()) items.push_back(r);
  std::string reduce;
  for (std::size_t i = 0; i < items.size(); ++i)
    reduce += (i == 0 ? "" : i + 1 == items.size() ? " or " : ", ") + items[i];
  std::string msg = "the run does not fit in memory: it needs an estimated " + format_bytes(need) + " (" +
                    std::to_string(need) + " bytes) while " + peak.name + ", mostly " + largest + ", but " +
                    format_bytes(avail) + " is available (MemAvailable " + format_bytes(avail_now) +
                    (est.loaded_bytes > 0 ? " plus " + format_bytes(est.loaded_bytes) + " of data already loaded" : "") +
                    "); ";
  const std::int64_t fit = est.max_members(avail);
  if (fit >= 1 && fit < est.members)
    msg += "at most " + std::to_string(fit) + " of the " + std::to_string(est.members) +
           " members fit: reduce swarm.size (or train the swarm in slices with swarm.first_member)" +
           (reduce.empty() ? "" : ", or " + reduce);
  else
    msg += "reduce " + (reduce.empty() ? std::string("the data or the model") : reduce);
  throw ConfigError(msg);
}

}  // namespace tn
