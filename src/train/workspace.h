// Device-side state of a training run: the data splits, swarm arrays in ParamLayout order,
// and each worker's scratch (activations for a block plus per-member scalars). Internal to
// the trainer.
#pragma once
#include <cstdint>
#include <vector>

#include "backend/backend.h"
#include "data/prepare.h"
#include "model/model_ops.h"

namespace tn::train_detail {

// Device copies of one split; a backend whose memory is host memory reads the split in
// place (the training data exists once in the process).
struct DeviceSplit {
  Backend& be;
  const float* X = nullptr;
  const float* Y = nullptr;
  int n = 0;
  bool owned = false;
  DeviceSplit(Backend& b, const SplitData& s, int F, int T) : be(b), n(s.n) {
    if (n == 0) return;
    if (be.host_memory()) {
      X = s.X.data();
      Y = s.y.data();
      return;
    }
    float* x = be.alloc<float>(s.X.size());
    float* y = be.alloc<float>(s.y.size());
    be.to_device(x, s.X.data(), s.X.size() * sizeof(float));
    be.to_device(y, s.y.data(), s.y.size() * sizeof(float));
    X = x;
    Y = y;
    owned = true;
  }
  ~DeviceSplit() {
    if (!owned) return;
    be.release(const_cast<float*>(X));
    be.release(const_cast<float*>(Y));
  }
  DeviceSplit(const DeviceSplit&) = delete;
  DeviceSplit& operator=(const DeviceSplit&) = delete;
};

// Scratch of one worker: activations for a block plus per-member scalars, and the per-step
// tables of an epoch. Everything that varies from one epoch to the next is written into
// these fixed buffers before the epoch runs, so the epoch's ops are the same every time
// (the backend may record and replay them).
struct Worker {
  Backend& be;
  ModelBuffers buf;
  double *loss, *correct, *vloss, *vcorrect, *norm2;  // [members] sums of the current epoch
  OptStep* h;              // [steps, members] optimizer scalars of each step of the epoch
  float* P;                // [members, Bcap, outputs] predictions
  int* rows;               // [steps, members] valid batch rows per member (sets mode)
  std::uint32_t* table = nullptr;  // [members, table_stride] epoch rows per member (sets mode)
  std::uint32_t* order = nullptr;  // [n] the epoch's shared sample order (when shuffling)
  std::uint32_t* epoch;            // [1] the epoch (dropout masks)
  std::uint32_t epoch_host = 0;
  std::vector<OptStep> h_host;
  std::vector<int> rows_host;
  std::vector<std::uint32_t> table_host;
  Worker(Backend& b, const ModelShape& shape, int members, int batch, int targets, long steps,
         std::size_t table_size, std::size_t order_size)
      : be(b), buf(b, shape, members, batch, targets), h_host(static_cast<std::size_t>(steps) * members),
        rows_host(static_cast<std::size_t>(steps) * members), table_host(table_size) {
    loss = be.alloc<double>(members);
    correct = be.alloc<double>(members);
    vloss = be.alloc<double>(members);
    vcorrect = be.alloc<double>(members);
    norm2 = be.alloc<double>(members);
    epoch = be.alloc<std::uint32_t>(1);
    h = be.alloc<OptStep>(h_host.size());
    P = be.alloc<float>(static_cast<std::size_t>(members) * batch * shape.outputs());
    rows = be.alloc<int>(rows_host.size());
    if (table_size) table = be.alloc<std::uint32_t>(table_size);
    if (order_size) order = be.alloc<std::uint32_t>(order_size);
  }
  ~Worker() {
    for (void* p : {static_cast<void*>(loss), static_cast<void*>(correct), static_cast<void*>(vloss),
                    static_cast<void*>(vcorrect), static_cast<void*>(norm2), static_cast<void*>(epoch), static_cast<void*>(h),
                    static_cast<void*>(P), static_cast<void*>(rows), static_cast<void*>(table),
                    static_cast<void*>(order)})
      if (p) be.release(p);
  }
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;
};

}  // namespace tn::train_detail
