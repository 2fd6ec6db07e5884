// TN_HD marks functions compiled for both host and device (CUDA) code. On the host they are
// always inlined: the CPU kernels are compiled once per SIMD target (backend/cpu/ops/,
// lanes_mlp.cpp), and a call inlined there is compiled for that target too (its vector
// width, its fused multiply-adds), so a kernel and the ops it is tested against round alike.
#pragma once
#if defined(__CUDACC__)
#define TN_HD __host__ __device__ __forceinline__
#else
#define TN_HD inline __attribute__((always_inline))
#endif
