// TN_HD marks functions compiled for both host and device (CUDA) code.
#pragma once
#if defined(__CUDACC__)
#define TN_HD __host__ __device__ __forceinline__
#else
#define TN_HD inline
#endif

#include <cmath>

namespace tn {
// Math functions overloaded for float and double that work in host and device code, so the
// shared headers can be instantiated in double for finite-difference tests.
TN_HD float m_exp(float x) { return expf(x); }
TN_HD double m_exp(double x) { return exp(x); }
TN_HD float m_log(float x) { return logf(x); }
TN_HD double m_log(double x) { return log(x); }
TN_HD float m_log1p(float x) { return log1pf(x); }
TN_HD double m_log1p(double x) { return log1p(x); }
TN_HD float m_tanh(float x) { return tanhf(x); }
TN_HD double m_tanh(double x) { return tanh(x); }
TN_HD float m_erf(float x) { return erff(x); }
TN_HD double m_erf(double x) { return erf(x); }
TN_HD float m_abs(float x) { return fabsf(x); }
TN_HD double m_abs(double x) { return fabs(x); }
TN_HD float m_max(float a, float b) { return fmaxf(a, b); }
TN_HD double m_max(double a, double b) { return fmax(a, b); }
}  // namespace tn
