// Halving's survivors continued packed (train/packed.h): the whole swarm's state handed to
// the survivors' swarm and merged back, with progress and checkpoints of the whole swarm.
#include "train/packed.h"

#include <spdlog/spdlog.h>

#include "train/history.h"
#include "train/loop.h"
#include "train/survivors.h"

namespace tn::train_detail {

TrainOutput continue_packed(const Config& cfg, const PreparedData& data, const MemberSets& sets, Backend& be,
                            const ProgressFn& progress, const TrainControl& control, TrainOutput& out,
                            std::unique_ptr<Loop> loop, int done, double seconds, const PartialEpoch* partial,
                            const PassFn& pass) {
  const int S = cfg.swarm.size, E = out.epochs;
  resize_history(out, done);  // epochs after `done`: NaN, what a stopped member's history holds
  resize_history(out, E);
  loop->download_params(out.params);
  loop->download_state(out);
  const SplitData& split = data.test.n > 0 ? data.test : data.train;
  out.pred_split = split.name;
  out.pred_n = split.n;
  loop->member_outputs(split, out.pred_members);  // the stopped members' predictions are final now
  const int block = loop->block();
  loop.reset();
  out.train_seconds = seconds;
  const std::vector<int> members = training_members(out, S);
  spdlog::debug("halving: the {} members still training continue packed, in {} blocks of {} instead of {}",
                members.size(), (members.size() + block - 1) / block, block, (S + block - 1) / block);
  const Config sub = sub_swarm(cfg, members);  // the survivors, numbered from 0
  const MemberSets sub_sets =
      select_member_sets(sets, members, cfg.swarm.first_member, cfg.seed, static_cast<std::uint32_t>(data.train.n));
  const TrainOutput from = survivors_state(out, members, done, partial);
  TrainControl c;
  c.resume = &from;
  c.checkpoint_every = control.checkpoint_every;
  c.stop = control.stop;
  c.member_epochs = control.member_epochs;
  if (control.checkpoint) c.checkpoint = [&](const TrainOutput& t) { control.checkpoint(merge_survivors(out, t, members)); };
  // Progress of the whole swarm: the members that diverged before count on, and its clock runs on.
  int diverged_before = 0;
  for (int s = 0; s < S; ++s) diverged_before += out.diverged_epoch[s] > 0;
  ProgressFn report;
  if (progress)
    report = [&](const EpochStats& st) {
      EpochStats whole = st;
      for (int& k : whole.newly_diverged) k = cfg.swarm.first_member + members[static_cast<std::size_t>(k)];
      for (MemberEpoch& m : whole.members) m.member = cfg.swarm.first_member + members[static_cast<std::size_t>(m.member)];
      whole.diverged += diverged_before;
      whole.seconds += seconds;
      whole.early_stopping = true;
      progress(whole);
    };
  TrainOutput r = merge_survivors(out, pass(sub, data, sub_sets, be, report, c), members);
  leave_out_diverged(r, cfg.swarm.first_member);
  return r;
}

}  // namespace tn::train_detail
