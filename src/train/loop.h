// The device loop of one pass: a swarm's state on the backend and its epochs over member
// blocks (forward, loss, backward, clipping and the optimizer step through backend ops).
// Internal to train/.
#pragma once
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <memory>

#include "math/saturate.h"
#include "train/memory_plan.h"
#include "swarm/sampler.h"
#include "model/model_ops.h"
#include "model/step_kernel_choice.h"
#include "train/loss_weights.h"
#include "train/train_output.h"
#include "train/swarm_forward.h"
#include "train/schedule.h"
#include "train/workspace.h"

namespace tn::train_detail {

inline OptStep make_step(const OptimizerConfig& o, double lr, long t1) {
  OptStep h{};
  h.lr = static_cast<float>(lr);
  h.beta1 = static_cast<float>(o.beta1);
  h.beta2 = static_cast<float>(o.beta2);
  h.eps = static_cast<float>(o.eps);
  h.weight_decay = static_cast<float>(o.weight_decay);
  h.l1 = static_cast<float>(o.l1);
  h.momentum = static_cast<float>(o.momentum);
  h.alpha = static_cast<float>(o.alpha);
  h.nesterov = o.nesterov;
  h.bias_correction1 = static_cast<float>(1.0 - std::pow(o.beta1, static_cast<double>(t1)));
  h.bias_correction2 = static_cast<float>(1.0 - std::pow(o.beta2, static_cast<double>(t1)));
  return h;
}

constexpr int kMaxChunk = 256;  // epochs per run_epochs call
// Steps per recorded op sequence: an epoch of many steps is recorded (a CUDA graph) in
// segments of this many, so a graph stays small (one epoch of 360 000 steps as one graph
// did not instantiate) and a GPU run can stop between segments.
constexpr long kSegmentSteps = 256;
constexpr int kHistKinds = 4;   // train loss, train correct, val loss, val correct
constexpr std::int64_t kChunkBufferBytes = 64 << 20;

// Epochs one run_epochs call covers: at most kMaxChunk, and few enough that the chunk's
// sample orders ([epochs, n] indices, when shuffling) and per-member sums ([epochs,
// kHistKinds, S] doubles) take at most kChunkBufferBytes each. Results do not depend on it.
inline int epochs_per_call(int n, int S, bool shuffle) {
  std::int64_t e = kMaxChunk;
  if (shuffle) e = std::min<std::int64_t>(e, kChunkBufferBytes / (4 * static_cast<std::int64_t>(std::max(1, n))));
  e = std::min<std::int64_t>(e, kChunkBufferBytes / (kHistKinds * 8 * static_cast<std::int64_t>(std::max(1, S))));
  return static_cast<int>(std::clamp<std::int64_t>(e, 1, kMaxChunk));
}

// Why this run must take the separate ops rather than a fused step kernel, or "".
inline std::string ops_only_reason(const LossConfig& loss) {
  if (loss.weights) return "the fused kernels have no class weights or pos_weight";
  return "";
}

class Loop {
 public:
  // Starts from out.init_params, or from `resume`'s parameters and optimizer state (and the
  // position in its interrupted epoch). `stop` (may be null) is polled between steps when an
  // epoch is a chunk of its own and the backend runs steps one by one.
  Loop(const Config& cfg, const PreparedData& data, const MemberSets& sets, Backend& be, TrainOutput& out,
       const TrainOutput* resume, const std::function<bool()>* stop)
      : cfg_(cfg), be_(be), out_(out), sets_(sets), shape_(out.shape), layout_(out.layout),
        S_(cfg.swarm.size), F_(data.features), T_(data.targets), O_(shape_.outputs()),
        train_(be, data.train, F_, T_), val_(be, data.val, F_, T_), loss_(cfg.loss),
        loss_weights_(resolve_loss_weights(cfg.loss, data.train, O_)), lw_(be, loss_weights_.size()),
        P_(be, static_cast<std::size_t>(layout_.total)), G_(be, static_cast<std::size_t>(layout_.total)),
        S1_(be, static_cast<std::size_t>(layout_.total)), S2_(be, static_cast<std::size_t>(layout_.total)),
        B_(be, cfg.train.early_stopping.restore_best && cfg.train.early_stopping.enabled()
                   ? static_cast<std::size_t>(layout_.total) : 0),
        frozen_(be, static_cast<std::size_t>(cfg.swarm.size)), ystats_(be, 2 * sets.target_mean.size()),
        stopped_(static_cast<std::size_t>(cfg.swarm.size), 0),
        stop_(stop && *stop ? stop : nullptr), stopped_at_(static_cast<std::size_t>(cfg.swarm.size), -1) {
    n_ = static_cast<int>(sets.max_size());  // positions of an epoch
    bcap_ = std::min(cfg.train.batch_size, n_);
    out_.steps_per_epoch = (n_ + bcap_ - 1) / bcap_;
    for (int s = 0; s < S_; ++s) {
      const long spe = (static_cast<long>(sets.size(s)) + bcap_ - 1) / bcap_;
      member_spe_.push_back(spe);
      opt_.push_back(member_optimizer(cfg, cfg.swarm.first_member + s));
      sched_.push_back(make_schedule(cfg.schedule, opt_.back().lr, spe, cfg.train.epochs));
    }
    const std::size_t bytes = static_cast<std::size_t>(layout_.total) * sizeof(float);
    be_.to_device(P_.p, (resume ? resume->params : out_.init_params).data(), bytes);
    // Members that diverged before a resume stay frozen (math/optimizers.h frozen_member).
    std::vector<int> frozen(static_cast<std::size_t>(S_), 0);
    if (resume)
      for (int s = 0; s < S_ && s < static_cast<int>(resume->diverged_epoch.size()); ++s)
        frozen[s] = resume->diverged_epoch[s] > 0;
    be_.to_device(frozen_.p, frozen.data(), frozen.size() * sizeof(int));
    if (resume) {
      be_.to_device(S1_.p, resume->opt1.data(), bytes);
      be_.to_device(S2_.p, resume->opt2.data(), bytes);
      if (!resume->best_params.empty() && has_best()) be_.to_device(B_.p, resume->best_params.data(), bytes);
      for (int s = 0; s < S_; ++s) stopped_[s] = !resume->stopped_epoch.empty() && resume->stopped_epoch[s] > 0;
      if (resume->partial.present()) {
        // The interrupted epoch continues from each member's step, its sums from where they were.
        resume_epoch_ = resume->epochs;
        next_step_ = resume->partial.next_step;
        std::vector<double> sums(static_cast<std::size_t>(2) * S_, 0.0);
        std::copy(resume->partial.loss_sum.begin(), resume->partial.loss_sum.end(), sums.begin());
        std::copy(resume->partial.correct_sum.begin(), resume->partial.correct_sum.end(), sums.begin() + S_);
        init_sums_ = be_.alloc<double>(sums.size());
        be_.to_device(init_sums_, sums.data(), sums.size() * sizeof(double));
      }
    }
    if (!sets.target_mean.empty()) {  // per-member target statistics, [S, 2, T]: each member scales its own
      std::vector<float> stats;
      for (int s = 0; s < S_; ++s)
        for (const std::vector<float>* v : {&sets.target_mean, &sets.target_std})
          stats.insert(stats.end(), v->begin() + static_cast<std::ptrdiff_t>(s) * T_,
                       v->begin() + static_cast<std::ptrdiff_t>(s + 1) * T_);
      be_.to_device(ystats_.p, stats.data(), stats.size() * sizeof(float));
    }
    if (!loss_weights_.empty()) {
      be_.to_device(lw_.p, loss_weights_.data(), loss_weights_.size() * sizeof(float));
      loss_.weights = lw_.p;
      std::string list;
      for (float v : loss_weights_) list += (list.empty() ? "" : ", ") + std::to_string(v);
      spdlog::info("loss {}: [{}]", loss_.type == LossType::Bce ? "pos_weight" : "class weights", list);
    }
    const std::int64_t per_member = model_buffer_bytes_per_member(shape_, bcap_, T_);
    // One step kernel for the whole run; the separate-ops kernel works in the workers' buffers.
    StepKernelChoice choice = choose_step_kernel(be_, shape_, bcap_, ops_only_reason(loss_), [this](int w) {
      return OpsScratch{&workers_[static_cast<std::size_t>(w)]->buf, workers_[static_cast<std::size_t>(w)]->norm2};
    });
    kernel_ = std::move(choice.kernel);
    spdlog::debug("{}", choice.note);
    const int wants = kernel_->block_members();
    block_ = std::min(S_, wants > 0 ? wants : be_.block_members(S_, per_member));
    for (int b0 = 0; b0 < S_; b0 += block_)
      views_.push_back({BlockParams(P_.p, layout_, b0), BlockParams(G_.p, layout_, b0),
                        BlockParams(S1_.p, layout_, b0), BlockParams(S2_.p, layout_, b0)});
    table_stride_ = static_cast<std::uint32_t>(out_.steps_per_epoch * bcap_);
    const std::size_t table = sets.equal_sizes() ? 0 : static_cast<std::size_t>(block_) * table_stride_;
    max_chunk_ = epochs_per_call(n_, S_, cfg.train.shuffle);
    if (cfg.train.shuffle) {
      order_host_.resize(static_cast<std::size_t>(max_chunk_) * n_);
      order_ = be_.alloc<std::uint32_t>(order_host_.size());
    }
    for (int w = 0; w < be_.workers(); ++w)
      workers_.push_back(std::make_unique<Worker>(be_, shape_, block_, bcap_, T_, out_.steps_per_epoch, table,
                                                  order_ ? static_cast<std::size_t>(n_) : 0));
    hist_ = be_.alloc<double>(static_cast<std::size_t>(max_chunk_) * kHistKinds * S_);
    if (cfg.data.per_member == PerMember::GroupBy && val_.n > 0) {
      // One model per group: each member is validated on its own group's rows only.
      vgroups_ = group_rows(data.val.group, cfg.swarm.first_member, S_, bcap_);
      vtable_ = be_.alloc<std::uint32_t>(vgroups_.table.size());
      vrows_ = be_.alloc<int>(vgroups_.rows.size());
      be_.to_device(vtable_, vgroups_.table.data(), vgroups_.table.size() * sizeof(std::uint32_t));
      be_.to_device(vrows_, vgroups_.rows.data(), vgroups_.rows.size() * sizeof(int));
    }
    if (!cfg.swarm.members.empty()) {  // members not consecutive: dropout masks follow their global index
      const std::vector<std::uint32_t> global(cfg.swarm.members.begin(), cfg.swarm.members.end());
      members_ = be_.alloc<std::uint32_t>(global.size());
      be_.to_device(members_, global.data(), global.size() * sizeof(std::uint32_t));
    }
    sampler_.mode = sets.mode;
    sampler_.seed = cfg.seed;
    sampler_.n = static_cast<std::uint32_t>(data.train.n);
    sampler_.order = order_;
    sampler_.table_stride = table_stride_;
    out_.kernel = be_.describe() + "; " + std::to_string(block_) + " members per block; " + kernel_->describe();
  }
  ~Loop() {
    workers_.clear();
    if (order_) be_.release(order_);
    if (vtable_) be_.release(vtable_);
    if (vrows_) be_.release(vrows_);
    if (init_sums_) be_.release(init_sums_);
    if (members_) be_.release(members_);
    be_.release(hist_);
  }

  // Epochs a single run_epochs call may cover.
  int max_chunk() const { return max_chunk_; }

  // Trains epochs [e0, e1). Each block runs all of them before the next synchronization, so
  // its members stay in one core's cache and threads meet once per chunk, not per epoch.
  // The per-member sums of each epoch stay on the device until the chunk ends.
  void run_epochs(int e0, int e1) {
    // An epoch that is a chunk of its own may stop between steps (the CPU) or between
    // recorded segments (a backend that replays them).
    step_stop_ = stop_ && e1 == e0 + 1 && !be_.replays_recordings();
    segment_stop_ = stop_ && e1 == e0 + 1 && be_.replays_recordings();
    std::fill(stopped_at_.begin(), stopped_at_.end(), -1);
    if (order_) {
      // Each epoch's order is a pure function of (seed, epoch): drawn on all the backend's
      // workers (a W1 chunk of 256 epochs took ~0.4 ms on the main thread alone).
#pragma omp parallel for schedule(static) num_threads(std::max(1, be_.workers())) if ((e1 - e0) * n_ >= 4096)
      for (int e = e0; e < e1; ++e)
        epoch_order(cfg_.seed, static_cast<std::uint32_t>(e), static_cast<std::uint32_t>(n_),
                    order_host_.data() + static_cast<std::size_t>(e - e0) * n_);
      be_.to_device(order_, order_host_.data(), static_cast<std::size_t>(e1 - e0) * n_ * sizeof(std::uint32_t));
    }
    be_.for_each_block(S_, block_, [&](int b0, int b1, int w) {
      for (int e = e0; e < e1; ++e) epoch_block(e, e - e0, b0, b1, w);
    });
    hist_host_.resize(static_cast<std::size_t>(e1 - e0) * kHistKinds * S_);
    be_.to_host(hist_host_.data(), hist_, hist_host_.size() * sizeof(double));
    const double* h = hist_host_.data();
    record(out_.train_loss, out_.train_acc, h, h + S_, e0, e1, [&](int s) { return sets_.size(s); });
    if (val_.n > 0)
      record(out_.val_loss, out_.val_acc, h + 2 * S_, h + 3 * S_, e0, e1, [&](int s) {
        // A group without validation rows has no validation loss: 0/0 records NaN.
        return vtable_ ? vgroups_.count[s] : static_cast<std::uint32_t>(val_.n);
      });
  }

  // Every member's outputs on `split` (after the output transform: probabilities or values),
  // P [S, n, O].
  void member_outputs(const SplitData& split, std::vector<float>& P) {
    DeviceSplit d(be_, split, F_, T_);
    P.assign(static_cast<std::size_t>(S_) * split.n * O_, 0.0f);
    be_.for_each_block(S_, block_, [&](int b0, int b1, int w) {
      Worker& wk = *workers_[w];
      const BlockParams p(P_.p, layout_, b0);
      const std::int64_t sP = static_cast<std::int64_t>(bcap_) * O_;
      for_batches(d, b0, b1 - b0, wk, [&](int pos0, int B, const float* Z) {
        be_.output_transform(cfg_.loss.type, b1 - b0, B, O_, Z, sP, wk.P, sP);
        for (int s = 0; s < b1 - b0; ++s)
          be_.to_host(&P[(static_cast<std::size_t>(b0 + s) * split.n + pos0) * O_], wk.P + s * sP,
                      static_cast<std::size_t>(B) * O_ * sizeof(float));
      }, p);
    });
  }

  // After run_epochs(e, e + 1): whether `stop` ended epoch e between steps, and where each
  // member stands in it (members of blocks that finished it: after its last step).
  bool stopped_in_epoch() const {
    return std::any_of(stopped_at_.begin(), stopped_at_.end(), [](int k) { return k >= 0; });
  }
  PartialEpoch partial_epoch(int e) const {
    PartialEpoch r;
    for (int s = 0; s < S_; ++s) {
      int k = stopped_at_[s] < 0 ? static_cast<int>(out_.steps_per_epoch) : stopped_at_[s];
      if (e == resume_epoch_) k = std::max(k, next_step_[s]);  // stopped while still skipping
      r.next_step.push_back(k);
      r.loss_sum.push_back(hist_host_[s]);
      if (!out_.train_acc.empty()) r.correct_sum.push_back(hist_host_[S_ + s]);
    }
    return r;
  }

  void download_params(std::vector<float>& host) { download(host, P_.p); }
  // The optimizer state and (restore_best) the best epochs' parameters, as far as trained.
  void download_state(TrainOutput& t) {
    download(t.opt1, S1_.p);
    download(t.opt2, S2_.p);
    if (has_best()) download(t.best_params, B_.p);
  }
  bool has_best() const { return cfg_.train.early_stopping.enabled() && cfg_.train.early_stopping.restore_best; }
  // Member s takes no more steps (early stopping); its later history is NaN.
  void stop_member(int s) { stopped_[s] = 1; }
  // Copies member s's parameters to (save) or from (restore) its best epoch's copy.
  void save_best(int s) { copy_member(B_.p, P_.p, s); }
  void restore_best(int s) { copy_member(P_.p, B_.p, s); }
  // PBT's exploit: member dst takes member src's parameters and optimizer state, and trains
  // again if it had diverged (its frozen flag is cleared).
  void copy_member_state(int dst, int src) {
    copy_member_from(P_.p, P_.p, dst, src);
    copy_member_from(S1_.p, S1_.p, dst, src);
    copy_member_from(S2_.p, S2_.p, dst, src);
    const int zero = 0;
    be_.to_device(frozen_.p + dst, &zero, sizeof(int));
  }
  // PBT's explore: member s's optimizer setting `key` becomes v from the next step on.
  void set_member_value(int s, const std::string& key, double v) {
    *optimizer_field(opt_[s], key) = v;
    sched_[s] = make_schedule(cfg_.schedule, opt_[s].lr, member_spe_[s], cfg_.train.epochs);
  }
  // The learning rate of local member s's last step of epoch e (0-based), by its schedule.
  double epoch_lr(int s, int e) const {
    return opt_[s].lr * sched_[s].factor(static_cast<double>((e + 1L) * member_spe_[s] - 1));
  }
  int n_train() const { return n_; }  // epoch positions (the largest member set)
  int training() const {  // members not stopped early
    int n = 0;
    for (char c : stopped_) n += !c;
    return n;
  }
  int batch() const { return bcap_; }  // rows per batch (the buffers' capacity)
  int block() const { return block_; }  // members per block

 private:
  void download(std::vector<float>& host, const float* device) {
    host.resize(layout_.total);
    be_.to_host(host.data(), device, host.size() * sizeof(float));
  }
  void copy_member(float* dst, const float* src, int s) { copy_member_from(dst, src, s, s); }
  // Member `to`'s tensors in dst from member `from`'s in src.
  void copy_member_from(float* dst, const float* src, int to, int from) {
    if (dst == src && to == from) return;
    for (std::size_t t = 0; t < layout_.size.size(); ++t)
      be_.copy(dst + layout_.at(static_cast<int>(t), to), src + layout_.at(static_cast<int>(t), from),
               static_cast<std::size_t>(layout_.size[t]) * sizeof(float));
  }

  // Per-member target statistics of the block starting at member b0 ([Sb, 2, T]), or null.
  const float* ystats(int b0) const { return !sets_.target_mean.empty() ? ystats_.p + static_cast<std::size_t>(2 * b0) * T_ : nullptr; }

  // Runs the forward pass over every Bcap-row batch of split `d` (in order, same rows for
  // all members, each member's targets scaled by its statistics) and hands the outputs to
  // fn(pos0, B, Z).
  template <class Fn>
  void for_batches(const DeviceSplit& d, int b0, int Sb, Worker& wk, Fn&& fn, const BlockParams& p) {
    BatchSampler in_order;
    in_order.n = static_cast<std::uint32_t>(d.n);
    for (int pos0 = 0; pos0 < d.n; pos0 += bcap_) {
      const int B = std::min(bcap_, d.n - pos0);
      be_.gather_batch(in_order, 0, Sb, pos0, B, d.X, F_, d.Y, T_, wk.buf.X,
                       static_cast<std::int64_t>(bcap_) * F_, wk.buf.Y, static_cast<std::int64_t>(bcap_) * T_, ystats(b0));
      fn(pos0, B, model_forward(be_, shape_, p, wk.buf, Sb, B));
    }
  }

  // One epoch of members [b0, b1) on worker w: stages what varies between epochs (step
  // scalars, valid rows, sample order) in the worker's buffers, runs the epoch's ops through
  // run_recorded in segments of kSegmentSteps steps (identical every epoch, so a backend may
  // replay a recording), and copies the epoch's per-member sums to history slot `slot`.
  void epoch_block(int e, int slot, int b0, int b1, int w) {
    // A block whose members all stopped (early stopping, halving) takes no more time: its
    // history is NaN whatever its sums hold (record).
    if (std::all_of(stopped_.begin() + b0, stopped_.begin() + b1, [](char c) { return c != 0; })) return;
    const int Sb = b1 - b0;
    Worker& wk = *workers_[w];
    // Continuing an interrupted epoch: each member skips the steps it took before.
    const bool resuming = e == resume_epoch_;
    long steps = 0;
    for (int s = b0; s < b1; ++s) steps = std::max(steps, member_spe_[s]);
    // Members with as many steps per epoch and the same hyperparameters share the schedule
    // and step count: compute once.
    for (long step = 0; step < steps; ++step) {
      OptStep* h = wk.h_host.data() + step * Sb;
      for (int s = 0; s < Sb; ++s)
        h[s] = s > 0 && !resuming && member_spe_[b0 + s] == member_spe_[b0 + s - 1] &&
                       opt_[b0 + s] == opt_[b0 + s - 1] && stopped_[b0 + s] == stopped_[b0 + s - 1]
                   ? h[s - 1]
                   : member_step(b0 + s, e, step, resuming && step < next_step_[b0 + s]);
    }
    be_.to_device(wk.h, wk.h_host.data(), static_cast<std::size_t>(steps) * Sb * sizeof(OptStep));
    BatchSampler sampler = sampler_;
    if (order_) {
      be_.copy(wk.order, order_ + static_cast<std::size_t>(slot) * n_, static_cast<std::size_t>(n_) * sizeof(std::uint32_t));
      sampler.order = wk.order;
    }
    if (!sets_.equal_sizes()) {
      // Each member's own epoch order, laid out for the block (host order, host table).
      const std::uint32_t* order = order_ ? order_host_.data() + static_cast<std::size_t>(slot) * n_ : nullptr;
      for (int s = b0; s < b1; ++s)
        member_epoch_rows(sets_, s, order, table_stride_, wk.table_host.data() + static_cast<std::size_t>(s - b0) * table_stride_);
      be_.to_device(wk.table, wk.table_host.data(), static_cast<std::size_t>(Sb) * table_stride_ * sizeof(std::uint32_t));
      sampler.table = wk.table;
      sampler.table_member0 = static_cast<std::uint32_t>(cfg_.swarm.first_member + b0);
    }
    if (!sets_.equal_sizes() || resuming) {
      // Valid rows of each member at each step: 0 once its set is exhausted, and for the steps
      // a resumed member took before the interruption (no loss, no gradient, no update).
      for (long step = 0; step < steps; ++step)
        for (int s = 0; s < Sb; ++s) {
          const long left = static_cast<long>(sets_.equal_sizes() ? n_ : sets_.size(b0 + s)) - step * bcap_;
          const bool taken = resuming && step < next_step_[b0 + s];
          wk.rows_host[step * Sb + s] = taken ? 0 : static_cast<int>(std::clamp<long>(left, 0, bcap_));
        }
      be_.to_device(wk.rows, wk.rows_host.data(), static_cast<std::size_t>(steps) * Sb * sizeof(int));
    }
    wk.epoch_host = static_cast<std::uint32_t>(e);
    be_.to_device(wk.epoch, &wk.epoch_host, sizeof(std::uint32_t));
    if (resuming) {
      epoch_ops(b0, Sb, 0, steps, steps, sampler, wk, w, true);  // once: not recorded
    } else {
      const long segments = std::max(1L, (steps + kSegmentSteps - 1) / kSegmentSteps);
      for (long sg = 0; sg < segments && stopped_at_[b0] < 0; ++sg) {
        const long k0 = sg * kSegmentSteps, k1 = std::min(steps, k0 + kSegmentSteps);
        if (segment_stop_ && sg > 0 && (*stop_)()) {
          std::fill_n(stopped_at_.begin() + b0, Sb, static_cast<int>(k0));
          break;
        }
        const std::uint64_t key = static_cast<std::uint64_t>(b0) << 40 | static_cast<std::uint64_t>(sg) << 16 |
                                  static_cast<std::uint64_t>(w);
        be_.run_recorded(key, [&] { epoch_ops(b0, Sb, k0, k1, steps, sampler, wk, w, false); });
      }
    }
    double* h = hist_ + static_cast<std::size_t>(slot) * kHistKinds * S_ + b0;
    be_.copy(h, wk.loss, Sb * sizeof(double));
    be_.copy(h + S_, wk.correct, Sb * sizeof(double));
    if (val_.n > 0) {
      be_.copy(h + 2 * S_, wk.vloss, Sb * sizeof(double));
      be_.copy(h + 3 * S_, wk.vcorrect, Sb * sizeof(double));
    }
  }

  // The ops of steps [k0, k1) of an epoch of `steps` steps of a block: the sums start at step
  // 0 (from the interrupted epoch's when `resuming`, when every member also has its rows),
  // the validation loss follows the last step. Between steps, `stop` may end the epoch
  // (step_stop_): the block's members record where.
  void epoch_ops(int b0, int Sb, long k0, long k1, long steps, const BatchSampler& sampler, Worker& wk, int w,
                 bool resuming) {
    const BlockViews& v = views_[static_cast<std::size_t>(b0 / block_)];
    const BlockParams &p = v.p, &g = v.g, &s1 = v.s1, &s2 = v.s2;
    const std::int64_t sX = static_cast<std::int64_t>(bcap_) * F_, sY = static_cast<std::int64_t>(bcap_) * T_;
    const std::int64_t sZ = static_cast<std::int64_t>(bcap_) * O_;
    const auto clip = static_cast<float>(cfg_.optimizer.grad_clip);
    const auto member0 = static_cast<std::uint32_t>(cfg_.swarm.first_member + b0);
    if (k0 == 0 && resuming) {
      be_.copy(wk.loss, init_sums_ + b0, Sb * sizeof(double));
      be_.copy(wk.correct, init_sums_ + S_ + b0, Sb * sizeof(double));
    } else if (k0 == 0) {
      be_.fill_zero(wk.loss, Sb * sizeof(double));
      be_.fill_zero(wk.correct, Sb * sizeof(double));
    }
    for (long step = k0; step < k1; ++step) {
      if (step_stop_ && (*stop_)()) {
        std::fill_n(stopped_at_.begin() + b0, Sb, static_cast<int>(step));
        return;
      }
      const int pos0 = static_cast<int>(step * bcap_);
      const int B = std::min(bcap_, n_ - pos0);
      const int* rows = sets_.equal_sizes() && !resuming ? nullptr : wk.rows + step * Sb;
      const StepBatch batch{&shape_, &loss_, &sampler, member0, Sb, static_cast<std::uint32_t>(pos0), B,
                            train_.X, train_.Y, T_, &p, &g, wk.loss, wk.correct, rows, cfg_.seed, wk.epoch,
                            members_ ? members_ + b0 : nullptr, ystats(b0)};
      kernel_->step(batch, StepUpdate{cfg_.optimizer.type, &s1, &s2, wk.h + step * Sb, clip, frozen_.p + b0}, w);
    }
    if (k1 == steps && val_.n > 0) {
      be_.fill_zero(wk.vloss, Sb * sizeof(double));
      be_.fill_zero(wk.vcorrect, Sb * sizeof(double));
      if (vtable_) {
        BatchSampler own;
        own.mode = SampleMode::Sets;
        own.n = static_cast<std::uint32_t>(val_.n);
        own.table = vtable_;
        own.table_member0 = static_cast<std::uint32_t>(cfg_.swarm.first_member);
        own.table_stride = vgroups_.stride;
        for (int step = 0; step < vgroups_.steps; ++step) {
          be_.gather_batch(own, member0, Sb, static_cast<std::uint32_t>(step * bcap_), bcap_, val_.X, F_, val_.Y, T_,
                           wk.buf.X, sX, wk.buf.Y, sY, ystats(b0));
          const float* Zv = model_forward(be_, shape_, p, wk.buf, Sb, bcap_);
          be_.loss_forward(loss_, Sb, bcap_, O_, Zv, sZ, wk.buf.Y, sY, wk.vloss, wk.vcorrect,
                           vrows_ + static_cast<std::size_t>(step) * S_ + b0);
        }
      } else {
        for_batches(val_, b0, Sb, wk, [&](int, int B, const float* Zv) {
          be_.loss_forward(loss_, Sb, B, O_, Zv, sZ, wk.buf.Y, sY, wk.vloss, wk.vcorrect, nullptr);
        }, p);
      }
    }
  }

  // Optimizer scalars of local member s at step `step` of epoch e: its own step count and
  // schedule (members with fewer samples take fewer steps per epoch); none when `taken`
  // (the step was taken before an interruption).
  OptStep member_step(int s, int e, long step, bool taken) const {
    if (step >= member_spe_[s] || stopped_[s] || taken) {
      OptStep idle{};
      idle.skip = true;
      return idle;
    }
    const long t = static_cast<long>(e) * member_spe_[s] + step;
    return make_step(opt_[s], opt_[s].lr * sched_[s].factor(static_cast<double>(t)), t + 1);
  }

  // Per-member means over the samples seen, count(local member index), of epochs [e0, e1):
  // from the chunk's sums (epoch e's at l + (e - e0)·kHistKinds·S + s) into the [S, epochs]
  // history. In tiles of 16 members × 16 epochs: row by row, every history write would land
  // on its own page (W1: 4 ms of 60 on the main thread while the workers waited).
  template <class Count>
  void record(std::vector<float>& loss, std::vector<float>& acc, const double* l, const double* c, int e0, int e1,
              Count count) {
    constexpr int kTile = 16;
    const std::size_t pitch = static_cast<std::size_t>(kHistKinds) * S_, E = cfg_.train.epochs;
    for (int s0 = 0; s0 < S_; s0 += kTile) {
      for (int ea = e0; ea < e1; ea += kTile) {
        for (int s = s0; s < std::min(S_, s0 + kTile); ++s) {
          const double n = stopped_[s] ? std::numeric_limits<double>::quiet_NaN() : count(s);
          for (int e = ea; e < std::min(e1, ea + kTile); ++e) {
            const std::size_t at = static_cast<std::size_t>(s) * E + e, from = (e - e0) * pitch + s;
            loss[at] = static_cast<float>(l[from] / n);
            if (!acc.empty()) acc[at] = static_cast<float>(c[from] / n);
          }
        }
      }
    }
  }

  const Config& cfg_;
  Backend& be_;
  TrainOutput& out_;
  const MemberSets& sets_;
  const ModelShape& shape_;
  const ParamLayout& layout_;
  int S_, F_, T_, O_;
  DeviceSplit train_, val_;
  LossConfig loss_;                    // the config's loss with its weights on the device
  std::vector<float> loss_weights_;    // [O] resolved class weights or pos_weight, or empty
  DeviceBuffer<float> lw_;
  DeviceBuffer<float> P_, G_, S1_, S2_;  // swarm arrays in ParamLayout order
  DeviceBuffer<float> B_;                 // restore_best: each member's best epoch's parameters
  DeviceBuffer<int> frozen_;              // [S] diverged: frozen at the step its loss became non-finite
  DeviceBuffer<float> ystats_;            // [S, 2, T] per-member target statistics (MemberSets), or empty
  std::vector<char> stopped_;             // [S] member stopped early: its steps are skipped
  const std::function<bool()>* stop_;     // polled between steps when step_stop_
  bool step_stop_ = false;                // this run_epochs call may stop between steps
  bool segment_stop_ = false;             // ... between recorded segments of kSegmentSteps
  std::vector<int> stopped_at_;           // [S] step at which `stop` ended the epoch, -1: not
  int resume_epoch_ = -1;                 // the interrupted epoch a resume continues, else -1
  std::vector<int> next_step_;            // [S] its first step for each member
  double* init_sums_ = nullptr;           // [2, S] its loss and correct sums so far
  // Each block's tensors in P_, G_, S1_, S2_ (blocks start at multiples of block_), made once:
  // epoch_ops runs per block and epoch, and each view allocates.
  struct BlockViews {
    BlockParams p, g, s1, s2;
  };
  std::vector<BlockViews> views_;
  int n_ = 0, bcap_ = 0, block_ = 1, max_chunk_ = kMaxChunk;
  std::vector<std::unique_ptr<Worker>> workers_;
  std::unique_ptr<StepKernel> kernel_;  // runs every training step (model/step_kernel_choice.h)
  std::vector<long> member_spe_;   // steps per epoch of each member
  std::vector<OptimizerConfig> opt_;  // each member's optimizer settings (per-member values applied)
  std::vector<LrSchedule> sched_;     // each member's schedule
  std::uint32_t table_stride_ = 0;
  std::vector<std::uint32_t> order_host_;
  std::vector<double> hist_host_;  // host copy of hist_ for one chunk
  std::uint32_t* order_ = nullptr;
  double* hist_ = nullptr;  // [max_chunk, kHistKinds, S] per-member sums of each epoch of a chunk
  GroupRows vgroups_;                // group_by: each member's own validation rows
  std::uint32_t* vtable_ = nullptr;  // device copy of vgroups_.table (null: validate on the whole split)
  int* vrows_ = nullptr;             // device copy of vgroups_.rows
  std::uint32_t* members_ = nullptr;  // device [S]: cfg.swarm.members (dropout masks), or null
  BatchSampler sampler_;
};

}  // namespace tn::train_detail
