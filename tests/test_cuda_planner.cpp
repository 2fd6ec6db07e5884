// CPU-side tests of the GPU-adjacent code: the memory planner's estimates and chunking, the
// CUDA launcher's grid sizes, device selection (auto with no GPU -> CPU), `devices` output.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "backend/backend.h"
#include "backend/cuda/launch_grid.h"
#include "backend/cuda_module.h"
#include "backend/device_choice.h"
#include "train/memory_plan.h"
#include "cli/commands/commands.h"
#include "config_test_util.h"
#include "model/model_ops.h"

using namespace tn;

namespace {

ModelShape shape_2_16_3() {  // 2 -> 16 (relu) -> 3
  ModelShape s;
  s.layers = {{2, 16, Activation::Relu}, {16, 3, Activation::Identity}};
  return s;
}

GpuInfo gpu(int index, const char* name) {
  GpuInfo g;
  g.index = index;
  g.name = name;
  g.total_bytes = 80ull << 30;
  g.free_bytes = 79ull << 30;
  g.cc_major = 9;
  g.sm_count = 132;
  return g;
}

std::string error_of_choice(DeviceKind k, int index, bool built, const std::vector<GpuInfo>& gpus) {
  try {
    choose_device(k, index, built, gpus, "no usable CUDA device (driver too old)");
  } catch (const BackendError& e) {
    return e.what();
  }
  return "<no error>";
}

}  // namespace

TEST_CASE("cuda launcher: grid sizes cover n with a capped grid") {
  CHECK(grid_for(0, 132).blocks == 0);
  CHECK(grid_for(-5, 132).blocks == 0);
  const LaunchGrid one = grid_for(1, 132);
  CHECK(one.blocks == 1);
  CHECK(one.threads == kLaunchThreads);
  CHECK(grid_for(256, 132).blocks == 1);
  CHECK(grid_for(257, 132).blocks == 2);
  // Large n: capped at kBlocksPerSm blocks per SM; the grid-stride loop does the rest.
  const LaunchGrid big = grid_for(1ll << 30, 132);
  CHECK(big.blocks == 132 * kBlocksPerSm);
  CHECK(items_per_thread(1ll << 30, big) * big.blocks * big.threads >= (1ll << 30));
  CHECK(items_per_thread(1000, grid_for(1000, 132)) == 1);
  // Unknown SM count (0) still launches at least one block; tiny thread counts are raised to a warp.
  CHECK(grid_for(10000, 0).blocks == kBlocksPerSm);
  CHECK(grid_for(100, 132, 1).threads == 32);
  CHECK(grid_for(100, 132, 1).blocks == 4);
}

TEST_CASE("memory planner: per-member estimate counts params, optimizer state, activations") {
  const ModelShape s = shape_2_16_3();
  const std::int64_t params = 2 * 16 + 16 + 16 * 3 + 3;
  REQUIRE(s.params_per_member() == params);
  const MemoryEstimate e = estimate_memory(s, 32, 1, 1000);
  CHECK(e.params == params);
  CHECK(e.param_bytes == 4 * params * 4);  // P, G, S1, S2 as floats
  CHECK(e.activation_bytes == model_buffer_bytes_per_member(s, 32, 1) + 32 * 3 * 4);
  // 5 doubles; one step's scalars, valid rows and batch rows; per-sample loss scratch.
  CHECK(e.scalar_bytes == 5 * 8 + static_cast<std::int64_t>(sizeof(OptStep)) + 4 + 32 * 4 + 32 * (16 + 3 * 4));
  CHECK(e.per_member == e.param_bytes + e.activation_bytes + e.scalar_bytes);
  CHECK(e.data_bytes == 1000);
  CHECK(e.total(10) == e.reserve_bytes + 1000 + 10 * e.per_member);
  // Activations grow with the batch; parameters do not.
  const MemoryEstimate e2 = estimate_memory(s, 64, 1, 1000);
  CHECK(e2.param_bytes == e.param_bytes);
  CHECK(e2.activation_bytes > e.activation_bytes);
  // The per-step tables grow with the steps of an epoch.
  const MemoryEstimate e3 = estimate_memory(s, 32, 1, 1000, 100);
  CHECK(e3.scalar_bytes - e.scalar_bytes == 99 * (static_cast<std::int64_t>(sizeof(OptStep)) + 4 + 32 * 4));
}

TEST_CASE("memory planner: whole swarm when it fits, chunks when not") {
  MemoryEstimate e;
  e.per_member = 1 << 20;  // 1 MiB
  e.data_bytes = 10 << 20;
  e.reserve_bytes = 64 << 20;
  // 1 GiB free, 90% usable: (921.6 - 74) MiB -> 847 members.
  ChunkPlan whole = plan_chunks(e, 128, 1ull << 30);
  CHECK(whole.chunk == 128);
  CHECK(whole.chunks == 1);
  CHECK(whole.note.empty());
  CHECK(whole.bytes == e.total(128));
  ChunkPlan split = plan_chunks(e, 2000, 1ull << 30);
  CHECK(split.chunk == 847);
  CHECK(split.chunks == 3);
  CHECK_HAS(split.note, "3 chunks of up to 847 members");
  CHECK(split.bytes <= static_cast<std::int64_t>(0.9 * (1ull << 30)));
  // All of the memory usable: 950 members.
  CHECK(plan_chunks(e, 2000, 1ull << 30, 1.0).chunk == 950);
  // Exactly one member fits.
  CHECK(plan_chunks(e, 5, static_cast<std::uint64_t>(75) << 20, 1.0).chunk == 1);
}

TEST_CASE("memory planner: one member too big fails with the estimate and a suggestion") {
  const MemoryEstimate e = estimate_memory(shape_2_16_3(), 1 << 20, 1, 0);  // a huge batch
  std::string msg;
  try {
    plan_chunks(e, 4, 128ull << 20);
  } catch (const BackendError& err) {
    msg = err.what();
  }
  CHECK_HAS(msg, "the swarm does not fit the device: one member needs an estimated");
  CHECK_HAS(msg, format_bytes(e.per_member));
  CHECK_HAS(msg, "chunk size 0 fits");
  CHECK_HAS(msg, "reduce train.batch_size");
  // Data alone larger than the device: the hint is about the model or free memory.
  MemoryEstimate d = estimate_memory(shape_2_16_3(), 32, 1, 1ll << 40);
  try {
    plan_chunks(d, 4, 1ull << 30);
    FAIL("expected BackendError");
  } catch (const BackendError& err) {
    CHECK_HAS(std::string(err.what()), "1.0 TiB of data");
  }
  CHECK(format_bytes(512) == "512 B");
  CHECK(format_bytes(3 << 20) == "3.0 MiB");
}

TEST_CASE("device selection: auto without a GPU falls back to the CPU with a note") {
  DeviceChoice c = choose_device(DeviceKind::Auto, 0, true, {}, "no usable CUDA device (driver too old)");
  CHECK_FALSE(c.cuda);
  CHECK(c.note == "device: auto -> cpu (no usable CUDA device (driver too old))");
  c = choose_device(DeviceKind::Auto, 0, false, {gpu(0, "H100")});
  CHECK_FALSE(c.cuda);
  CHECK_HAS(c.note, "this build has no CUDA backend");
  c = choose_device(DeviceKind::Auto, 0, true, {gpu(0, "H100")});
  CHECK(c.cuda);
  CHECK(c.index == 0);
  CHECK(c.note == "device: auto -> cuda:0 (H100)");
  c = choose_device(DeviceKind::Cpu, 0, true, {gpu(0, "H100")});
  CHECK_FALSE(c.cuda);
  CHECK(c.note.empty());
}

TEST_CASE("device selection: cuda and cuda:N need the build and the GPU") {
  CHECK_HAS(error_of_choice(DeviceKind::Cuda, 0, false, {}), "this turbanet build has no CUDA backend");
  CHECK_HAS(error_of_choice(DeviceKind::Cuda, 0, true, {}), "no usable CUDA device (driver too old)");
  CHECK_HAS(error_of_choice(DeviceKind::Cuda, 2, true, {gpu(0, "A"), gpu(1, "B")}),
            "cuda:2 was requested, but there are 2 GPUs (cuda:0..cuda:1)");
  CHECK_HAS(error_of_choice(DeviceKind::Cuda, 1, true, {gpu(0, "A")}), "there is 1 GPU (cuda:0)");
  const DeviceChoice c = choose_device(DeviceKind::Cuda, 1, true, {gpu(0, "A"), gpu(1, "B")});
  CHECK(c.cuda);
  CHECK(c.index == 1);
}

TEST_CASE("device selection: make_backend on this machine") {
  // auto always yields a working backend; cuda only where a GPU is present.
  std::string note;
  const auto be = make_backend({DeviceKind::Auto, 1}, &note);
  std::string why;
  const bool have_gpu = !list_gpus(&why).empty();
  if (have_gpu) {
    CHECK(be->name() == "cuda:0");
  } else {
    CHECK(be->name() == "cpu");
    CHECK_HAS(note, "device: auto -> cpu");
    CHECK_FALSE(why.empty());
    std::string err;
    try {
      make_backend({DeviceKind::Cuda, 1}, nullptr);
    } catch (const BackendError& e) {
      err = e.what();
    }
    CHECK_HAS(err, "device: cuda was requested");
  }
  CHECK(cuda_built() ==
#if defined(TURBANET_HAVE_CUDA)
        true
#else
        false
#endif
  );
}

TEST_CASE("cuda module: loaded on demand from beside the binary, with this build's entry points") {
  std::string why;
  const CudaModule* m = load_cuda_module(&why);
#if defined(TURBANET_HAVE_CUDA)
  // The build puts libturbanet_cuda.so beside the test binary, as beside `turbanet`.
  REQUIRE_MESSAGE(m != nullptr, why);
  CHECK(m->abi == kCudaModuleAbi);
  CHECK(load_cuda_module(nullptr) == m);  // loaded once
  // The module's own runtime listing agrees with list_gpus (which asks the driver first).
  std::string why_runtime, why_driver;
  const auto runtime = m->list_gpus(&why_runtime);
  const auto listed = list_gpus(&why_driver);
  CHECK(runtime.size() == listed.size());
  if (listed.empty()) {
    MESSAGE("no GPU: " << why_driver << " / runtime: " << why_runtime);
    CHECK_FALSE(why_driver.empty());
    std::string err;
    try {
      make_cuda_backend(0, false);
    } catch (const BackendError& e) {
      err = e.what();  // thrown inside the module, caught here
    }
    CHECK_HAS(err, "cuda:0 is not available");
  }
#else
  CHECK(m == nullptr);
  CHECK_HAS(why, "no CUDA backend");
#endif
}

TEST_CASE("devices command: listing and the no-GPU line") {
  CHECK(format_devices({}, "no usable CUDA device (x)") ==
        "no CUDA device: no usable CUDA device (x)\n(device: auto trains on the CPU)\n");
  const std::string s = format_devices({gpu(0, "NVIDIA H100 80GB HBM3")}, "");
  CHECK_HAS(s, "cuda:0  NVIDIA H100 80GB HBM3  compute capability 9.0  memory 80.0 GiB (79.0 GiB free)  132 SMs");
  CHECK(run_devices() == kExitOk);
}

TEST_CASE("device selection: a process without a named GPU takes its local rank's, mod the GPUs") {
  CHECK(pick_gpu_index(2, 5, 4) == 2);   // cuda:2 named
  CHECK(pick_gpu_index(-1, 0, 4) == 0);  // one process, or local rank 0
  CHECK(pick_gpu_index(-1, 3, 4) == 3);
  CHECK(pick_gpu_index(-1, 6, 4) == 2);  // more ranks than GPUs on the machine: they share
  CHECK(pick_gpu_index(-1, 3, 0) == 0);  // no GPU: the choice reports it
  CHECK(pick_gpu_index(-1, 1, 1) == 0);
}

TEST_CASE("config: device cuda:N") {
  using namespace tn::test;
  Config c = parse(with("device: cuda:1\n"));
  CHECK(c.device == DeviceKind::Cuda);
  CHECK(c.device_index == 1);
  CHECK_HAS(to_yaml(c), "device: cuda:1");
  CHECK(parse(to_yaml(c)).device_index == 1);
  c = parse(with("device: cuda\n"));
  CHECK(c.device_index == -1);  // none named: GPU 0, or a rank's by its local rank
  CHECK_HAS(to_yaml(c), "device: cuda\n");
  CHECK_HAS(error_of(with("device: cuda:x\n")), "expected cuda:N with N a GPU index");
  CHECK_HAS(error_of(with("device: gpu\n")), "allowed: auto, cpu, cuda");
}

TEST_CASE("config: device_precision fp32 (default) or tf32") {
  using namespace tn::test;
  CHECK(parse(with("")).device_precision == DevicePrecision::Fp32);
  const Config c = parse(with("device_precision: tf32\n"));
  CHECK(c.device_precision == DevicePrecision::Tf32);
  CHECK_HAS(to_yaml(c), "device_precision: tf32");
  CHECK(parse(to_yaml(c)).device_precision == DevicePrecision::Tf32);
  CHECK_HAS(error_of(with("device_precision: fp16\n")), "allowed: fp32, tf32");
}
