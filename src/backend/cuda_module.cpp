// Loading the CUDA backend module on demand; see cuda_module.h for why it is separate.
#include "backend/cuda_module.h"

#include <dlfcn.h>
#include <unistd.h>

#include <climits>

namespace tn {

#if defined(TURBANET_HAVE_CUDA)
namespace {

// How many GPUs the driver sees, asked through libcuda.so.1 directly: cheap, and it needs
// neither the CUDA runtime nor cuBLAS. 0 with *why set when there is no driver or device.
int driver_device_count(std::string* why) {
  void* h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);  // kept open: the runtime uses it too
  if (!h) {
    *why = "no CUDA driver on this machine (libcuda.so.1 not found)";
    return 0;
  }
  using InitFn = int (*)(unsigned);
  using CountFn = int (*)(int*);
  using NameFn = int (*)(int, const char**);
  const auto init = reinterpret_cast<InitFn>(dlsym(h, "cuInit"));
  const auto count = reinterpret_cast<CountFn>(dlsym(h, "cuDeviceGetCount"));
  const auto name = reinterpret_cast<NameFn>(dlsym(h, "cuGetErrorName"));
  if (!init || !count) {
    *why = "libcuda.so.1 lacks cuInit/cuDeviceGetCount (a broken CUDA driver installation)";
    return 0;
  }
  const int rc = init(0);
  int n = 0;
  if (rc != 0 || count(&n) != 0 || n <= 0) {
    const char* what = nullptr;
    if (rc != 0 && name) name(rc, &what);
    *why = rc == 100 || (rc == 0 && n <= 0) ? std::string("no CUDA device found")
                                            : std::string("the CUDA driver failed to start (cuInit: ") +
                                                  (what ? what : std::to_string(rc)) + ")";
    return 0;
  }
  return n;
}

std::string executable_dir() {
  char buf[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return {};
  std::string p(buf, static_cast<std::size_t>(n));
  const std::size_t slash = p.rfind('/');
  return slash == std::string::npos ? std::string() : p.substr(0, slash);
}

struct Loaded {
  const CudaModule* module = nullptr;
  std::string error;
};

Loaded load_once() {
  Loaded r;
  // Next to the binary first (the build tree), then the library search path.
  const std::string beside = executable_dir() + "/" + kCudaModuleFile;
  void* h = dlopen(beside.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const std::string first = dlerror();
    h = dlopen(kCudaModuleFile, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      r.error = "the CUDA backend module could not be loaded (" + first +
                "); it is built beside the turbanet binary, so rebuild or reinstall turbanet";
      return r;
    }
  }
  using EntryFn = const CudaModule* (*)();
  const auto entry = reinterpret_cast<EntryFn>(dlsym(h, kCudaModuleEntry));
  const CudaModule* m = entry ? entry() : nullptr;
  if (!m || m->abi != kCudaModuleAbi || !m->list_gpus || !m->make_backend) {
    r.error = std::string("the CUDA backend module ") + kCudaModuleFile +
              " belongs to another turbanet build; rebuild turbanet";
    return r;
  }
  r.module = m;
  return r;
}

}  // namespace

const CudaModule* load_cuda_module(std::string* why) {
  static const Loaded loaded = load_once();  // thread-safe, once per process
  if (!loaded.module && why) *why = loaded.error;
  return loaded.module;
}

bool cuda_built() { return true; }

std::vector<GpuInfo> list_gpus(std::string* why) {
  std::string w;
  const CudaModule* m = driver_device_count(&w) > 0 ? load_cuda_module(&w) : nullptr;
  if (!m) {
    if (why) *why = w;
    return {};
  }
  return m->list_gpus(why);
}

std::unique_ptr<Backend> make_cuda_backend(int device, bool tf32) {
  std::string why;
  const CudaModule* m = load_cuda_module(&why);
  if (!m) throw BackendError(why);
  return std::unique_ptr<Backend>(m->make_backend(device, tf32));
}

#else  // a build without the CUDA backend

const CudaModule* load_cuda_module(std::string* why) {
  if (why) *why = "this turbanet build has no CUDA backend";
  return nullptr;
}
bool cuda_built() { return false; }
std::vector<GpuInfo> list_gpus(std::string* why) {
  if (why) *why = "this turbanet build has no CUDA backend";
  return {};
}
std::unique_ptr<Backend> make_cuda_backend(int, bool) {
  throw BackendError("this turbanet build has no CUDA backend (rebuild with -DTURBANET_CUDA=ON)");
}

#endif

}  // namespace tn
