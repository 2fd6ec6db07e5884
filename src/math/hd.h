// TN_HD marks functions compiled for both host and device (CUDA) code.
#pragma once
#if defined(__CUDACC__)
#define TN_HD __host__ __device__ __forceinline__
#else
#define TN_HD inline
#endif
