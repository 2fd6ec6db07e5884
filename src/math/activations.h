// Activation functions and their derivatives, shared by the CPU and CUDA backends.
#pragma once
#include <cmath>

#include "math/host_device.h"
#include "math/scalar.h"

namespace tn {

enum class Activation { Identity, Relu, LeakyRelu, Tanh, Sigmoid, Gelu };

const char* to_string(Activation a);

template <class T>
TN_HD T sigmoid(T z) { return T(1) / (T(1) + m_exp(-z)); }

// a = f(z). `slope` is the negative-side slope of leaky_relu (ignored otherwise).
// gelu is the exact form 0.5·z·(1 + erf(z/√2)), as PyTorch's default.
template <Activation A, class T>
TN_HD T act_forward(T z, T slope) {
  if constexpr (A == Activation::Identity) return z;
  if constexpr (A == Activation::Relu) return z > T(0) ? z : T(0);
  if constexpr (A == Activation::LeakyRelu) return z > T(0) ? z : slope * z;
  if constexpr (A == Activation::Tanh) return m_tanh(z);
  if constexpr (A == Activation::Sigmoid) return sigmoid(z);
  if constexpr (A == Activation::Gelu) return T(0.5) * z * (T(1) + m_erf(z * T(0.70710678118654752)));
}

// df/dz at z, given a = f(z) (cheaper for tanh and sigmoid).
template <Activation A, class T>
TN_HD T act_derivative(T z, T a, T slope) {
  if constexpr (A == Activation::Identity) return T(1);
  if constexpr (A == Activation::Relu) return z > T(0) ? T(1) : T(0);
  if constexpr (A == Activation::LeakyRelu) return z > T(0) ? T(1) : slope;
  if constexpr (A == Activation::Tanh) return T(1) - a * a;
  if constexpr (A == Activation::Sigmoid) return a * (T(1) - a);
  if constexpr (A == Activation::Gelu) {
    const T cdf = T(0.5) * (T(1) + m_erf(z * T(0.70710678118654752)));
    const T pdf = T(0.39894228040143268) * m_exp(T(-0.5) * z * z);
    return cdf + z * pdf;
  }
}

// Calls f.template operator()<A>() with the activation as a compile-time constant, so
// kernels switch once per op and not once per element.
template <class F>
decltype(auto) dispatch_activation(Activation a, F&& f) {
  switch (a) {
    case Activation::Relu: return f.template operator()<Activation::Relu>();
    case Activation::LeakyRelu: return f.template operator()<Activation::LeakyRelu>();
    case Activation::Tanh: return f.template operator()<Activation::Tanh>();
    case Activation::Sigmoid: return f.template operator()<Activation::Sigmoid>();
    case Activation::Gelu: return f.template operator()<Activation::Gelu>();
    case Activation::Identity: break;
  }
  return f.template operator()<Activation::Identity>();
}

}  // namespace tn
