// `turbanet devices`: lists the GPUs the CUDA backend can use, or says there are none.
#include "backend/device_choice.h"
#include "cli/commands/cli_util.h"
#include "cli/commands/commands.h"
#include "util/host_memory.h"

namespace tn {

std::string format_devices(const std::vector<GpuInfo>& gpus, const std::string& why) {
  if (gpus.empty()) return "no CUDA device: " + (why.empty() ? std::string("none found") : why) +
                           "\n(device: auto trains on the CPU)\n";
  std::string s;
  for (const GpuInfo& g : gpus) {
    s += "cuda:" + std::to_string(g.index) + "  " + g.name + "  compute capability " +
         std::to_string(g.cc_major) + "." + std::to_string(g.cc_minor) + "  memory " +
         format_bytes(static_cast<std::int64_t>(g.total_bytes)) + " (" +
         format_bytes(static_cast<std::int64_t>(g.free_bytes)) + " free)  " +
         std::to_string(g.sm_count) + " SMs\n";
  }
  return s;
}

int run_devices() {
  std::string why;
  const std::vector<GpuInfo> gpus = list_gpus(&why);
  return print_stdout(format_devices(gpus, why)) ? kExitOk : kExitIo;
}

}  // namespace tn
