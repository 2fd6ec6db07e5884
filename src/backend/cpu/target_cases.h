// For the HWY_ONCE part of a foreach_target translation unit: `case CpuTarget::X: return
// N_X::symbol;` for every target this build compiled, so that a function can return the
// target's instance of a per-target table:
//
//   const LaneKernel& lane_kernel(CpuTarget t) {
//     switch (t) { TN_TARGET_CASES(kLaneKernel) default: break; }
//     target_not_compiled(t);
//   }
#pragma once
#include <hwy/highway.h>

#include "backend/cpu/cpu_target.h"

#if HWY_TARGETS & HWY_AVX3
#define TN_CASE_AVX3(symbol) \
  case ::tn::CpuTarget::Avx512: return N_AVX3::symbol;
#else
#define TN_CASE_AVX3(symbol)
#endif
#if HWY_TARGETS & HWY_AVX2
#define TN_CASE_AVX2(symbol) \
  case ::tn::CpuTarget::Avx2: return N_AVX2::symbol;
#else
#define TN_CASE_AVX2(symbol)
#endif
#if HWY_TARGETS & HWY_NEON
#define TN_CASE_NEON(symbol) \
  case ::tn::CpuTarget::Neon: return N_NEON::symbol;
#else
#define TN_CASE_NEON(symbol)
#endif
#if HWY_TARGETS & HWY_EMU128
#define TN_CASE_EMU128(symbol) \
  case ::tn::CpuTarget::Generic: return N_EMU128::symbol;
#elif HWY_TARGETS & HWY_SCALAR  // the fallback where EMU128 is disabled (GCC < 12.3)
#define TN_CASE_EMU128(symbol) \
  case ::tn::CpuTarget::Generic: return N_SCALAR::symbol;
#else
#define TN_CASE_EMU128(symbol)
#endif

#define TN_TARGET_CASES(symbol) TN_CASE_AVX3(symbol) TN_CASE_AVX2(symbol) TN_CASE_NEON(symbol) TN_CASE_EMU128(symbol)
