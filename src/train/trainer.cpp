// The training loop: epochs over member blocks, each block running forward, loss, backward,
// clipping and the optimizer step through backend ops.
#include "train/trainer.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <memory>

#include "data/sampler.h"
#include "model/mlp_ops.h"
#include "train/schedule.h"
#include "train/workspace.h"

namespace tn {
namespace {
using namespace train_detail;

// Members per block: enough blocks to keep every worker busy, few enough members that a
// block's activations stay in a core's L2 cache (≈ 256 KiB budget).
int choose_block(int S, int workers, std::int64_t bytes_per_member) {
  const int by_cache = static_cast<int>(std::max<std::int64_t>(1, (256 << 10) / std::max<std::int64_t>(1, bytes_per_member)));
  const int by_balance = std::max(1, (S + 4 * workers - 1) / (4 * workers));
  return std::clamp(std::min(by_cache, by_balance), 1, 32);
}

OptStep make_step(const OptimizerConfig& o, double lr, long t1) {
  OptStep h{};
  h.lr = static_cast<float>(lr);
  h.beta1 = static_cast<float>(o.beta1);
  h.beta2 = static_cast<float>(o.beta2);
  h.eps = static_cast<float>(o.eps);
  h.weight_decay = static_cast<float>(o.weight_decay);
  h.momentum = static_cast<float>(o.momentum);
  h.alpha = static_cast<float>(o.alpha);
  h.nesterov = o.nesterov;
  h.bias_correction1 = static_cast<float>(1.0 - std::pow(o.beta1, static_cast<double>(t1)));
  h.bias_correction2 = static_cast<float>(1.0 - std::pow(o.beta2, static_cast<double>(t1)));
  return h;
}

class Loop {
 public:
  Loop(const Config& cfg, const PreparedData& data, const MemberSets& sets, Backend& be, TrainOutput& out)
      : cfg_(cfg), be_(be), out_(out), sets_(sets), shape_(out.shape), layout_(out.layout),
        S_(cfg.swarm.size), F_(data.features), T_(data.targets), O_(shape_.outputs()),
        train_(be, data.train, F_, T_), val_(be, data.val, F_, T_),
        P_(be, layout_.total), G_(be, layout_.total), S1_(be, layout_.total), S2_(be, layout_.total) {
    n_ = static_cast<int>(sets.max_size());  // positions of an epoch
    bcap_ = std::min(cfg.train.batch_size, n_);
    out_.steps_per_epoch = (n_ + bcap_ - 1) / bcap_;
    for (int s = 0; s < S_; ++s) {
      const long spe = (static_cast<long>(sets.size(s)) + bcap_ - 1) / bcap_;
      member_spe_.push_back(spe);
      sched_.push_back(make_schedule(cfg.schedule, cfg.optimizer.lr, spe, cfg.train.epochs));
    }
    be_.to_device(P_.p, out_.init_params.data(), out_.init_params.size() * sizeof(float));
    const std::int64_t per_member = mlp_buffer_bytes_per_member(shape_, bcap_, T_);
    fused_ = be_.fused_block(shape_, bcap_);
    block_ = fused_ > 0 ? fused_ : choose_block(S_, be_.workers(), per_member);
    table_stride_ = static_cast<std::uint32_t>(out_.steps_per_epoch * bcap_);
    const std::size_t table = sets.equal_sizes() ? 0 : static_cast<std::size_t>(block_) * table_stride_;
    for (int w = 0; w < be_.workers(); ++w)
      workers_.push_back(std::make_unique<Worker>(be_, shape_, block_, bcap_, T_, table));
    if (cfg.train.shuffle) {
      // Room for the orders of a chunk of epochs (at most 64 MiB of indices).
      max_chunk_ = static_cast<int>(std::clamp<std::int64_t>((64 << 20) / (4 * static_cast<std::int64_t>(n_)), 1, 256));
      order_host_.resize(static_cast<std::size_t>(max_chunk_) * n_);
      order_ = be_.alloc<std::uint32_t>(order_host_.size());
    }
    sampler_.mode = sets.mode;
    sampler_.seed = cfg.seed;
    sampler_.n = static_cast<std::uint32_t>(data.train.n);
    sampler_.order = order_;
    sampler_.table_stride = table_stride_;
    out_.kernel = be_.describe() + "; " + std::to_string(block_) + " members per block; " +
                  (fused_ > 0 ? "fused step, members in SIMD lanes"
                              : "per-member GEMMs (own kernels below 64^3 multiply-adds, OpenBLAS above)");
  }
  ~Loop() {
    if (order_) be_.release(order_);
  }

  // Epochs a single run_epochs call may cover.
  int max_chunk() const { return max_chunk_; }

  // Trains epochs [e0, e1). Each block runs all of them before the next synchronization, so
  // its members stay in one core's cache and threads meet once per chunk, not per epoch.
  void run_epochs(int e0, int e1) {
    if (order_) {
      for (int e = e0; e < e1; ++e)
        epoch_order(cfg_.seed, static_cast<std::uint32_t>(e), static_cast<std::uint32_t>(n_),
                    order_host_.data() + static_cast<std::size_t>(e - e0) * n_);
      be_.to_device(order_, order_host_.data(), static_cast<std::size_t>(e1 - e0) * n_ * sizeof(std::uint32_t));
    }
    be_.for_each_block(S_, block_, [&](int b0, int b1, int w) {
      for (int e = e0; e < e1; ++e) {
        BatchSampler sampler = sampler_;
        if (order_) sampler.order = order_ + static_cast<std::size_t>(e - e0) * n_;
        Worker& wk = *workers_[w];
        if (!sets_.equal_sizes()) {
          // Each member's own epoch order, laid out for the block (host order, host table).
          const std::uint32_t* order = order_ ? order_host_.data() + static_cast<std::size_t>(e - e0) * n_ : nullptr;
          for (int s = b0; s < b1; ++s)
            member_epoch_rows(sets_, s, order, table_stride_, wk.table_host.data() + static_cast<std::size_t>(s - b0) * table_stride_);
          be_.to_device(wk.table, wk.table_host.data(), static_cast<std::size_t>(b1 - b0) * table_stride_ * sizeof(std::uint32_t));
          sampler.table = wk.table;
          sampler.table_member0 = static_cast<std::uint32_t>(cfg_.swarm.first_member + b0);
        }
        epoch_block(e, b0, b1, sampler, wk);
      }
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

  void download_params(std::vector<float>& host) {
    host.resize(layout_.total);
    be_.to_host(host.data(), P_.p, host.size() * sizeof(float));
  }
  int n_train() const { return n_; }  // epoch positions (the largest member set)

 private:
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
      fn(pos0, B, mlp_forward(be_, shape_, p, wk.buf, Sb, B));
    }
  }

  void epoch_block(int e, int b0, int b1, const BatchSampler& sampler, Worker& wk) {
    const int Sb = b1 - b0;
    const BlockParams p(P_.p, layout_, b0), g(G_.p, layout_, b0), s1(S1_.p, layout_, b0), s2(S2_.p, layout_, b0);
    const std::int64_t sX = static_cast<std::int64_t>(bcap_) * F_, sY = static_cast<std::int64_t>(bcap_) * T_;
    const std::int64_t sZ = static_cast<std::int64_t>(bcap_) * O_;
    const auto clip = static_cast<float>(cfg_.optimizer.grad_clip);
    long steps = 0;
    for (int s = b0; s < b1; ++s) steps = std::max(steps, member_spe_[s]);
    wk.zero(wk.loss, Sb);
    wk.zero(wk.correct, Sb);
    for (long step = 0; step < steps; ++step) {
      const int pos0 = static_cast<int>(step * bcap_);
      const int B = std::min(bcap_, n_ - pos0);
      const int* rows = step_rows(wk, b0, Sb, pos0, B);
      const auto member0 = static_cast<std::uint32_t>(cfg_.swarm.first_member + b0);
      const FusedBatch fb{&shape_, &cfg_.loss, &sampler, member0, Sb, static_cast<std::uint32_t>(pos0), B,
                          train_.X, train_.Y, T_, &p, &g, wk.loss, wk.correct, rows};
      if (fused_ == 0 || !be_.fused_loss_grad(fb)) {
        be_.gather_batch(sampler, member0, Sb, static_cast<std::uint32_t>(pos0), B, train_.X, F_,
                         train_.Y, T_, wk.buf.X, sX, wk.buf.Y, sY);
        const float* Z = mlp_forward(be_, shape_, p, wk.buf, Sb, B);
        be_.loss_backward(cfg_.loss, Sb, B, O_, Z, sZ, wk.buf.Y, sY, wk.buf.dA, wk.loss, wk.correct, rows);
        mlp_backward(be_, shape_, p, g, wk.buf, Sb, B);
      }
      if (clip > 0.0f) {
        wk.zero(wk.norm2, Sb);
        for (int t = 0; t < shape_.tensors(); ++t) be_.sum_squares(Sb, g.stride(t), g.t[t], g.stride(t), wk.norm2);
      }
      // Members with as many steps per epoch share the schedule and step count: compute once.
      for (int s = 0; s < Sb; ++s)
        wk.h_host[s] = s > 0 && member_spe_[b0 + s] == member_spe_[b0 + s - 1] ? wk.h_host[s - 1]
                                                                               : member_step(b0 + s, e, step);
      be_.to_device(wk.h, wk.h_host.data(), Sb * sizeof(OptStep));
      for (int ti = 0; ti < shape_.tensors(); ++ti)
        be_.optimizer_update(cfg_.optimizer.type, Sb, p.stride(ti), p.t[ti], g.t[ti], s1.t[ti], s2.t[ti],
                             p.stride(ti), wk.h, clip, wk.norm2);
    }
    record(out_.train_loss, out_.train_acc, wk, b0, Sb, e, [&](int s) { return sets_.size(s); });
    if (val_.n > 0) {
      wk.zero(wk.loss, Sb);
      wk.zero(wk.correct, Sb);
      for_batches(val_, b0, Sb, wk, [&](int, int B, const float* Zv) {
        be_.loss_forward(cfg_.loss, Sb, B, O_, Zv, sZ, wk.buf.Y, sY, wk.loss, wk.correct, nullptr);
      }, p);
      record(out_.val_loss, out_.val_acc, wk, b0, Sb, e, [&](int) { return val_.n; });
    }
  }

  // Valid rows of each member in the batch at pos0 (null when every member has all B: equal
  // set sizes). Members whose set is exhausted get 0 rows and skip the step.
  const int* step_rows(Worker& wk, int b0, int Sb, int pos0, int B) {
    if (sets_.equal_sizes()) return nullptr;
    for (int s = 0; s < Sb; ++s)
      wk.rows_host[s] = std::clamp(static_cast<int>(sets_.size(b0 + s)) - pos0, 0, B);
    be_.to_device(wk.rows, wk.rows_host.data(), Sb * sizeof(int));
    return wk.rows;
  }

  // Optimizer scalars of local member s at step `step` of epoch e: its own step count and
  // schedule (members with fewer samples take fewer steps per epoch).
  OptStep member_step(int s, int e, long step) const {
    if (step >= member_spe_[s]) {
      OptStep idle{};
      idle.skip = true;
      return idle;
    }
    const long t = static_cast<long>(e) * member_spe_[s] + step;
    return make_step(cfg_.optimizer, cfg_.optimizer.lr * sched_[s].factor(static_cast<double>(t)), t + 1);
  }

  // Per-member means over the samples seen: count(local member index).
  template <class Count>
  void record(std::vector<float>& loss, std::vector<float>& acc, Worker& wk, int b0, int Sb, int e, Count count) {
    const std::vector<double> l = wk.fetch(wk.loss, Sb), c = wk.fetch(wk.correct, Sb);
    for (int s = 0; s < Sb; ++s) {
      const std::size_t at = static_cast<std::size_t>(b0 + s) * cfg_.train.epochs + e;
      const double n = count(b0 + s);
      loss[at] = static_cast<float>(l[s] / n);
      if (!acc.empty()) acc[at] = static_cast<float>(c[s] / n);
    }
  }

  const Config& cfg_;
  Backend& be_;
  TrainOutput& out_;
  const MemberSets& sets_;
  const MlpShape& shape_;
  const ParamLayout& layout_;
  int S_, F_, T_, O_;
  DeviceSplit train_, val_;
  DeviceArray P_, G_, S1_, S2_;
  int n_ = 0, bcap_ = 0, block_ = 1, max_chunk_ = 1 << 20, fused_ = 0;
  std::vector<std::unique_ptr<Worker>> workers_;
  std::vector<long> member_spe_;   // steps per epoch of each member
  std::vector<LrSchedule> sched_;  // each member's schedule
  std::uint32_t table_stride_ = 0;
  std::vector<std::uint32_t> order_host_;
  std::uint32_t* order_ = nullptr;
  BatchSampler sampler_;
};

EpochStats summarize(const TrainOutput& out, int S, int e, int first_member, std::vector<int>& diverged) {
  EpochStats st;
  st.epoch = e + 1;
  st.epochs = out.epochs;
  double sum = 0, acc = 0, vsum = 0;
  int finite = 0;
  st.loss_min = std::numeric_limits<double>::infinity();
  st.loss_max = -st.loss_min;
  for (int s = 0; s < S; ++s) {
    const std::size_t at = static_cast<std::size_t>(s) * out.epochs + e;
    const double l = out.train_loss[at];
    if (!std::isfinite(l)) {
      if (diverged[s] < 0) {
        diverged[s] = e + 1;
        st.newly_diverged.push_back(first_member + s);
      }
      continue;
    }
    ++finite;
    sum += l;
    st.loss_min = std::min(st.loss_min, l);
    st.loss_max = std::max(st.loss_max, l);
    if (!out.train_acc.empty()) acc += out.train_acc[at];
    if (!out.val_loss.empty()) vsum += out.val_loss[at];
  }
  st.diverged = S - finite;
  if (finite > 0) {
    st.loss_mean = sum / finite;
    if (!out.train_acc.empty()) st.acc_mean = acc / finite;
    if (!out.val_loss.empty()) st.val_loss_mean = vsum / finite;
  } else {
    st.loss_mean = st.loss_min = st.loss_max = std::numeric_limits<double>::quiet_NaN();
  }
  return st;
}

}  // namespace

TrainOutput train_swarm(const Config& cfg, const PreparedData& data, Backend& be,
                        const ProgressFn& progress) {
  return train_swarm(cfg, data, make_member_sets(cfg, data), be, progress);
}

TrainOutput train_swarm(const Config& cfg, const PreparedData& data, const MemberSets& sets, Backend& be,
                        const ProgressFn& progress) {
  TrainOutput out;
  const int S = cfg.swarm.size, E = cfg.train.epochs;
  out.shape = make_mlp_shape(cfg.model, cfg.loss, data.features, data.num_classes, data.targets);
  out.layout = ParamLayout(out.shape, S);
  out.init_params = init_params(out.shape, out.layout, cfg.seed, cfg.swarm.first_member);
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

  Loop loop(cfg, data, sets, be, out);
  const auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  // Chunks of epochs sized to take about 50 ms, so progress stays live while threads
  // rarely synchronize. Results do not depend on the chunking.
  int chunk = 1;
  for (int e0 = 0; e0 < E;) {
    const int e1 = std::min({E, e0 + chunk, e0 + loop.max_chunk()});
    const double t0 = elapsed();
    loop.run_epochs(e0, e1);
    const double t1 = elapsed(), dt = t1 - t0;
    for (int e = e0; e < e1; ++e) {
      EpochStats st = summarize(out, S, e, cfg.swarm.first_member, out.diverged_epoch);
      st.seconds = t0 + dt * (e + 1 - e0) / (e1 - e0);
      st.member_samples_per_s = st.seconds > 0 ? static_cast<double>(S) * loop.n_train() * (e + 1) / st.seconds : 0;
      if (progress) progress(st);
    }
    const double per_epoch = dt / (e1 - e0);
    chunk = std::clamp(static_cast<int>(0.05 / std::max(per_epoch, 1e-9)), 1, std::max(1, 2 * chunk));
    e0 = e1;
  }
  out.train_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  loop.download_params(out.params);
  const SplitData& split = data.test.n > 0 ? data.test : data.train;
  out.pred_split = split.name;
  out.pred_n = split.n;
  loop.predict(split, out.pred_members);
  return out;
}

}  // namespace tn
