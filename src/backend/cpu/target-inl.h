// The SIMD target being compiled, as a CpuTarget: kTarget in tn::HWY_NAMESPACE. Per-target
// code: included once for every target by the foreach_target translation units of the CPU
// backend (lanes_mlp.cpp, cpu_ops.cpp).
#if defined(TN_CPU_TARGET_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef TN_CPU_TARGET_INL_H_
#undef TN_CPU_TARGET_INL_H_
#else
#define TN_CPU_TARGET_INL_H_
#endif

#include <hwy/highway.h>

#include "backend/cpu/cpu_target.h"

// The portable fallback ("generic"): Highway's EMU128, or HWY_SCALAR where the compiler
// has a bug EMU128 avoids (GCC < 12.3).
#define TN_GENERIC_TARGET (HWY_TARGET == HWY_EMU128 || HWY_TARGET == HWY_SCALAR)

HWY_BEFORE_NAMESPACE();
namespace tn {
namespace HWY_NAMESPACE {

#if HWY_TARGET == HWY_AVX3
inline constexpr CpuTarget kTarget = CpuTarget::Avx512;
#elif HWY_TARGET == HWY_AVX2
inline constexpr CpuTarget kTarget = CpuTarget::Avx2;
#elif HWY_TARGET == HWY_NEON
inline constexpr CpuTarget kTarget = CpuTarget::Neon;
#elif TN_GENERIC_TARGET
inline constexpr CpuTarget kTarget = CpuTarget::Generic;
#else
#error "a SIMD target the CPU kernels do not name (see HWY_DISABLED_TARGETS in CMakeLists.txt)"
#endif

}  // namespace HWY_NAMESPACE
}  // namespace tn
HWY_AFTER_NAMESPACE();

#endif  // TN_CPU_TARGET_INL_H_
