// Backend selection: which device a run uses (the rule declared in device_choice.h) and the
// backend made for it (make_backend, backend.h), decided once and passed explicitly. The rule
// lives here, not in a device_choice.cpp, because it throws backend.h's BackendError and
// backend.h includes device_choice.h.
#include <algorithm>

#include "backend/cpu/cpu_backend.h"
#include "backend/cuda_module.h"
#include "backend/device_choice.h"

namespace tn {

const char* to_string(DeviceKind d) {
  switch (d) {
    case DeviceKind::Auto: return "auto";
    case DeviceKind::Cpu: return "cpu";
    case DeviceKind::Cuda: return "cuda";
  }
  return "?";
}

DeviceChoice choose_device(DeviceKind kind, int index, bool built_with_cuda,
                           const std::vector<GpuInfo>& gpus, const std::string& no_gpu_reason) {
  DeviceChoice c;
  const std::string reason = no_gpu_reason.empty() ? "no CUDA device found" : no_gpu_reason;
  switch (kind) {
    case DeviceKind::Cpu:
      return c;
    case DeviceKind::Cuda:
      if (!built_with_cuda)
        throw BackendError("device: cuda was requested, but this turbanet build has no CUDA backend "
                           "(rebuild with -DTURBANET_CUDA=ON); use device: cpu or auto");
      if (gpus.empty())
        throw BackendError("device: cuda was requested, but " + reason +
                           "; use device: cpu or auto (`turbanet devices` lists GPUs)");
      if (index < 0 || index >= static_cast<int>(gpus.size()))
        throw BackendError("device: cuda:" + std::to_string(index) + " was requested, but there " +
                           (gpus.size() == 1 ? "is 1 GPU (cuda:0)"
                                             : "are " + std::to_string(gpus.size()) + " GPUs (cuda:0..cuda:" +
                                                   std::to_string(gpus.size() - 1) + ")"));
      c.cuda = true;
      c.index = index;
      return c;
    case DeviceKind::Auto:
      if (built_with_cuda && index >= 0 && index < static_cast<int>(gpus.size())) {
        c.cuda = true;
        c.index = index;
        c.note = "device: auto -> cuda:" + std::to_string(index) + " (" + gpus[index].name + ")";
      } else {
        c.note = std::string("device: auto -> cpu (") +
                 (built_with_cuda ? reason : "this build has no CUDA backend") + ")";
      }
      return c;
  }
  return c;
}

int pick_gpu_index(int named, int process_slot, int gpu_count) {
  if (named >= 0) return named;
  return gpu_count > 0 ? std::max(0, process_slot) % gpu_count : 0;
}

std::unique_ptr<Backend> make_backend(const BackendOptions& opt, std::string* log_note) {
  std::vector<GpuInfo> gpus;
  std::string why;
  if (opt.device != DeviceKind::Cpu) gpus = list_gpus(&why);
  const int index = pick_gpu_index(opt.device_index, opt.process_slot, static_cast<int>(gpus.size()));
  const DeviceChoice c = choose_device(opt.device, index, cuda_built(), gpus, why);
  if (log_note && !c.note.empty()) *log_note = c.note;
  if (c.cuda) return make_cuda_backend(c.index, opt.tf32);
  return std::make_unique<CpuBackend>(opt.threads);
}

}  // namespace tn
