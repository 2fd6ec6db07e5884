// The module's one exported symbol: the table that src/backend/cuda_module.cpp loads.
#include "backend/cuda/cuda_backend.h"
#include "backend/cuda_module.h"

extern "C" __attribute__((visibility("default"))) const tn::CudaModule* turbanet_cuda_module() {
  static const tn::CudaModule m{
      tn::kCudaModuleAbi, &tn::cuda_runtime_gpus,
      [](int device, bool tf32) -> tn::Backend* { return new tn::CudaBackend(device, tf32); }};
  return &m;
}
