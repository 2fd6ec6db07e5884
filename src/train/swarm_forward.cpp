// Forward passes of a stored swarm over member blocks, one set of buffers per worker.
#include "train/swarm_forward.h"

#include <algorithm>
#include <memory>

#include "data/member_sets.h"
#include "model/model_ops.h"

namespace tn {
namespace {

struct Scratch {
  ModelBuffers buf;
  DeviceBuffer<float> out;  // [members, batch, O] transformed outputs
  Scratch(Backend& be, const ModelShape& shape, int members, int batch)
      : buf(be, shape, members, batch, 1),
        out(be, static_cast<std::size_t>(members) * batch * shape.outputs()) {}
};

// Members per block: the swarm spread evenly over the workers, at most 32 at once.
int predict_block(const Backend& be, int S) { return std::clamp((S + be.workers() - 1) / be.workers(), 1, 32); }

// One Scratch per worker for blocks of `block` members and `batch` rows.
std::vector<std::unique_ptr<Scratch>> worker_scratch(Backend& be, const ModelShape& shape, int block, int batch) {
  std::vector<std::unique_ptr<Scratch>> scratch;
  for (int w = 0; w < be.workers(); ++w) scratch.push_back(std::make_unique<Scratch>(be, shape, block, batch));
  return scratch;
}

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
  DeviceBuffer<float> P(be, layout.total), Xd(be, X.size()), Yd(be, N);
  be.to_device(P.p, params.data(), params.size() * sizeof(float));
  be.to_device(Xd.p, X.data(), X.size() * sizeof(float));
  const int bcap = std::clamp(batch, 1, N);
  const int block = predict_block(be, S);
  const std::vector<std::unique_ptr<Scratch>> scratch = worker_scratch(be, shape, block, bcap);
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

SwarmPredictions predict_parts(Backend& be, LossType loss, const std::vector<SwarmPart>& parts, int S, int O,
                               const std::vector<float>& X, int N, int batch) {
  SwarmPredictions all{S, N, O, {}, {}};
  const std::size_t per = static_cast<std::size_t>(N) * O;
  all.outputs.assign(static_cast<std::size_t>(S) * per, 0.0f);
  all.logits.assign(all.outputs.size(), 0.0f);
  for (const SwarmPart& a : parts) {
    const SwarmPredictions p = predict_swarm(be, *a.shape, loss, *a.params, static_cast<int>(a.members.size()), X, N, batch);
    for (std::size_t i = 0; i < a.members.size(); ++i) {
      const auto at = static_cast<std::ptrdiff_t>(static_cast<std::size_t>(a.members[i]) * per);
      std::copy_n(p.outputs.begin() + static_cast<std::ptrdiff_t>(i * per), per, all.outputs.begin() + at);
      if (!p.logits.empty()) std::copy_n(p.logits.begin() + static_cast<std::ptrdiff_t>(i * per), per, all.logits.begin() + at);
    }
  }
  return all;
}

GroupPredictions predict_per_group(Backend& be, const ModelShape& shape, LossType loss,
                                 const std::vector<float>& params, int S, const std::vector<float>& X,
                                 int N, int batch, const std::vector<int>& member) {
  GroupPredictions r;
  r.S = S;
  r.N = N;
  r.O = shape.outputs();
  r.member = member;
  const int F = shape.inputs(), O = r.O;
  r.outputs.assign(static_cast<std::size_t>(N) * O, 0.0f);
  r.logits.assign(r.outputs.size(), 0.0f);
  if (S == 0 || N == 0) return r;
  const MemberSets own = group_sample_sets(member, S);
  const std::uint32_t stride = std::max<std::uint32_t>(1, own.max_size());
  const ParamLayout layout(shape, S);
  DeviceBuffer<float> P(be, layout.total), Xd(be, X.size()), Yd(be, N);
  be.to_device(P.p, params.data(), params.size() * sizeof(float));
  be.to_device(Xd.p, X.data(), X.size() * sizeof(float));
  const int bcap = std::clamp(batch, 1, static_cast<int>(stride));
  const int block = predict_block(be, S);
  const std::vector<std::unique_ptr<Scratch>> scratch = worker_scratch(be, shape, block, bcap);
  std::vector<std::unique_ptr<DeviceBuffer<std::uint32_t>>> tables;
  for (int w = 0; w < be.workers(); ++w)
    tables.push_back(std::make_unique<DeviceBuffer<std::uint32_t>>(be, static_cast<std::size_t>(block) * stride));
  be.for_each_block(S, block, [&](int b0, int b1, int w) {
    Scratch& sc = *scratch[w];
    const int Sb = b1 - b0;
    std::vector<std::uint32_t> table(static_cast<std::size_t>(Sb) * stride);
    std::uint32_t rows = 0;
    for (int s = b0; s < b1; ++s) {
      member_epoch_rows(own, s, nullptr, stride, table.data() + static_cast<std::size_t>(s - b0) * stride);
      rows = std::max(rows, own.size(s));
    }
    be.to_device(tables[w]->p, table.data(), table.size() * sizeof(std::uint32_t));
    BatchSampler sampler;
    sampler.mode = SampleMode::Sets;
    sampler.n = static_cast<std::uint32_t>(N);
    sampler.table = tables[w]->p;
    sampler.table_member0 = static_cast<std::uint32_t>(b0);
    sampler.table_stride = stride;
    const BlockParams bp(P.p, layout, b0);
    const std::int64_t sZ = static_cast<std::int64_t>(bcap) * O;
    std::vector<float> out(static_cast<std::size_t>(bcap) * O), logit(out.size());
    for (std::uint32_t pos0 = 0; pos0 < rows; pos0 += bcap) {
      const int B = static_cast<int>(std::min<std::uint32_t>(bcap, rows - pos0));
      be.gather_batch(sampler, static_cast<std::uint32_t>(b0), Sb, pos0, B, Xd.p, F, Yd.p, 1, sc.buf.X,
                      static_cast<std::int64_t>(bcap) * F, sc.buf.Y, bcap);
      const float* Z = model_forward(be, shape, bp, sc.buf, Sb, B);
      be.output_transform(loss, Sb, B, O, Z, sZ, sc.out.p, sZ);
      for (int s = 0; s < Sb; ++s) {
        const std::uint32_t size = own.size(b0 + s);
        const int valid = size > pos0 ? static_cast<int>(std::min<std::uint32_t>(B, size - pos0)) : 0;
        if (valid == 0) continue;
        const std::size_t bytes = static_cast<std::size_t>(valid) * O * sizeof(float);
        be.to_host(logit.data(), Z + s * sZ, bytes);
        be.to_host(out.data(), sc.out.p + s * sZ, bytes);
        const std::uint32_t* at = own.rows.data() + own.offset[b0 + s] + pos0;
        for (int k = 0; k < valid; ++k) {
          const std::size_t dst = static_cast<std::size_t>(at[k]) * O, src = static_cast<std::size_t>(k) * O;
          std::copy_n(out.data() + src, O, r.outputs.data() + dst);
          std::copy_n(logit.data() + src, O, r.logits.data() + dst);
        }
      }
    }
  });
  return r;
}

}  // namespace tn
