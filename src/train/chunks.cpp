// Chunked training: a swarm too large for the device trained in consecutive chunks of
// members on the same backend, the chunks' results merged into the whole swarm's.
#include "train/chunks.h"

#include <algorithm>
#include <numeric>

#include "train/history.h"
#include "train/member_state.h"
#include "train/pass.h"

namespace tn {
namespace {
using namespace train_detail;

// Copies `part` (members [m0, m0 + part's S) of the swarm, histories as long as out's) into `out`.
void merge_part(TrainOutput& out, const TrainOutput& part, int m0, int Sp) {
  for (std::size_t t = 0; t < out.layout.size.size(); ++t) {
    const std::int64_t n = out.layout.size[t] * Sp;
    std::copy_n(part.params.begin() + part.layout.at(static_cast<int>(t), 0), n,
                out.params.begin() + out.layout.at(static_cast<int>(t), m0));
    std::copy_n(part.init_params.begin() + part.layout.at(static_cast<int>(t), 0), n,
                out.init_params.begin() + out.layout.at(static_cast<int>(t), m0));
  }
  std::vector<int> members(static_cast<std::size_t>(Sp));
  std::iota(members.begin(), members.end(), m0);
  scatter_members(out, part, members);
  const auto O = static_cast<std::size_t>(out.shape.outputs());
  for (std::size_t i = 0; i < part.pred_member.size(); ++i)  // group_by: the part's members' samples
    if (part.pred_member[i] >= m0 && part.pred_member[i] < m0 + Sp)
      std::copy_n(part.pred_group.begin() + static_cast<std::ptrdiff_t>(i * O), O, out.pred_group.begin() + static_cast<std::ptrdiff_t>(i * O));
  out.train_seconds += part.train_seconds;
}

// A chunk's control: the warm start, and its members' epochs when the whole swarm's are asked for
// (each chunk reports its own members, global indices, all its epochs before the next chunk's).
TrainControl chunk_control(const TrainControl& control) {
  TrainControl c;
  c.init = control.init;
  c.member_epochs = control.member_epochs;
  return c;
}

}  // namespace

TrainOutput train_detail::train_in_chunks(const Config& cfg, const PreparedData& data, const MemberSets& sets,
                                          Backend& be, const ProgressFn& progress, int chunk,
                                          const TrainControl& control) {
  const int S = cfg.swarm.size;
  if (chunk <= 0 || chunk >= S) return train_pass(cfg, data, sets, be, progress, control);
  if (cfg.search.enabled())
    throw BackendError("search ranks every member against the others, so the whole swarm must fit on " + be.describe() +
                       " at once, and only " + std::to_string(chunk) + " of " + std::to_string(S) +
                       " members do; lower swarm.size or train on the CPU (device: cpu)");
  if (control.resume || control.checkpoint || control.stop)
    throw std::logic_error("train_in_chunks: checkpoints, resuming and stopping need the whole swarm in one pass");
  int epochs = 0;  // the most any chunk trained (early stopping may end a chunk sooner)
  TrainOutput out;
  const int chunks = (S + chunk - 1) / chunk;
  for (int c = 0; c < chunks; ++c) {
    const int m0 = c * chunk, m1 = std::min(S, m0 + chunk);
    TrainOutput part = train_pass(sub_swarm(cfg, m0, m1), data, slice_member_sets(sets, m0, m1), be,
                                  [&](const EpochStats& st) {
                                    if (!progress) return;
                                    EpochStats s = st;
                                    s.chunk = c + 1;
                                    s.chunks = chunks;
                                    progress(s);
                                  },
                                  chunk_control(control));
    epochs = std::max(epochs, part.epochs);
    resize_history(part, cfg.train.epochs);
    if (c == 0) {
      // Everything but the per-member arrays is the same for every chunk.
      out = part;
      out.layout = ParamLayout(out.shape, S);
      const auto grow = [&](std::vector<float>& v) { v.assign(v.size() / (m1 - m0) * S, 0.0f); };
      for (auto* v : {&out.params, &out.init_params, &out.pred_members}) grow(*v);
      std::fill(out.pred_group.begin(), out.pred_group.end(), 0.0f);
      size_member_state(out, S, out.epochs, {&part});
      out.train_seconds = 0;
      out.kernel += "; trained in " + std::to_string(chunks) + " chunks of up to " + std::to_string(chunk) + " members";
    }
    merge_part(out, part, m0, m1 - m0);
  }
  resize_history(out, epochs);
  return out;
}

}  // namespace tn
