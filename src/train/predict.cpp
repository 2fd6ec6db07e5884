// Forward passes of a stored swarm over member blocks, one set of buffers per worker.
#include "train/predict.h"

#include <algorithm>
#include <memory>

#include "model/model_ops.h"

namespace tn {
namespace {

// A device array released when leaving scope.
struct DeviceFloats {
  Backend& be;
  float* p;
  DeviceFloats(Backend& b, std::size_t n) : be(b), p(b.alloc<float>(std::max<std::size_t>(n, 1))) {}
  ~DeviceFloats() { be.release(p); }
  DeviceFloats(const DeviceFloats&) = delete;
  DeviceFloats& operator=(const DeviceFloats&) = delete;
};

struct Scratch {
  ModelBuffers buf;
  DeviceFloats out;  // [members, batch, O] transformed outputs
  Scratch(Backend& be, const ModelShape& shape, int members, int batch)
      : buf(be, shape, members, batch, 1),
        out(be, static_cast<std::size_t>(members) * batch * shape.outputs()) {}
};

}  // namespace

SwarmPredictions predict_swarm(Backend& be, const ModelShape& shape, LossType loss,
                               const std::vector<float>& params, int S,
                               const std::vector<float>& X, int N, int batch) {
  SwarmPredictions r;
  r.S = S;
  r.N = N;
  r.O = shape.outputs();
  const int F = shape.inputs(), O = r.O;
  r.outputs.assign(static_cast<std::size_t>(S) * N * O, 0.0f);
  r.logits.assign(r.outputs.size(), 0.0f);
  if (S == 0 || N == 0) return r;
  const ParamLayout layout(shape, S);
  DeviceFloats P(be, layout.total), Xd(be, X.size()), Yd(be, N);
  be.to_device(P.p, params.data(), params.size() * sizeof(float));
  be.to_device(Xd.p, X.data(), X.size() * sizeof(float));
  const int bcap = std::clamp(batch, 1, N);
  const int block = std::clamp((S + be.workers() - 1) / be.workers(), 1, 32);
  std::vector<std::unique_ptr<Scratch>> scratch;
  for (int w = 0; w < be.workers(); ++w) scratch.push_back(std::make_unique<Scratch>(be, shape, block, bcap));
  BatchSampler in_order;
  in_order.n = static_cast<std::uint32_t>(N);
  be.for_each_block(S, block, [&](int b0, int b1, int w) {
    Scratch& sc = *scratch[w];
    const int Sb = b1 - b0;
    const BlockParams bp(P.p, layout, b0);
    const std::int64_t sZ = static_cast<std::int64_t>(bcap) * O;
    for (int pos0 = 0; pos0 < N; pos0 += bcap) {
      const int B = std::min(bcap, N - pos0);
      be.gather_batch(in_order, 0, Sb, static_cast<std::uint32_t>(pos0), B, Xd.p, F, Yd.p, 1, sc.buf.X,
                      static_cast<std::int64_t>(bcap) * F, sc.buf.Y, bcap);
      const float* Z = model_forward(be, shape, bp, sc.buf, Sb, B);
      be.output_transform(loss, Sb, B, O, Z, sZ, sc.out.p, sZ);
      for (int s = 0; s < Sb; ++s) {
        const std::size_t at = (static_cast<std::size_t>(b0 + s) * N + pos0) * O;
        const std::size_t bytes = static_cast<std::size_t>(B) * O * sizeof(float);
        be.to_host(&r.logits[at], Z + s * sZ, bytes);
        be.to_host(&r.outputs[at], sc.out.p + s * sZ, bytes);
      }
    }
  });
  return r;
}

}  // namespace tn
