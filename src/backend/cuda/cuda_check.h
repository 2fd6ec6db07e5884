// The one checking macro for every CUDA runtime and cuBLAS call: on failure it throws
// BackendError naming the expression, file, line and the library's error string.
#pragma once
#include <cublas_v2.h>
#include <cuda_runtime.h>

namespace tn {

[[noreturn]] void cuda_fail(const char* expr, const char* file, int line, const char* what);

inline const char* cuda_status_string(cudaError_t e) { return cudaGetErrorString(e); }
inline const char* cuda_status_string(cublasStatus_t s) { return cublasGetStatusString(s); }
inline bool cuda_status_ok(cudaError_t e) { return e == cudaSuccess; }
inline bool cuda_status_ok(cublasStatus_t s) { return s == CUBLAS_STATUS_SUCCESS; }

}  // namespace tn

#define TN_CUDA_CHECK(expr)                                                  \
  do {                                                                       \
    const auto tn_cuda_status_ = (expr);                                     \
    if (!::tn::cuda_status_ok(tn_cuda_status_))                              \
      ::tn::cuda_fail(#expr, __FILE__, __LINE__,                             \
                      ::tn::cuda_status_string(tn_cuda_status_));            \
  } while (0)
