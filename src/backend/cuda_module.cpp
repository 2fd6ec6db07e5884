// Loading the CUDA backend module on demand; see cuda_module.h for why it is separate.
#include "backend/cuda_module.h"

#include <dlfcn.h>
#include <unistd.h>

#include <climits>
#include <filesystem>

#include "turbanet_version.h"

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
  std::string path;  // the file loaded
  std::string error;
};

Loaded load_once() {
  Loaded r;
  // Beside the binary (the build tree), then where an installation puts it relative to the
  // binary (bin/../lib/turbanet/, TURBANET_MODULE_DIR_FROM_BIN), then the library search path.
  const std::string dir = executable_dir();
  void* h = nullptr;
  std::string missing, failed;  // why the first absent candidate, and the first present one, did not load
  for (const std::string& p : {dir + "/" + kCudaModuleFile,
                               dir + "/" + TURBANET_MODULE_DIR_FROM_BIN + "/" + kCudaModuleFile,
                               std::string(kCudaModuleFile)}) {
    if ((h = dlopen(p.c_str(), RTLD_NOW | RTLD_LOCAL))) break;
    const std::string e = dlerror();
    // A module that is there but cannot load (e.g. without libcublas) says most.
    const bool absent = e.rfind(p + ":", 0) == 0 && e.find("No such file") != std::string::npos;
    std::string& why = absent ? missing : failed;
    if (why.empty()) why = e;
  }
  if (!h) {
    r.error = "the CUDA backend module could not be loaded (" + (failed.empty() ? missing : failed) +
              "); it is built beside the turbanet binary and installed in " TURBANET_MODULE_DIR_FROM_BIN
              " relative to it (the turbanet-cuda package), so rebuild or reinstall turbanet";
    return r;
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
  Dl_info info;
  r.path = dladdr(reinterpret_cast<void*>(entry), &info) && info.dli_fname
               ? std::filesystem::path(info.dli_fname).lexically_normal().string()
               : std::string(kCudaModuleFile);
  return r;
}

const Loaded& loaded() {
  static const Loaded once = load_once();  // thread-safe, once per process
  return once;
}

}  // namespace

const CudaModule* load_cuda_module(std::string* why) {
  if (!loaded().module && why) *why = loaded().error;
  return loaded().module;
}

std::string cuda_module_path() { return load_cuda_module(nullptr) ? loaded().path : std::string(); }

int cuda_driver_devices(std::string* why) { return driver_device_count(why); }

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
std::string cuda_module_path() { return {}; }
int cuda_driver_devices(std::string* why) {
  if (why) *why = "this turbanet build has no CUDA backend";
  return 0;
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
