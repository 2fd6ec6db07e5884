// GPU discovery and the device-selection rule (device: auto | cpu | cuda | cuda:N). The rule
// is a pure function of the request and the GPUs found, so it is tested without a GPU.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace tn {

// The config's `device:` request.
enum class DeviceKind { Auto, Cpu, Cuda };
const char* to_string(DeviceKind d);

struct GpuInfo {
  int index = 0;
  std::string name;
  std::uint64_t total_bytes = 0, free_bytes = 0;
  int cc_major = 0, cc_minor = 0;  // compute capability
  int sm_count = 0;
};

// True when this binary contains the CUDA backend.
bool cuda_built();
// The GPUs the CUDA runtime sees; empty without a CUDA build, a driver or a device (any
// runtime error counts as "no GPU"). *why, when given, gets the reason for an empty list.
std::vector<GpuInfo> list_gpus(std::string* why = nullptr);

struct DeviceChoice {
  bool cuda = false;
  int index = 0;     // GPU ordinal when cuda
  std::string note;  // log line for auto decisions ("device: auto -> cpu (no CUDA device)")
};

// What a run uses: cpu → CPU; cuda / cuda:N → GPU N (BackendError when the build has no
// CUDA backend or there is no such GPU); auto → GPU `index` when one is present, else the
// CPU with a note. `no_gpu_reason` explains an empty `gpus` in messages.
DeviceChoice choose_device(DeviceKind kind, int index, bool built_with_cuda,
                           const std::vector<GpuInfo>& gpus, const std::string& no_gpu_reason = "");

// The GPU ordinal a process asks for: the one named (cuda:N, `named` >= 0), else GPU
// `process_slot` mod `gpu_count`, so that the processes sharing a machine (MPI ranks, by
// their local rank) spread over its GPUs; 0 without GPUs.
int pick_gpu_index(int named, int process_slot, int gpu_count);

}  // namespace tn
