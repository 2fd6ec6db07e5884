// Branch-free float exp, log, tanh and erf for host and device code. They inline into loops
// that the compiler vectorizes (libm calls would block that and cost ~20 cycles each), and
// they are the same polynomials on every backend. Accuracy (checked in tests/test_math.cpp
// against libm): exp and log within a few ulp, tanh within 2e-7 and erf within 6e-7 absolute.
#pragma once
#include <cmath>
#include <cstdint>

#include "math/host_device.h"

namespace tn {

TN_HD float bits_to_float(std::uint32_t u) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(u);
#else
  return __builtin_bit_cast(float, u);
#endif
}
TN_HD std::uint32_t float_to_bits(float f) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(f);
#else
  return __builtin_bit_cast(std::uint32_t, f);
#endif
}

// The polynomials are written once, for a value type T with the operations Ops gives it:
// float (FloatOps, host and device code) and the CPU lane kernel's SIMD vectors
// (backend/cpu/lanes/vec-inl.h), so both compute the same operations lane by lane.
//   splat(float) -> T               select(mask, a, b) -> mask ? a : b, mask from T < T
//   bits(T) -> U (uint32 lanes)     from_bits(U) -> T     as_int(U) -> I (int32 lanes)
//   to_float(I) -> T                at_least(x, c) = x < c ? c : x, at_most(x, c) = x > c ? c : x
struct FloatOps {
  TN_HD static float splat(float x) { return x; }
  TN_HD static float select(bool m, float a, float b) { return m ? a : b; }
  TN_HD static std::uint32_t bits(float f) { return float_to_bits(f); }
  TN_HD static float from_bits(std::uint32_t u) { return bits_to_float(u); }
  TN_HD static std::int32_t as_int(std::uint32_t u) { return static_cast<std::int32_t>(u); }
  TN_HD static float to_float(std::int32_t i) { return static_cast<float>(i); }
  TN_HD static float at_least(float x, float c) { return x < c ? c : x; }
  TN_HD static float at_most(float x, float c) { return x > c ? c : x; }
};

#include "math/fastmath_poly.inc"

TN_HD float fast_exp(float x) { return exp_poly(x); }
TN_HD float fast_log(float x) { return log_poly(x); }
TN_HD float fast_tanh(float x) { return tanh_poly(x); }
TN_HD float fast_erf(float x) { return erf_poly(x); }

}  // namespace tn
