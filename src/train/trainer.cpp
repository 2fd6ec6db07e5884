// The training loop: epochs over member blocks, each block running forward, loss, backward,
// clipping and the optimizer step through backend ops.
#include "train/trainer.h"

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
#include "model/step_kernel.h"
#include "train/early_stop.h"
#include "train/search.h"
#include "train/architectures.h"
#include "train/survivors.h"
#include "train/loss_weights.h"
#include "train/predict.h"
#include "train/schedule.h"
#include "train/workspace.h"

namespace tn {
namespace {
using namespace train_detail;

OptStep make_step(const OptimizerConfig& o, double lr, long t1) {
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
int epochs_per_call(int n, int S, bool shuffle) {
  std::int64_t e = kMaxChunk;
  if (shuffle) e = std::min<std::int64_t>(e, kChunkBufferBytes / (4 * static_cast<std::int64_t>(std::max(1, n))));
  e = std::min<std::int64_t>(e, kChunkBufferBytes / (kHistKinds * 8 * static_cast<std::int64_t>(std::max(1, S))));
  return static_cast<int>(std::clamp<std::int64_t>(e, 1, kMaxChunk));
}

// Why this run must take the separate ops rather than a fused step kernel, or "".
std::string ops_only_reason(const LossConfig& loss) {
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
        frozen_(be, static_cast<std::size_t>(cfg.swarm.size)), stopped_(static_cast<std::size_t>(cfg.swarm.size), 0),
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

  void predict(const SplitData& split, std::vector<float>& P) {
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

  // Runs the forward pass over every Bcap-row batch of split `d` (in order, same rows for
  // all members) and hands the outputs to fn(pos0, B, Z).
  template <class Fn>
  void for_batches(const DeviceSplit& d, int b0, int Sb, Worker& wk, Fn&& fn, const BlockParams& p) {
    BatchSampler in_order;
    in_order.n = static_cast<std::uint32_t>(d.n);
    for (int pos0 = 0; pos0 < d.n; pos0 += bcap_) {
      const int B = std::min(bcap_, d.n - pos0);
      be_.gather_batch(in_order, 0, Sb, pos0, B, d.X, F_, d.Y, T_, wk.buf.X,
                       static_cast<std::int64_t>(bcap_) * F_, wk.buf.Y, static_cast<std::int64_t>(bcap_) * T_);
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
                            members_ ? members_ + b0 : nullptr};
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
                           wk.buf.X, sX, wk.buf.Y, sY);
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
  std::unique_ptr<StepKernel> kernel_;  // runs every training step (model/step_kernel.h)
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

// Summaries of epochs [e0, e1) over the members with a finite loss; a member's first
// non-finite epoch marks it diverged. A diverged member is frozen from the step its loss
// became non-finite (math/optimizers.h frozen_member): its later epochs' history is NaN.
// Member by member, so each member's history is read contiguously (epoch by epoch, every read
// landed on its own page); per epoch the sums still run over the members in order.
// Members stopped early (out.stopped_epoch) are left out from the epoch after their stop.
std::vector<EpochStats> summarize(TrainOutput& out, int S, int e0, int e1, int first_member,
                                  std::vector<int>& diverged) {
  const int n = e1 - e0;
  constexpr double kInf = std::numeric_limits<double>::infinity();
  std::vector<EpochStats> st(static_cast<std::size_t>(n));
  std::vector<double> sum(n, 0.0), acc(n, 0.0), vsum(n, 0.0);
  std::vector<int> finite(n, 0), vcount(n, 0), stopped(n, 0);  // vcount: a group_by member may have no validation rows
  for (EpochStats& x : st) {
    x.loss_min = kInf;
    x.loss_max = -kInf;
  }
  for (int s = 0; s < S; ++s) {
    for (int e = e0; e < e1; ++e) {
      const int i = e - e0;
      const std::size_t at = static_cast<std::size_t>(s) * out.epochs + e;
      const double l = out.train_loss[at];
      if (!out.stopped_epoch.empty() && out.stopped_epoch[s] > 0 && e >= out.stopped_epoch[s]) {
        ++stopped[i];
        continue;
      }
      if (diverged[s] > 0 && e >= diverged[s]) {  // frozen since epoch diverged[s]
        for (std::vector<float>* h : {&out.train_loss, &out.train_acc, &out.val_loss, &out.val_acc})
          if (!h->empty()) (*h)[at] = std::numeric_limits<float>::quiet_NaN();
        continue;
      }
      if (!std::isfinite(l)) {
        if (diverged[s] < 0) {
          diverged[s] = e + 1;
          st[i].newly_diverged.push_back(first_member + s);
        }
        continue;
      }
      ++finite[i];
      sum[i] += l;
      st[i].loss_min = std::min(st[i].loss_min, l);
      st[i].loss_max = std::max(st[i].loss_max, l);
      if (!out.train_acc.empty()) acc[i] += out.train_acc[at];
      if (!out.val_loss.empty() && std::isfinite(out.val_loss[at])) {
        vsum[i] += out.val_loss[at];
        ++vcount[i];
      }
    }
  }
  for (int i = 0; i < n; ++i) {
    EpochStats& x = st[i];
    x.epoch = e0 + i + 1;
    x.epochs = out.epochs;
    x.diverged = S - finite[i] - stopped[i];
    x.training = S - x.diverged - stopped[i];
    if (finite[i] > 0) {
      x.loss_mean = sum[i] / finite[i];
      if (!out.train_acc.empty()) x.acc_mean = acc[i] / finite[i];
      if (!out.val_loss.empty() && vcount[i] > 0) x.val_loss_mean = vsum[i] / vcount[i];
    } else {
      x.loss_mean = x.loss_min = x.loss_max = std::numeric_limits<double>::quiet_NaN();
    }
  }
  return st;
}

// Diverged members are left out of every ensemble as members with non-finite parameters are:
// their predictions are NaN. Their parameters stay as frozen, those of the step before their
// loss became non-finite (math/optimizers.h frozen_member), for inspection.
void leave_out_diverged(TrainOutput& out, int first_member) {
  constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
  const std::size_t O = static_cast<std::size_t>(out.shape.outputs()), N = static_cast<std::size_t>(out.pred_n);
  for (std::size_t s = 0; s < out.diverged_epoch.size(); ++s) {
    if (out.diverged_epoch[s] <= 0) continue;
    if (!out.pred_members.empty()) std::fill_n(out.pred_members.begin() + static_cast<std::ptrdiff_t>(s * N * O), N * O, kNaN);
    for (std::size_t i = 0; i < out.pred_member.size() && !out.pred_own.empty(); ++i)
      if (out.pred_member[i] - first_member == static_cast<int>(s))
        std::fill_n(out.pred_own.begin() + static_cast<std::ptrdiff_t>(i * O), O, kNaN);
  }
}

// A [S, from] history as [S, to]: columns cut off, or added as NaN.
std::vector<float> history_columns(const std::vector<float>& h, int from, int to) {
  if (h.empty() || from == to) return h;
  const std::size_t S = h.size() / static_cast<std::size_t>(std::max(1, from));
  std::vector<float> r(S * to, std::numeric_limits<float>::quiet_NaN());
  const int keep = std::min(from, to);
  for (std::size_t s = 0; s < S; ++s)
    std::copy_n(h.begin() + static_cast<std::ptrdiff_t>(s * from), keep, r.begin() + static_cast<std::ptrdiff_t>(s * to));
  return r;
}

// Resizes t's [S, t.epochs] histories to [S, epochs].
void resize_history(TrainOutput& t, int epochs) {
  for (std::vector<float>* h : {&t.train_loss, &t.val_loss, &t.train_acc, &t.val_acc})
    *h = history_columns(*h, t.epochs, epochs);
  t.epochs = epochs;
}

// A copy of `out` (histories [S, out.epochs]) with its histories cut to [S, done], without
// copying the full histories first.
TrainOutput copy_until(TrainOutput& out, int done) {
  std::vector<float>* h[] = {&out.train_loss, &out.val_loss, &out.train_acc, &out.val_acc};
  std::vector<float> full[4];
  for (int i = 0; i < 4; ++i) full[i] = std::move(*h[i]);
  TrainOutput t = out;
  for (int i = 0; i < 4; ++i) *h[i] = std::move(full[i]);
  t.train_loss = history_columns(out.train_loss, out.epochs, done);
  t.val_loss = history_columns(out.val_loss, out.epochs, done);
  t.train_acc = history_columns(out.train_acc, out.epochs, done);
  t.val_acc = history_columns(out.val_acc, out.epochs, done);
  t.epochs = done;
  return t;
}

}  // namespace

// The [S, epochs] history of a ranking metric (ranking_metrics()).
const std::vector<float>& metric_history(const TrainOutput& out, const std::string& metric) {
  return metric == "val_loss"       ? out.val_loss
         : metric == "val_accuracy" ? out.val_acc
         : metric == "train_loss"   ? out.train_loss
                                    : out.train_acc;
}

namespace {

// After epoch e (0-based, the last one run): early stopping for every member still training
// (train/early_stop.h); returns how many stopped.
int early_stop_epoch(const Config& cfg, TrainOutput& out, Loop& loop, int e) {
  const EarlyStoppingConfig& es = cfg.train.early_stopping;
  const std::vector<float>& metric = metric_history(out, es.metric);
  int stopped = 0;
  for (int s = 0; s < cfg.swarm.size; ++s) {
    if (out.stopped_epoch[s] > 0) continue;
    const double v = metric[static_cast<std::size_t>(s) * out.epochs + e];
    switch (early_stop_update(es, v, e + 1, out.best_value[s], out.best_epoch[s], out.stopped_epoch[s])) {
      case EarlyStopEvent::Improved:
        if (loop.has_best()) loop.save_best(s);
        break;
      case EarlyStopEvent::Stopped:
        loop.stop_member(s);
        ++stopped;
        break;
      case EarlyStopEvent::None: break;
    }
  }
  return stopped;
}

}  // namespace

std::vector<double> epoch_metric(const TrainOutput& out, const std::string& metric, int S, int e) {
  const std::vector<float>& h = metric_history(out, metric);
  if (h.empty()) throw std::logic_error("search: no " + metric + " history (the config check lets none through)");
  std::vector<double> v(static_cast<std::size_t>(S));
  for (int s = 0; s < S; ++s) v[s] = h[static_cast<std::size_t>(s) * out.epochs + e];
  return v;
}

namespace {

// Whether a rung or round of `search` falls after epoch `done` (1-based count of epochs run).
bool search_after(const SearchConfig& sc, int done, int E) {
  if (done >= E) return false;
  if (sc.type == SearchConfig::Type::Halving) return std::count(sc.rungs.begin(), sc.rungs.end(), done) > 0;
  return sc.type == SearchConfig::Type::Pbt && done % sc.every_epochs == 0;
}

// The next epoch count after `done` at which search acts, or E.
int next_search_epoch(const SearchConfig& sc, int done, int E) {
  for (int e = done + 1; e < E; ++e)
    if (search_after(sc, e, E)) return e;
  return E;
}

// The search state at the start: nothing stopped; PBT's values of the perturbed keys.
void start_search(const Config& cfg, TrainOutput& out) {
  const SearchConfig& sc = cfg.search;
  const int S = cfg.swarm.size;
  if (sc.type == SearchConfig::Type::Halving) out.search_rung.assign(S, 0);
  for (const SearchConfig::Perturb& p : sc.perturb) {
    std::vector<double> row(static_cast<std::size_t>(S));
    for (int s = 0; s < S; ++s) {
      OptimizerConfig o = member_optimizer(cfg, cfg.swarm.first_member + s);
      row[s] = *optimizer_field(o, p.key);
    }
    out.search_values.push_back(std::move(row));
  }
}

// After epoch count `done` (a rung or round): halving stops the worse members still
// training; PBT's bottom members take over the state of top ones and explore. Returns how
// many members stopped.
int search_step(const Config& cfg, TrainOutput& out, Loop& loop, int done) {
  const SearchConfig& sc = cfg.search;
  const int S = cfg.swarm.size;
  const std::vector<double> value = epoch_metric(out, sc.metric, S, done - 1);
  out.search_epochs.push_back(done);
  const int round = static_cast<int>(out.search_epochs.size());
  if (sc.type == SearchConfig::Type::Halving) {
    std::vector<char> training(static_cast<std::size_t>(S), 0);
    for (int s : training_members(out, S)) training[s] = 1;
    const std::vector<int> cut = halving_cut(value, training, sc.maximize(), sc.keep);
    for (int s : cut) {
      out.stopped_epoch[s] = done;
      out.search_rung[s] = round;
      loop.stop_member(s);
    }
    spdlog::info("halving rung {} after epoch {}: {} members stopped, {} keep training", round, done, cut.size(),
                 std::count(training.begin(), training.end(), 1) - static_cast<long>(cut.size()));
    return static_cast<int>(cut.size());
  }
  std::vector<std::vector<double>> now;  // [K, S] the values in effect
  for (const std::vector<double>& h : out.search_values) now.emplace_back(h.end() - S, h.end());
  const PbtRound r = pbt_round(cfg, round, value, now);
  int exploited = 0;
  for (int s = 0; s < S; ++s) {
    if (r.source[s] == s) continue;
    ++exploited;
    loop.copy_member_state(s, r.source[s]);
    out.diverged_epoch[s] = -1;  // it trains again from the source's state
  }
  for (int s = 0; s < S; ++s) out.search_source.push_back(r.source[s]);
  for (std::size_t j = 0; j < sc.perturb.size(); ++j) {
    for (int s = 0; s < S; ++s)
      if (r.values[j][s] != now[j][s]) loop.set_member_value(s, sc.perturb[j].key, r.values[j][s]);
    out.search_values[j].insert(out.search_values[j].end(), r.values[j].begin(), r.values[j].end());
  }
  spdlog::info("pbt round {} after epoch {}: {} members took over better members' state", round, done, exploited);
  return 0;
}

// Resuming a search: the perturbed values in effect when the checkpoint was written.
void resume_search(const Config& cfg, const TrainOutput& out, Loop& loop) {
  const int S = cfg.swarm.size;
  for (std::size_t j = 0; j < cfg.search.perturb.size() && j < out.search_values.size(); ++j)
    for (int s = 0; s < S; ++s)
      loop.set_member_value(s, cfg.search.perturb[j].key, out.search_values[j][out.search_values[j].size() - S + s]);
}

// Starts `out` (histories [S, train.epochs]) from `from`: its initial parameters (when it has
// them), histories, divergence and early-stopping state as far as it trained.
void start_from(TrainOutput& out, const TrainOutput& from) {
  if (!from.init_params.empty()) out.init_params = from.init_params;  // e.g. a warm start's
  if (from.epochs > 0) {  // else (interrupted in the first epoch) nothing to keep: out's stay
    out.train_loss = history_columns(from.train_loss, from.epochs, out.epochs);
    out.val_loss = history_columns(from.val_loss, from.epochs, out.epochs);
    out.train_acc = history_columns(from.train_acc, from.epochs, out.epochs);
    out.val_acc = history_columns(from.val_acc, from.epochs, out.epochs);
  }
  out.diverged_epoch = from.diverged_epoch;
  if (!out.stopped_epoch.empty() && !from.stopped_epoch.empty()) {
    out.stopped_epoch = from.stopped_epoch;
    out.best_epoch = from.best_epoch;
    out.best_value = from.best_value;
  }
  if (!from.search_epochs.empty() || !from.search_values.empty()) {
    out.search_epochs = from.search_epochs;
    out.search_rung = from.search_rung;
    out.search_source = from.search_source;
    out.search_values = from.search_values;
  }
}

TrainOutput train_pass(const Config& cfg, const PreparedData& data, const MemberSets& sets, Backend& be,
                       const ProgressFn& progress, const TrainControl& control);

// Halving: after `done` epochs (`seconds` of training; `partial`, an epoch a resume is in the
// middle of, or null) the members still training continue as a swarm of their own
// (train/survivors.h), the others keeping what they had at their rung. `loop` is released
// first, so the survivors' swarm has its memory. Checkpoints and progress speak of the whole
// swarm; the result is the whole swarm's.
TrainOutput continue_packed(const Config& cfg, const PreparedData& data, const MemberSets& sets, Backend& be,
                            const ProgressFn& progress, const TrainControl& control, TrainOutput& out,
                            std::unique_ptr<Loop> loop, int done, double seconds, const PartialEpoch* partial) {
  const int S = cfg.swarm.size, E = out.epochs;
  resize_history(out, done);  // epochs after `done`: NaN, what a stopped member's history holds
  resize_history(out, E);
  loop->download_params(out.params);
  loop->download_state(out);
  const SplitData& split = data.test.n > 0 ? data.test : data.train;
  out.pred_split = split.name;
  out.pred_n = split.n;
  loop->predict(split, out.pred_members);  // the stopped members' predictions are final now
  const int block = loop->block();
  loop.reset();
  out.train_seconds = seconds;
  const std::vector<int> members = training_members(out, S);
  spdlog::debug("halving: the {} members still training continue packed, in {} blocks of {} instead of {}",
                members.size(), (members.size() + block - 1) / block, block, (S + block - 1) / block);
  const Config sub = survivors_config(cfg, members);
  const MemberSets sub_sets =
      select_member_sets(sets, members, cfg.swarm.first_member, cfg.seed, static_cast<std::uint32_t>(data.train.n));
  const TrainOutput from = survivors_state(out, members, done, partial);
  TrainControl c;
  c.resume = &from;
  c.checkpoint_every = control.checkpoint_every;
  c.stop = control.stop;
  if (control.checkpoint) c.checkpoint = [&](const TrainOutput& t) { control.checkpoint(merge_survivors(out, t, members)); };
  // Progress of the whole swarm: the members that diverged before count on, and its clock runs on.
  int diverged_before = 0;
  for (int s = 0; s < S; ++s) diverged_before += out.diverged_epoch[s] > 0;
  ProgressFn report;
  if (progress)
    report = [&](const EpochStats& st) {
      EpochStats whole = st;
      for (int& k : whole.newly_diverged) k = cfg.swarm.first_member + members[static_cast<std::size_t>(k)];
      whole.diverged += diverged_before;
      whole.seconds += seconds;
      whole.early_stopping = true;
      progress(whole);
    };
  TrainOutput r = merge_survivors(out, train_pass(sub, data, sub_sets, be, report, c), members);
  leave_out_diverged(r, cfg.swarm.first_member);
  return r;
}

// One pass over all members of `cfg` at once.
TrainOutput train_pass(const Config& cfg, const PreparedData& data, const MemberSets& sets, Backend& be,
                       const ProgressFn& progress, const TrainControl& control) {
  TrainOutput out;
  const int S = cfg.swarm.size, E = cfg.train.epochs;
  out.shape = make_model_shape(cfg, data);
  out.layout = ParamLayout(out.shape, S);
  std::vector<float> scales(S);
  for (int s = 0; s < S; ++s) scales[s] = static_cast<float>(member_init_scale(cfg, cfg.swarm.first_member + s));
  out.init_params = init_params(out.shape, out.layout, cfg.seed, cfg.swarm.first_member, scales);
  if (control.init && !control.resume) control.init(cfg.swarm.first_member, out.layout, out.init_params);
  out.epochs = E;
  const bool classification = is_classification(cfg.loss.type);
  const std::size_t hist = static_cast<std::size_t>(S) * E;
  out.train_loss.assign(hist, 0.0f);
  if (classification) out.train_acc.assign(hist, 0.0f);
  if (data.val.n > 0) {
    out.val_loss.assign(hist, 0.0f);
    if (classification) out.val_acc.assign(hist, 0.0f);
  }
  out.diverged_epoch.assign(S, -1);
  const EarlyStoppingConfig& es = cfg.train.early_stopping;
  if (es.enabled()) {
    out.stopped_epoch.assign(S, -1);
    out.best_epoch.assign(S, 0);
    out.best_value.assign(S, early_stop_initial_best(es));
  }
  const SearchConfig& sc = cfg.search;
  if (sc.type == SearchConfig::Type::Halving) out.stopped_epoch.assign(S, -1);
  start_search(cfg, out);
  const int first = control.resume ? std::min(control.resume->epochs, E) : 0;
  if (control.resume) start_from(out, *control.resume);

  auto owned = std::make_unique<Loop>(cfg, data, sets, be, out, control.resume, &control.stop);
  Loop& loop = *owned;
  if (control.resume) resume_search(cfg, out, loop);
  // A finished run extended (train.epochs grew): the rung or round its last epoch now has.
  if (control.resume && !control.resume->partial.present() && search_after(sc, first, E) &&
      (out.search_epochs.empty() || out.search_epochs.back() < first))
    search_step(cfg, out, loop, first);
  // Halving: continue the members still training packed when that takes fewer blocks.
  const auto pack = [&] { return survivors_pay(cfg, training_members(out, S), S, loop.block()); };
  // The state as far as trained (epochs [0, done)), for a checkpoint.
  const auto snapshot = [&](int done) {
    TrainOutput t = copy_until(out, done);
    loop.download_params(t.params);
    loop.download_state(t);
    return t;
  };
  // Members still training: not stopped early, not diverged.
  const auto active = [&] { return static_cast<int>(training_members(out, S).size()); };
  const auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  // Chunks of epochs sized to take about 50 ms, so progress stays live while threads
  // rarely synchronize. Results do not depend on the chunking. Early stopping decides after
  // every epoch, and checkpoints fall on multiples of checkpoint_every.
  const int every = control.checkpoint ? control.checkpoint_every : 0;
  int chunk = 1, e0 = first;
  const bool stops_members = es.enabled() || sc.type == SearchConfig::Type::Halving;
  bool all_stopped = stops_members && active() == 0;
  bool packed = control.resume && e0 < E && !all_stopped && pack();  // resumed after a rung
  while (!packed && e0 < E && !all_stopped && !out.interrupted) {
    int e1 = std::min({E, e0 + chunk, e0 + loop.max_chunk(), next_search_epoch(sc, e0, E)});
    if (es.enabled()) e1 = e0 + 1;
    if (every > 0) e1 = std::min(e1, (e0 / every + 1) * every);
    const double t0 = elapsed();
    loop.run_epochs(e0, e1);
    if (loop.stopped_in_epoch()) {  // interrupted between steps of epoch e0 (e1 == e0 + 1)
      out.partial = loop.partial_epoch(e0);
      out.interrupted = true;
      if (control.checkpoint) control.checkpoint(snapshot(e0));
      break;
    }
    const double t1 = elapsed(), dt = t1 - t0;
    std::vector<EpochStats> stats = summarize(out, S, e0, e1, cfg.swarm.first_member, out.diverged_epoch);
    if (es.enabled()) {
      stats.back().early_stopping = true;
      stats.back().newly_stopped = early_stop_epoch(cfg, out, loop, e1 - 1);
      stats.back().training = active();
      all_stopped = stats.back().training == 0;
    }
    if (search_after(sc, e1, E)) {
      stats.back().early_stopping = stops_members;
      stats.back().newly_stopped = search_step(cfg, out, loop, e1);
      stats.back().training = active();
      all_stopped = stats.back().training == 0;
      packed = !all_stopped && pack();
    }
    for (int e = e0; e < e1; ++e) {
      EpochStats& st = stats[e - e0];
      st.seconds = t0 + dt * (e + 1 - e0) / (e1 - e0);
      st.member_samples_per_s =
          st.seconds > 0 ? static_cast<double>(S) * loop.n_train() * (e + 1 - first) / st.seconds : 0;
      if (progress) progress(st);
    }
    const double per_epoch = dt / (e1 - e0);
    chunk = std::clamp(static_cast<int>(0.05 / std::max(per_epoch, 1e-9)), 1, std::max(1, 2 * chunk));
    e0 = e1;
    out.interrupted = e0 < E && !all_stopped && control.stop && control.stop();
    if (control.checkpoint && ((every > 0 && (e0 % every == 0 || e0 == E || all_stopped)) || out.interrupted))
      control.checkpoint(snapshot(e0));
  }
  if (packed && !out.interrupted)
    return continue_packed(cfg, data, sets, be, progress, control, out, std::move(owned), e0, elapsed(),
                           e0 == first && control.resume ? &control.resume->partial : nullptr);
  out.train_seconds = elapsed();
  resize_history(out, e0);
  if (loop.has_best())
    for (int s = 0; s < S; ++s)
      if (out.best_epoch[s] > 0) loop.restore_best(s);
  loop.download_params(out.params);
  const SplitData& split = data.test.n > 0 ? data.test : data.train;
  out.pred_split = split.name;
  out.pred_n = split.n;
  if (sets.names.empty()) {
    loop.predict(split, out.pred_members);
    leave_out_diverged(out, cfg.swarm.first_member);
    return out;
  }
  // group_by: the member of a sample is its group (members and groups are numbered alike);
  // this pass predicts the samples of its members [first_member, first_member + S).
  out.pred_member = split.group;
  std::vector<int> local(split.group);
  for (int& m : local) m -= cfg.swarm.first_member;
  // The trained parameters through the stored-swarm path (what `eval` runs), in the
  // trainer's batch size, so the two give the same bits.
  out.pred_own = predict_own_swarm(be, out.shape, cfg.loss.type, out.params, S, split.X, split.n, loop.batch(), local)
                     .outputs;
  leave_out_diverged(out, cfg.swarm.first_member);
  return out;
}


// Copies `part` (members [m0, m0 + part's S) of the swarm, histories as long as out's) into `out`.
void merge_part(TrainOutput& out, const TrainOutput& part, int m0, int Sp) {
  for (std::size_t t = 0; t < out.layout.size.size(); ++t) {
    const std::int64_t n = out.layout.size[t] * Sp;
    std::copy_n(part.params.begin() + part.layout.at(static_cast<int>(t), 0), n,
                out.params.begin() + out.layout.at(static_cast<int>(t), m0));
    std::copy_n(part.init_params.begin() + part.layout.at(static_cast<int>(t), 0), n,
                out.init_params.begin() + out.layout.at(static_cast<int>(t), m0));
  }
  const auto rows = [&](std::vector<float>& dst, const std::vector<float>& src, std::size_t per) {
    std::copy(src.begin(), src.end(), dst.begin() + static_cast<std::ptrdiff_t>(m0 * per));
  };
  const auto E = static_cast<std::size_t>(out.epochs);
  rows(out.train_loss, part.train_loss, E);
  rows(out.val_loss, part.val_loss, E);
  rows(out.train_acc, part.train_acc, E);
  rows(out.val_acc, part.val_acc, E);
  rows(out.pred_members, part.pred_members, static_cast<std::size_t>(out.pred_n) * out.shape.outputs());
  const auto O = static_cast<std::size_t>(out.shape.outputs());
  for (std::size_t i = 0; i < part.pred_member.size(); ++i)  // group_by: the part's members' samples
    if (part.pred_member[i] >= m0 && part.pred_member[i] < m0 + Sp)
      std::copy_n(part.pred_own.begin() + static_cast<std::ptrdiff_t>(i * O), O, out.pred_own.begin() + static_cast<std::ptrdiff_t>(i * O));
  std::copy(part.diverged_epoch.begin(), part.diverged_epoch.end(), out.diverged_epoch.begin() + m0);
  std::copy(part.stopped_epoch.begin(), part.stopped_epoch.end(), out.stopped_epoch.begin() + m0);
  std::copy(part.best_epoch.begin(), part.best_epoch.end(), out.best_epoch.begin() + m0);
  std::copy(part.best_value.begin(), part.best_value.end(), out.best_value.begin() + m0);
  out.train_seconds += part.train_seconds;
}

}  // namespace

int epoch_batch(const Config& cfg, const MemberSets& sets) {
  return std::min(cfg.train.batch_size, std::max(1, static_cast<int>(sets.max_size())));
}

long epoch_steps(const Config& cfg, const MemberSets& sets) {
  const long batch = epoch_batch(cfg, sets);
  return (static_cast<long>(sets.max_size()) + batch - 1) / batch;
}

TrainOutput train_swarm(const Config& cfg, const PreparedData& data, Backend& be,
                        const ProgressFn& progress) {
  return train_swarm(cfg, data, make_member_sets(cfg, data), be, progress);
}

TrainOutput train_swarm(const Config& cfg, const PreparedData& data, const MemberSets& sets, Backend& be,
                        const ProgressFn& progress) {
  return train_swarm_in_chunks(cfg, data, sets, be, progress, plan_training(cfg, data, sets, be).chunk);
}

namespace {

// Bytes the prepared data hold: every split's inputs, targets, rows, groups and times.
std::int64_t prepared_data_bytes(const PreparedData& data) {
  std::int64_t b = 0;
  for (const SplitData* sp : {&data.train, &data.val, &data.test}) {
    b = sat_add(b, sat_mul(static_cast<std::int64_t>(sp->X.size() + sp->y.size()), 4));
    b = sat_add(b, sat_mul(static_cast<std::int64_t>(sp->rows.size() + sp->group.size()), 4));
    b = sat_add(b, sat_mul(static_cast<std::int64_t>(sp->time.size()), static_cast<std::int64_t>(sizeof(std::string))));
  }
  return b;
}

}  // namespace

HostMemoryEstimate estimate_host_memory(const Config& cfg, const PreparedData& data, const MemberSets& sets,
                                        const Backend& be, bool with_run_file) {
  constexpr std::int64_t f32 = 4, f64 = 8;
  const ModelShape shape = make_model_shape(cfg, data);
  const std::int64_t S = cfg.swarm.size, E = cfg.train.epochs, O = shape.outputs();
  const std::int64_t P = shape.params_per_member();
  const int n = static_cast<int>(sets.max_size());
  const int batch = epoch_batch(cfg, sets);
  const std::int64_t steps = epoch_steps(cfg, sets);
  const bool classification = is_classification(cfg.loss.type), own = !sets.names.empty();
  const SplitData& pred = data.test.n > 0 ? data.test : data.train;
  const std::int64_t N = pred.n;
  const std::int64_t tables = (classification ? 2 : 1) * (data.val.n > 0 ? 2 : 1);  // [S, E] histories
  const std::int64_t K = classification ? std::max<std::int64_t>(2, O) : 0;
  const std::int64_t metrics = 16 + K * K;  // per member: metric values and confusion matrix
  const std::int64_t sets_bytes = sat_mul(static_cast<std::int64_t>(sets.rows.size() + sets.offset.size()), 4);
  // Per sample of the predicted split, the evaluation's results: the ensemble's prediction
  // [N, width], its class, entropy, mutual information and disagreement, and the labels.
  const std::int64_t width = classification ? K : O;
  const std::int64_t sample_results = sat_mul(N, 4 * width + 20);

  HostMemoryEstimate e;
  e.members = S;
  e.loaded_bytes = sat_add(prepared_data_bytes(data), sets_bytes);
  const std::vector<std::string> units = {"the layers' units"}, epochs = {"train.epochs"}, none = {};
  const std::vector<std::string> less_data = {"the data"}, smaller_pred = {"the split predicted at the end (data.split.test)"};
  const HostMemoryPart program{"program and libraries", kDeviceReserveBytes, 0, -1, none};
  const HostMemoryPart loaded{"data", e.loaded_bytes, 0, -1, less_data};
  const std::string hist_shape = "[" + std::to_string(S) + ", " + std::to_string(E) + "]";
  const HostMemoryPart history{"loss histories " + std::to_string(tables) + " x " + hist_shape, 0, sat_mul(E, tables, f32),
                               -1, epochs};
  // Per member predictions [S, N, O] of the split predicted at the end; group_by: each sample
  // only by its own member.
  const std::string pred_shape = "[" + std::to_string(S) + ", " + std::to_string(N) + ", " + std::to_string(O) + "]";
  const std::int64_t pred_member = own ? 0 : sat_mul(N, O, f32), pred_fixed = own ? sat_mul(N, O + 1, f32) : 0;
  const auto predictions = [&](int copies) {
    return HostMemoryPart{"predictions " + std::to_string(copies) + " x " + pred_shape, sat_mul(pred_fixed, copies),
                          sat_mul(pred_member, copies), -1, smaller_pred};
  };
  const auto params = [&](int arrays, const std::string& which) {
    return HostMemoryPart{"parameters" + which + " " + std::to_string(arrays) + " x [" + std::to_string(S) + ", " +
                              std::to_string(P) + "]", 0, sat_mul(P, arrays, f32), -1, units};
  };
  // Per member settings in the training loop: optimizer, schedule, steps, init scale, divergence.
  const std::int64_t settings =
      static_cast<std::int64_t>(sizeof(OptimizerConfig) + sizeof(LrSchedule) + sizeof(long) + 2 * sizeof(float));
  // Early stopping with restore_best keeps each member's best epoch's parameters.
  const int best = cfg.train.early_stopping.enabled() && cfg.train.early_stopping.restore_best ? 1 : 0;

  // Training: the initial and trained parameters, the parameters, gradients and two optimizer
  // states of the loop, each worker's buffers for a block, a chunk of epochs' sample orders and
  // per-member sums (twice: device and host copies), and the predictions at the end.
  {
    // Blocks as the loop makes them: by the backend's cache rule, or a step kernel's lanes
    // (at most 16 members, small models only).
    const int workers = std::max(1, be.workers());
    const std::int64_t activations = model_buffer_bytes_per_member(shape, batch, data.targets);
    const std::int64_t block = std::min<std::int64_t>(S, std::max(be.block_members(cfg.swarm.size, activations), 16));
    const std::int64_t bcap = batch;
    std::int64_t worker = sat_mul(block, sat_add(activations, 5 * f64));
    worker = sat_add(worker, sat_mul(steps, block, 2 * static_cast<std::int64_t>(sizeof(OptStep) + sizeof(int))));
    worker = sat_add(worker, sat_mul(block, bcap, O, f32));
    if (!sets.equal_sizes()) worker = sat_add(worker, sat_mul(block, steps, bcap, 2 * 4));
    if (cfg.train.shuffle) worker = sat_add(worker, sat_mul(n, 4));
    worker = sat_add(worker, 4 << 20);  // the step kernel's and the GEMMs' scratch
    HostMemoryPhase t{"training", {program, loaded}};
    t.parts.push_back(params(6 + best, ", gradients and optimizer state" + std::string(best ? ", best epochs'" : "")));
    t.parts.push_back(history);
    // A chunk of epochs' per-member sums and sample orders, each on the device and the host.
    // Fewer members may mean more epochs per chunk, so the bounds for any swarm are the caps.
    const std::int64_t slots = epochs_per_call(n, cfg.swarm.size, cfg.train.shuffle);
    t.parts.push_back({"per-epoch sums", 2 * kChunkBufferBytes, 2 * kHistKinds * f64, sat_mul(slots, S, 2 * kHistKinds * f64),
                       none});
    if (cfg.train.shuffle)
      t.parts.push_back({"epoch orders", sat_mul(epochs_per_call(n, 1, true), n, 2 * 4), 0, sat_mul(slots, n, 2 * 4),
                         less_data});
    t.parts.push_back({"buffers of " + std::to_string(workers) + " workers", sat_mul(workers, worker), 0, -1,
                       {"train.batch_size", "the layers' units", "--threads"}});
    t.parts.push_back({"member settings", 0, settings, -1, none});
    t.parts.push_back(predictions(1));
    e.phases.push_back(t);
  }
  if (cfg.train.checkpoint.every_epochs > 0) {
    // A checkpoint: the loop's arrays, the state copied to the host (parameters, optimizer
    // state, best epochs') and the checkpoint file's copies of those and of the initial
    // parameters; the histories, their copy and the file's.
    HostMemoryPhase c{"writing a checkpoint", {program, loaded}};
    c.parts.push_back(params(6 + best + 3 + best + 4 + best, ", optimizer state and their checkpoint copies"));
    c.parts.push_back({"loss histories and their checkpoint copies " + std::to_string(3 * tables) + " x " + hist_shape, 0,
                       sat_mul(history.per_member, 3), -1, epochs});
    e.phases.push_back(c);
  }
  if (!with_run_file) return e;
  // The final evaluation: the trained swarm's outputs, their copy evaluated, each member's
  // class probabilities, and every member's metrics.
  {
    HostMemoryPhase v{"evaluating", {program, loaded}};
    v.parts.push_back(params(2, ""));
    v.parts.push_back(history);
    v.parts.push_back(predictions(2));
    if (classification && !own) v.parts.push_back({"class probabilities", 0, sat_mul(N, std::max(O, K), f32), -1, smaller_pred});
    v.parts.push_back({"evaluation of each member", 0, sat_mul(metrics, 2 * f64), -1, none});
    v.parts.push_back({"ensemble results per sample", sample_results, 0, -1, smaller_pred});
    e.phases.push_back(v);
  }
  // The run file: the training's output and evaluation, and the file's own copies of the
  // parameters, histories and predictions, one of them compressed at a time.
  {
    HostMemoryPhase w{"writing the run file", {program, loaded}};
    w.parts.push_back(params(4, " and their run-file copies"));
    w.parts.push_back({"loss histories and their run-file copies " + std::to_string(2 * tables) + " x " + hist_shape, 0,
                       sat_mul(history.per_member, 2), -1, epochs});
    w.parts.push_back(predictions(5));
    w.parts.push_back({"evaluation of each member", 0, sat_mul(metrics, 3 * f64), -1, none});
    w.parts.push_back({"member sets and hyperparameters", sets_bytes,
                       sat_add(8, sat_mul(static_cast<std::int64_t>(cfg.member_values.size()), 2 * f64)), -1, none});
    w.parts.push_back({"the dataset being compressed", 0, std::max({sat_mul(P, f32), pred_member, history.per_member}), -1,
                       none});
    // The evaluation's per-sample results, the /eval and /predictions records made of them and
    // the run file's copies of those (ensemble prediction and statistics, uncertainty,
    // targets), and every split's source rows.
    const std::int64_t rows = static_cast<std::int64_t>(data.train.rows.size() + data.val.rows.size() + data.test.rows.size());
    w.parts.push_back({"ensemble results per sample and their run-file copies",
                       sat_add(sat_mul(N, 8 * width + 24 + 16 * O + 8 * data.targets), sat_mul(rows, 4)) + sample_results,
                       0, -1, smaller_pred});
    e.phases.push_back(w);
  }
  return e;
}

void check_generated_data_memory(const Config& cfg) {
  const SourceConfig& src = cfg.data.source;
  const SequenceConfig& q = cfg.data.sequence;
  std::int64_t bytes = 0;
  std::string key, what, reduce;
  if (src.type == "spirals" || src.type == "moons" || src.type == "sine") {
    // The generated table (features and target) and its prepared splits (the same values and
    // each sample's row), both alive while the splits are made.
    const std::int64_t values = src.type == "sine" ? 2 : 3;
    bytes = sat_mul(src.n, sat_add(values * 4 * 2, 4));
    key = "data.source.n";
    what = std::to_string(src.n) + " samples";
    reduce = "data.source.n";
  } else if (src.type == "random_walk") {
    // Per row: the close price, series and date of the table, and its normalized copy; per
    // sequence window: its steps' features, the target, row, series and date.
    const std::int64_t rows = sat_mul(src.walk.series, src.walk.length);
    bytes = sat_mul(rows, 4 + 4 + static_cast<std::int64_t>(sizeof(std::string)) + 8);
    what = std::to_string(src.walk.series) + " series x " + std::to_string(src.walk.length) + " steps";
    reduce = "data.source.series or data.source.length";  // completed below for sequence windows
    if (q.enabled()) {
      const std::int64_t span = static_cast<std::int64_t>(q.window) + q.horizon;
      const std::int64_t per_series = src.walk.length >= span ? (src.walk.length - span) / q.stride + 1 : 0;
      const std::int64_t windows = sat_mul(src.walk.series, per_series);
      const std::int64_t F = static_cast<std::int64_t>(q.features.size());
      bytes = sat_add(bytes, sat_mul(windows, sat_add(sat_mul(q.window, F, 4), 12 + static_cast<std::int64_t>(sizeof(std::string)))));
      what += " in " + std::to_string(windows) + " windows of " + std::to_string(q.window) + " steps";
      reduce = "data.source.series, data.source.length or data.sequence.window, or raise data.sequence.stride";
    }
    key = "data.source";
  } else {
    return;  // files: read first, then checked with the whole run (plan_training)
  }
  const std::uint64_t available = available_memory();
  const std::int64_t need = sat_add(bytes, kDeviceReserveBytes);
  if (available == 0 || static_cast<std::uint64_t>(need) <= available) return;
  throw ConfigError(key + ": the generated data (" + what + ") need an estimated " + format_bytes(need) + " (" +
                    std::to_string(need) + " bytes) of memory, but " +
                    format_bytes(static_cast<std::int64_t>(std::min<std::uint64_t>(available, kSaturated))) +
                    " is available (MemAvailable); reduce " + reduce);
}

ChunkPlan plan_training(const Config& cfg, const PreparedData& data, const MemberSets& sets, const Backend& be,
                        bool with_run_file) {
  if (per_member_architecture(cfg)) return plan_architectures(cfg, data, sets, be, with_run_file);
  const int S = cfg.swarm.size;
  const std::uint64_t budget = be.memory_budget();
  if (budget == 0) {
    // Host memory: the whole run at once, when it fits.
    if (be.host_memory()) {
      const HostMemoryEstimate est = estimate_host_memory(cfg, data, sets, be, with_run_file);
      const std::uint64_t available = available_memory();
      spdlog::debug("memory: an estimated {} while {} ({} bytes), {} available", format_bytes(est.peak()),
                    est.peak_phase().name, est.peak(),
                    format_bytes(static_cast<std::int64_t>(std::min<std::uint64_t>(available, kSaturated))));
      check_host_memory(est, available);
    }
    return ChunkPlan{S, 1, 0, ""};
  }
  const ModelShape shape = make_model_shape(cfg, data);
  const int n = static_cast<int>(sets.max_size()), batch = epoch_batch(cfg, sets);
  const long steps = epoch_steps(cfg, sets);
  // Device-resident data: the training and validation splits, the split predicted at the
  // end, and the shuffled epoch orders (at most 64 MiB, as the trainer allocates them).
  const SplitData& pred = data.test.n > 0 ? data.test : data.train;
  std::int64_t data_bytes = 0;
  for (const SplitData* sp : {&data.train, &data.val, &pred})
    data_bytes += static_cast<std::int64_t>(sp->X.size() + sp->y.size()) * static_cast<std::int64_t>(sizeof(float));
  if (cfg.train.shuffle) data_bytes += std::min<std::int64_t>(64 << 20, 256ll * n * 4) + 4ll * n;
  return plan_chunks(estimate_memory(shape, batch, data.targets, data_bytes, steps), S, budget);
}

TrainOutput train_swarm_in_chunks(const Config& cfg, const PreparedData& data, const MemberSets& sets, Backend& be,
                                  const ProgressFn& progress, int chunk, const TrainControl& control) {
  if (per_member_architecture(cfg)) return train_architectures(cfg, data, sets, be, progress, control);
  const int S = cfg.swarm.size;
  if (chunk <= 0 || chunk >= S) return train_pass(cfg, data, sets, be, progress, control);
  if (cfg.search.enabled())
    throw BackendError("search ranks every member against the others, so the whole swarm must fit on " + be.describe() +
                       " at once, and only " + std::to_string(chunk) + " of " + std::to_string(S) +
                       " members do; lower swarm.size or train on the CPU (device: cpu)");
  if (control.resume || control.checkpoint || control.stop)
    throw std::logic_error("train_swarm_in_chunks: checkpoints, resuming and stopping need the whole swarm in one pass");
  int epochs = 0;  // the most any chunk trained (early stopping may end a chunk sooner)
  TrainOutput out;
  const int chunks = (S + chunk - 1) / chunk;
  for (int c = 0; c < chunks; ++c) {
    const int m0 = c * chunk, m1 = std::min(S, m0 + chunk);
    Config part_cfg = cfg;
    part_cfg.swarm.first_member = cfg.swarm.first_member + m0;
    part_cfg.swarm.size = m1 - m0;
    if (!cfg.swarm.members.empty())
      part_cfg.swarm.members.assign(cfg.swarm.members.begin() + m0, cfg.swarm.members.begin() + m1);
    TrainOutput part = train_pass(part_cfg, data, slice_member_sets(sets, m0, m1), be,
                                  [&](const EpochStats& st) {
                                    if (!progress) return;
                                    EpochStats s = st;
                                    s.chunk = c + 1;
                                    s.chunks = chunks;
                                    progress(s);
                                  },
                                  TrainControl{nullptr, 0, {}, {}, control.init});
    epochs = std::max(epochs, part.epochs);
    resize_history(part, cfg.train.epochs);
    if (c == 0) {
      // Everything but the per-member arrays is the same for every chunk.
      out = part;
      out.layout = ParamLayout(out.shape, S);
      const auto grow = [&](std::vector<float>& v) { v.assign(v.size() / (m1 - m0) * S, 0.0f); };
      for (auto* v : {&out.params, &out.init_params, &out.train_loss, &out.val_loss, &out.train_acc,
                      &out.val_acc, &out.pred_members})
        grow(*v);
      std::fill(out.pred_own.begin(), out.pred_own.end(), 0.0f);
      out.diverged_epoch.assign(S, -1);
      if (!out.stopped_epoch.empty()) {
        out.stopped_epoch.assign(S, -1);
        out.best_epoch.assign(S, 0);
        out.best_value.assign(S, 0.0);
      }
      out.train_seconds = 0;
      out.kernel += "; trained in " + std::to_string(chunks) + " chunks of up to " + std::to_string(chunk) + " members";
    }
    merge_part(out, part, m0, m1 - m0);
  }
  resize_history(out, epochs);
  return out;
}

}  // namespace tn
