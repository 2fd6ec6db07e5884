// CUDA backend, host side: device discovery, the checking macro's failure path, memory,
// member blocks and the cuBLAS GEMM. The elementwise/loss/optimizer kernels are in kernels.cu.
#include "backend/cuda/cuda_backend.h"

#include <algorithm>
#include <string>

#include "backend/cuda/cuda_check.h"

namespace tn {

[[noreturn]] void cuda_fail(const char* expr, const char* file, int line, const char* what) {
  throw BackendError(std::string("CUDA error: ") + expr + " failed at " + file + ":" +
                     std::to_string(line) + ": " + (what ? what : "unknown error"));
}

std::vector<GpuInfo> cuda_runtime_gpus(std::string* why) {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count <= 0) {
    // Without a GPU the runtime reports an error (e.g. "CUDA driver version is insufficient")
    // rather than zero devices: any error means "no GPU".
    if (why) *why = e != cudaSuccess ? std::string("no usable CUDA device (") + cudaGetErrorString(e) + ")"
                                     : std::string("no CUDA device found");
    cudaGetLastError();  // clear the error state
    return {};
  }
  std::vector<GpuInfo> gpus;
  for (int i = 0; i < count; ++i) {
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, i) != cudaSuccess) continue;
    GpuInfo g;
    g.index = i;
    g.name = prop.name;
    g.total_bytes = prop.totalGlobalMem;
    g.cc_major = prop.major;
    g.cc_minor = prop.minor;
    g.sm_count = prop.multiProcessorCount;
    std::size_t free_b = 0, total_b = 0;
    if (cudaSetDevice(i) == cudaSuccess && cudaMemGetInfo(&free_b, &total_b) == cudaSuccess)
      g.free_bytes = free_b;
    gpus.push_back(g);
  }
  cudaGetLastError();
  if (gpus.empty() && why) *why = "no usable CUDA device";
  return gpus;
}

namespace {
cudaStream_t as_stream(void* s) { return static_cast<cudaStream_t>(s); }
cublasHandle_t as_cublas(void* h) { return static_cast<cublasHandle_t>(h); }
cublasOperation_t as_op(Trans t) { return t == Trans::N ? CUBLAS_OP_N : CUBLAS_OP_T; }
constexpr std::size_t kCublasWorkspaceBytes = 32u << 20;
}  // namespace

CudaBackend::CudaBackend(int device, bool tf32) : device_(device), tf32_(tf32) {
  std::string why;
  const std::vector<GpuInfo> gpus = cuda_runtime_gpus(&why);
  if (device < 0 || device >= static_cast<int>(gpus.size()))
    throw BackendError("cuda:" + std::to_string(device) + " is not available: " +
                       (gpus.empty() ? why : std::to_string(gpus.size()) + " GPU(s) present"));
  info_ = gpus[device];
  TN_CUDA_CHECK(cudaSetDevice(device_));
  cudaStream_t stream = nullptr;
  TN_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  stream_ = stream;
  cublasHandle_t handle = nullptr;
  try {
    TN_CUDA_CHECK(cublasCreate(&handle));
    cublas_ = handle;
    TN_CUDA_CHECK(cublasSetStream(handle, stream));
    TN_CUDA_CHECK(cublasSetPointerMode(handle, CUBLAS_POINTER_MODE_HOST));
    // A workspace of our own (after SetStream, which resets it): cuBLAS then never allocates
    // while a graph is being captured. 32 MiB is NVIDIA's recommendation for Hopper.
    TN_CUDA_CHECK(cudaMalloc(&cublas_workspace_, kCublasWorkspaceBytes));
    TN_CUDA_CHECK(cublasSetWorkspace(handle, cublas_workspace_, kCublasWorkspaceBytes));
    // FP32 unless TF32 was asked for: parity with the CPU needs full-precision products.
    TN_CUDA_CHECK(cublasSetMathMode(handle, tf32_ ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_PEDANTIC_MATH));
  } catch (...) {
    if (handle) cublasDestroy(handle);
    if (cublas_workspace_) cudaFree(cublas_workspace_);
    cudaStreamDestroy(stream);
    throw;
  }
}

CudaBackend::~CudaBackend() {
  // Destructors must not throw: errors here are ignored.
  for (auto& [key, r] : recorded_)
    if (r.exec) cudaGraphExecDestroy(static_cast<cudaGraphExec_t>(r.exec));
  if (scratch_) cudaFree(scratch_);
  for (void* p : retired_scratch_) cudaFree(p);
  if (cublas_workspace_) cudaFree(cublas_workspace_);
  if (cublas_) cublasDestroy(as_cublas(cublas_));
  if (stream_) {
    cudaStreamSynchronize(as_stream(stream_));
    cudaStreamDestroy(as_stream(stream_));
  }
}

std::string CudaBackend::describe() const {
  return name() + ": " + info_.name + " (sm_" + std::to_string(info_.cc_major) +
         std::to_string(info_.cc_minor) + ", " + std::to_string(info_.total_bytes >> 20) +
         " MiB), cuBLAS strided-batched GEMMs" + (tf32_ ? " in TF32" : " in FP32");
}

void CudaBackend::not_capturing(const char* what) const {
  if (capturing_)
    throw BackendError(std::string("internal error: ") + what + " inside a recorded op sequence");
}

void* CudaBackend::alloc_bytes(std::size_t bytes) {
  not_capturing("device allocation");
  const std::size_t rounded = std::max<std::size_t>(256, (bytes + 255) / 256 * 256);
  void* p = nullptr;
  TN_CUDA_CHECK(cudaMalloc(&p, rounded));
  TN_CUDA_CHECK(cudaMemsetAsync(p, 0, rounded, as_stream(stream_)));
  return p;
}

void CudaBackend::release(void* p) {
  if (!p) return;
  not_capturing("device release");
  TN_CUDA_CHECK(cudaStreamSynchronize(as_stream(stream_)));
  drop_recordings();
  TN_CUDA_CHECK(cudaFree(p));
}

void CudaBackend::drop_recordings() {
  for (auto& [key, r] : recorded_)
    if (r.exec) TN_CUDA_CHECK(cudaGraphExecDestroy(static_cast<cudaGraphExec_t>(r.exec)));
  recorded_.clear();
  for (void* p : retired_scratch_) TN_CUDA_CHECK(cudaFree(p));
  retired_scratch_.clear();
}

void CudaBackend::run_recorded(std::uint64_t key, const std::function<void()>& ops) {
  not_capturing("nested run_recorded");
  Recording& r = recorded_[key];
  if (r.runs == 0) {
    // The first run is eager: it sizes the scratch buffers the recording will point into.
    ops();
    ++r.runs;
    return;
  }
  if (!r.exec) {
    cudaStream_t s = as_stream(stream_);
    TN_CUDA_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    capturing_ = true;
    cudaGraph_t graph = nullptr;
    try {
      ops();
    } catch (...) {
      capturing_ = false;
      cudaStreamEndCapture(s, &graph);
      if (graph) cudaGraphDestroy(graph);
      throw;
    }
    capturing_ = false;
    TN_CUDA_CHECK(cudaStreamEndCapture(s, &graph));
    cudaGraphExec_t exec = nullptr;
    const cudaError_t e = cudaGraphInstantiate(&exec, graph, 0);
    cudaGraphDestroy(graph);
    TN_CUDA_CHECK(e);
    r.exec = exec;
  }
  TN_CUDA_CHECK(cudaGraphLaunch(static_cast<cudaGraphExec_t>(r.exec), as_stream(stream_)));
  ++graph_launches_;
}

void CudaBackend::fill_zero(void* dst, std::size_t bytes) {
  if (bytes) TN_CUDA_CHECK(cudaMemsetAsync(dst, 0, bytes, as_stream(stream_)));
}

void CudaBackend::copy(void* dst, const void* src, std::size_t bytes) {
  if (bytes) TN_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, as_stream(stream_)));
}

std::uint64_t CudaBackend::memory_budget() const {
  std::size_t free_b = 0, total_b = 0;
  TN_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
  return free_b;
}

void CudaBackend::to_device(void* dst, const void* src, std::size_t bytes) {
  if (bytes == 0) return;
  not_capturing("host-to-device copy");
  // From pageable host memory the call returns once `src` has been staged, so the caller may
  // reuse it at once; the copy stays ordered with the kernels on the stream.
  TN_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, as_stream(stream_)));
}

void CudaBackend::to_host(void* dst, const void* src, std::size_t bytes) {
  if (bytes == 0) return;
  not_capturing("device-to-host copy");
  TN_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, as_stream(stream_)));
  TN_CUDA_CHECK(cudaStreamSynchronize(as_stream(stream_)));
}

void* CudaBackend::scratch(std::size_t bytes) {
  if (bytes > scratch_bytes_) {
    // Recorded graphs may point into the old buffer: keep it until they are dropped, so that
    // growing the scratch (an op outside the recordings with more rows, say) costs no re-capture.
    void* grown = alloc_bytes(bytes);
    if (scratch_) retired_scratch_.push_back(scratch_);
    scratch_ = grown;
    scratch_bytes_ = bytes;
  }
  return scratch_;
}

void CudaBackend::for_each_block(int S, int max_block, const std::function<void(int, int, int)>& fn) {
  // One worker: blocks run one after another, in order, on the one stream.
  const int bs = std::max(1, max_block);
  for (int b0 = 0; b0 < S; b0 += bs) fn(b0, std::min(S, b0 + bs), 0);
}

void CudaBackend::gemm_strided_batched(Trans ta, Trans tb, int m, int n, int k, float alpha,
                                       const float* A, int lda, std::int64_t strideA,
                                       const float* B, int ldb, std::int64_t strideB, float beta,
                                       float* C, int ldc, std::int64_t strideC, int batch) {
  if (m <= 0 || n <= 0 || batch <= 0) return;
  TN_CUDA_CHECK(cublasSgemmStridedBatched(as_cublas(cublas_), as_op(ta), as_op(tb), m, n, k, &alpha, A,
                                          lda, strideA, B, ldb, strideB, &beta, C, ldc, strideC, batch));
}

}  // namespace tn
