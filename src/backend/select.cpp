// Backend selection: which device a run uses, decided once and passed explicitly.
#include "backend/cpu/cpu_backend.h"

namespace tn {

std::unique_ptr<Backend> make_backend(const BackendOptions& opt, std::string* log_note) {
  switch (opt.device) {
    case DeviceKind::Cuda:
      throw BackendError(
          "device: cuda was requested, but this turbanet build has no CUDA backend yet; "
          "use device: cpu (or auto, which falls back to the CPU)");
    case DeviceKind::Auto:
      if (log_note) *log_note = "device: auto -> cpu (this build has no CUDA backend)";
      break;
    case DeviceKind::Cpu:
      break;
  }
  return std::make_unique<CpuBackend>(opt.threads);
}

}  // namespace tn
