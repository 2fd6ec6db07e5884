// Which SIMD instruction set the CPU kernels run on: every kernel is compiled once per target
// (Google Highway's foreach_target) and one binary picks, at start, the best target this CPU
// supports, or the one TURBANET_CPU_TARGET pins.
#pragma once
#include <string>
#include <vector>

namespace tn {

// Best first. Each compiled target has its own lane width (floats per vector register).
enum class CpuTarget { Avx512, Avx2, Neon, Generic };

// "avx512", "avx2", "neon", "generic": the names TURBANET_CPU_TARGET takes.
const char* to_string(CpuTarget t);
// Floats per vector register of the target: 16, 8, 4, 4.
int target_lanes(CpuTarget t);

// Targets compiled into this binary, best first (a portable build: avx512, avx2, generic on
// x86-64; neon, generic on aarch64).
std::vector<CpuTarget> compiled_cpu_targets();
// Those of them this CPU runs, best first.
std::vector<CpuTarget> available_cpu_targets();

// The target of this process: TURBANET_CPU_TARGET when set (BackendError naming the
// available targets when it is unknown or this CPU lacks it), else the best available.
// Read once; later calls return the same target.
CpuTarget default_cpu_target();
// The same choice for a given TURBANET_CPU_TARGET value (empty: the best); for tests.
CpuTarget choose_cpu_target(const std::string& pinned);

// Thrown (as BackendError) when a kernel table is asked for a target not compiled in.
[[noreturn]] void target_not_compiled(CpuTarget t);

}  // namespace tn
