// The step kernel a swarm trains with: the backend's fused kernel for the model's shape when it
// has one, else the separate ops (gather, forward and backward through model_ops, loss,
// clipping and optimizer update per tensor) behind the same interface.
#pragma once
#include <functional>
#include <memory>
#include <string>

#include "backend/backend.h"
#include "model/model_ops.h"

namespace tn {

// What the separate-ops kernel uses on one worker: its activation buffers (sized for the
// block) and a [block] array for the members' squared gradient norms.
struct OpsScratch {
  ModelBuffers* buf = nullptr;
  double* norm2 = nullptr;
};

struct StepKernelChoice {
  std::unique_ptr<StepKernel> kernel;
  std::string note;  // log line: which kernel and, for the separate ops, why no fused one
};

// Asks the backend once for its fused kernels for `shape` at `batch` rows and takes the first;
// without one, the separate ops, which call scratch(worker) for the worker's buffers.
// `ops_only` non-empty: the run needs what only the separate ops do (class weights);
// it says what, for the log, and no fused kernel is asked for.
StepKernelChoice choose_step_kernel(Backend& be, const ModelShape& shape, int batch, const std::string& ops_only,
                                    std::function<OpsScratch(int worker)> scratch);

}  // namespace tn
