// Scalar math overloaded for float (training) and double (finite-difference tests).
#pragma once
#include <cmath>

#include "math/fastmath.h"
#include "math/host_device.h"

namespace tn {
// Math functions overloaded for float and double that work in host and device code. The
// float versions are the vectorizable polynomials of fastmath.h (what training runs); the
// double versions are libm's, so finite-difference tests can instantiate the shared headers
// in double.
TN_HD float m_exp(float x) { return fast_exp(x); }
TN_HD double m_exp(double x) { return exp(x); }
TN_HD float m_log(float x) { return fast_log(x); }
TN_HD double m_log(double x) { return log(x); }
TN_HD float m_log1p(float x) { return fast_log(1.0f + x); }  // used for x = e^{-|z|} ≤ 1 only
TN_HD double m_log1p(double x) { return log1p(x); }
TN_HD float m_tanh(float x) { return fast_tanh(x); }
TN_HD double m_tanh(double x) { return tanh(x); }
TN_HD float m_erf(float x) { return fast_erf(x); }
TN_HD double m_erf(double x) { return erf(x); }
TN_HD float m_abs(float x) { return fabsf(x); }
TN_HD double m_abs(double x) { return fabs(x); }
TN_HD float m_max(float a, float b) { return fmaxf(a, b); }
TN_HD double m_max(double a, double b) { return fmax(a, b); }
}  // namespace tn
