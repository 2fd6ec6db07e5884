// Activation buffers of a swarm model: one layout, shared by the allocation and the byte count.
#include "model/model_buffers.h"

#include <utility>

#include "math/saturate.h"

namespace tn {
namespace {

// Floats per member of each buffer, in allocation order (shared by the allocation and the
// byte count so the two cannot drift apart).
template <class Take>
void layout_buffers(const ModelShape& shape, int batch, int targets, Take&& take) {
  // Saturating products (math/saturate.h): the memory planner asks for absurd shapes too.
  const std::int64_t Bc = batch;
  take(sat_mul(Bc, shape.inputs()));
  take(sat_mul(Bc, targets));
  for (const auto& l : shape.layers) {
    take(sat_mul(Bc, l.out));
    if (l.act != Activation::Identity) take(sat_mul(Bc, l.out));
    if (l.dropout > 0) take(sat_mul(Bc, l.out));
  }
  take(sat_mul(Bc, shape.max_width()));
  take(sat_mul(Bc, shape.max_width()));
  const std::int64_t T = shape.seq_len;
  for (std::size_t r = 0; r < shape.recurrent.size(); ++r) {
    const RecurrentLayer& l = shape.recurrent[r];
    const std::int64_t G = sat_mul(T, Bc, l.gates(), l.units), Hn = sat_mul(T, Bc, l.units);
    const bool lstm = l.cell == CellType::Lstm;
    if (r == 0) take(sat_mul(T, Bc, l.in));
    take(G);               // G
    take(lstm ? 0 : G);    // Gh
    take(Hn);              // Hs
    take(lstm ? Hn : 0);   // C
    take(G);               // dG
    take(lstm ? 0 : G);    // dGh
    take(Hn);              // dHs
    take(lstm ? sat_mul(Bc, l.units) : 0);  // dc
    take(sat_mul(l.gates(), l.units, l.units));  // WhT
  }
}

}  // namespace

std::int64_t model_buffer_bytes_per_member(const ModelShape& shape, int batch, int targets) {
  std::int64_t floats = 0;
  layout_buffers(shape, batch, targets, [&](std::int64_t n) { floats = sat_add(floats, n); });
  return sat_mul(floats, static_cast<std::int64_t>(sizeof(float)));
}

ModelBuffers::ModelBuffers(Backend& be, const ModelShape& shape, int members_, int batch_, int targets)
    : members(members_), batch(batch_), be_(be) {
  std::vector<std::pair<float*, std::int64_t>> got;
  layout_buffers(shape, batch, targets, [&](std::int64_t per_member) {
    float* p = nullptr;
    if (per_member > 0) {
      const std::size_t n = static_cast<std::size_t>(per_member) * members;
      p = be_.alloc<float>(n);
      owned_.push_back(p);
      bytes += static_cast<std::int64_t>(n * sizeof(float));
    }
    got.emplace_back(p, per_member);
  });
  std::size_t i = 0;
  auto next = [&] { return got[i++].first; };
  X = next();
  Y = next();
  for (const auto& l : shape.layers) {
    Z.push_back(next());
    A.push_back(l.act == Activation::Identity ? Z.back() : next());
    D.push_back(l.dropout > 0 ? next() : A.back());
  }
  dA = next();
  dB = next();
  const std::int64_t T = shape.seq_len;
  for (std::size_t r = 0; r < shape.recurrent.size(); ++r) {
    const RecurrentLayer& l = shape.recurrent[r];
    RecurrentBuffers rb;
    if (r == 0) {
      rb.in = next();
      rb.s_in = T * batch * l.in;
    }
    rb.G = next();
    rb.Gh = next();
    rb.Hs = next();
    rb.C = next();
    rb.dG = next();
    rb.dGh = next();
    rb.dHs = next();
    rb.dc = next();
    rb.WhT = next();
    rb.sG = T * batch * l.gates() * l.units;
    rb.sH = T * batch * l.units;
    rec.push_back(rb);
  }
}

ModelBuffers::~ModelBuffers() {
  for (void* p : owned_) be_.release(p);
}

}  // namespace tn
