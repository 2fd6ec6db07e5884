// The step-kernel seam: one training step of a block of members (gather the batch, forward,
// loss, backward, gradient clipping, optimizer update) behind one interface, so the trainer
// has one path whatever runs the step. A backend offers fused kernels for the shapes it has
// them for (Backend::step_kernels: the CPU's lane kernel); every other shape runs the
// separate backend ops through the same interface (model/step_kernel_choice.h). The trainer asks
// once per run, logs the choice and records it in the run file's /meta@kernel.
#pragma once
#include <cstdint>
#include <string>

#include "math/losses.h"
#include "math/optimizers.h"
#include "swarm/sampler.h"
#include "swarm/shape.h"

namespace tn {

// One batch of a block: what forward, loss and backward read, and where the per-member sums
// go. Per-member arrays are device arrays like any tensor.
struct StepBatch {
  const ModelShape* shape = nullptr;
  const LossConfig* loss = nullptr;
  const BatchSampler* sampler = nullptr;
  std::uint32_t member0 = 0;  // global index of the block's first member (for the sampler)
  int S = 0;                  // members in the block
  std::uint32_t pos0 = 0;     // first position of the batch in each member's sample order
  int B = 0;                  // rows in the batch
  const float* X = nullptr;   // [n, F] training inputs
  const float* Y = nullptr;   // [n, targets] training targets
  int targets = 1;            // values per target row (1 for class labels)
  const BlockParams* params = nullptr;  // read (and updated by the step)
  const BlockParams* grads = nullptr;   // gradient scratch in the parameters' layout; a fused kernel may leave it untouched
  double* loss_sum = nullptr;           // [S], added to as by Backend::loss_backward
  double* correct = nullptr;            // [S]
  const int* rows = nullptr;            // [S] valid rows per member (null: all B), as for loss_backward
  std::uint64_t seed = 0;               // the run's seed (dropout masks)
  const std::uint32_t* epoch = nullptr; // device [1]: the epoch, for dropout masks (null: no dropout)
  const std::uint32_t* members = nullptr;  // device [S] or null: as DropoutKey::members
  const float* Ystats = nullptr;  // device [S, 2, targets] per-member target statistics, or null (Backend::gather_batch)
};

// The optimizer half of a step: the arguments Backend::optimizer_update takes for every
// tensor of the block (state arrays in the parameters' layout).
struct StepUpdate {
  OptimizerType type = OptimizerType::Adam;
  const BlockParams* state1 = nullptr;  // read and written
  const BlockParams* state2 = nullptr;  // read and written (unused by sgd)
  OptStep* opt = nullptr;               // [S] this step's optimizer scalars per member (skip may be set)
  float clip = 0.0f;                    // > 0: clip each member's global gradient norm
  // [S] divergence isolation (Backend::freeze_diverged), read and written, or null: none.
  int* frozen = nullptr;
};

class StepKernel {
 public:
  virtual ~StepKernel() = default;
  // What runs the step, for logs and /meta@kernel ("fused step, members in SIMD lanes ...").
  virtual std::string describe() const = 0;
  // Members per block the kernel is built for, or 0 when any block size works (the backend
  // then sizes blocks by its caches, Backend::block_members).
  virtual int block_members() const = 0;
  // One whole training step of block b on worker `worker` (0 <= worker < Backend::workers()):
  // with exactly the result, up to float rounding, of gather_batch, the model's forward pass,
  // loss_backward, the backward pass, then (clip > 0) sum_squares of every gradient into the
  // member's squared norm, and optimizer_update of every tensor with up's scalars. Adds to
  // b.loss_sum and b.correct. With up.frozen, freeze_diverged comes before the updates.
  virtual void step(const StepBatch& b, const StepUpdate& up, int worker) = 0;
};

}  // namespace tn
