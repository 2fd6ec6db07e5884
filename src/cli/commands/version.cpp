// `turbanet --version`: the version, the git commit built, the CPU targets compiled in and
// whether this machine can use the CUDA backend.
#include "backend/cpu/cpu_target.h"
#include "backend/cuda_module.h"
#include "cli/commands/commands.h"
#include "turbanet_commit.h"
#include "turbanet_version.h"

namespace tn {

namespace {

std::string target_list(const std::vector<CpuTarget>& ts) {
  std::string s;
  for (CpuTarget t : ts) s += (s.empty() ? "" : ", ") + std::string(to_string(t));
  return s.empty() ? "none" : s;
}

}  // namespace

std::string version_text() {
  std::string s = std::string("turbanet ") + TURBANET_VERSION + "\ncommit " + TURBANET_GIT_COMMIT + "\n";
  const std::vector<CpuTarget> usable = available_cpu_targets();
  s += "CPU targets built in: " + target_list(compiled_cpu_targets()) + "; this CPU runs " +
       (usable.empty() ? std::string("none of them") : to_string(usable.front())) +
       " (TURBANET_CPU_TARGET pins one)\n";
  if (!cuda_built()) return s + "CUDA: not built (rebuild with -DTURBANET_CUDA=ON)";
  s += std::string("CUDA: built (toolkit ") + TURBANET_CUDA_TOOLKIT_VERSION + "); ";
  std::string why;
  const std::string module = cuda_module_path();
  if (module.empty()) {
    load_cuda_module(&why);
    return s + "module not usable: " + why;
  }
  s += "module " + module + "; ";
  const int gpus = cuda_driver_devices(&why);
  return s + (gpus > 0 ? std::to_string(gpus) + (gpus == 1 ? " GPU" : " GPUs") + " (turbanet devices lists them)"
                       : "no GPU here: " + why);
}

}  // namespace tn
