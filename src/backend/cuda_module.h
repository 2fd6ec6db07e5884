// The CUDA backend lives in its own shared library (libturbanet_cuda.so, built from
// src/backend/cuda/) that the CPU build never loads: cuBLAS alone costs ~0.1 s and ~200 MB of
// mappings at start-up, which a 70 ms CPU training run cannot afford. list_gpus() first asks
// the CUDA driver (libcuda.so.1, through dlopen) whether any device exists, and only then loads
// the module; make_backend() asks the module for a CudaBackend.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "backend/device_choice.h"

namespace tn {

// The module's entry points; its one exported C symbol returns this table.
struct CudaModule {
  int abi = 0;  // kCudaModuleAbi of the build that made the module
  std::vector<GpuInfo> (*list_gpus)(std::string* why) = nullptr;
  Backend* (*make_backend)(int device, bool tf32) = nullptr;
};
inline constexpr int kCudaModuleAbi = 1;
inline constexpr const char* kCudaModuleEntry = "turbanet_cuda_module";
inline constexpr const char* kCudaModuleFile = "libturbanet_cuda.so";

// The module, loaded once (later calls return the same table); nullptr with *why set when the
// module file is missing, fails to load or comes from another build.
const CudaModule* load_cuda_module(std::string* why);

// The file the module was loaded from ("" when it cannot be loaded); loads it if not yet.
std::string cuda_module_path();
// How many GPUs the CUDA driver reports, without loading the module (0 with *why set when
// there is no driver or device, or the build has no CUDA backend).
int cuda_driver_devices(std::string* why);

// A CudaBackend on GPU `device` (BackendError when the module cannot be loaded).
std::unique_ptr<Backend> make_cuda_backend(int device, bool tf32);

}  // namespace tn
