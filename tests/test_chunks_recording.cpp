// Two things the CUDA backend relies on, checked on the CPU: (1) training a swarm in chunks
// of members (what the memory planner does when a swarm exceeds device memory) gives every
// member bitwise the result it gets in the whole swarm; (2) the trainer honours
// run_recorded's contract (same ops with the same arguments every time a key runs, no host
// copies, allocations or releases inside), which is what makes replaying a CUDA graph of an
// epoch correct. A tracing backend forwards every op to the CPU backend and checks (2).
#include <doctest/doctest.h>

#include <cstring>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "data/member_sets.h"
#include "train/trainer.h"

using namespace tn;

namespace {

// Forwards to a one-thread CPU backend; traces the ops issued inside run_recorded and
// compares each run of a key with its first run.
class TracingBackend final : public Backend {
  // A step kernel whose steps are logged (with the sampler) before they run.
  struct TracedKernel final : StepKernel {
    TracingBackend& be;
    std::unique_ptr<StepKernel> inner;
    TracedKernel(TracingBackend& b, std::unique_ptr<StepKernel> k) : be(b), inner(std::move(k)) {}
    std::string describe() const override { return inner->describe(); }
    int block_members() const override { return inner->block_members(); }
    void step(const StepBatch& f, const StepUpdate& u, int w) override {
      be.log("fused_step", f.S, f.pos0, f.B, f.X, f.Y, f.params->t[0], f.loss_sum, f.correct, f.rows,
             static_cast<int>(u.type), u.state1->t[0], u.state2->t[0], u.opt, u.clip);
      be.log_sampler(*f.sampler, f.member0);
      inner->step(f, u, w);
    }
  };

 public:
  std::uint64_t budget = 0;  // memory_budget() to report (0: host memory, not planned)
  std::map<std::uint64_t, std::string> first_trace;
  int recorded_runs = 0, replays_checked = 0, violations = 0;
  std::string first_violation;

  std::string name() const override { return "trace"; }
  std::string describe() const override { return "tracing cpu"; }
  int workers() const override { return 1; }
  void* alloc_bytes(std::size_t bytes) override { forbid("alloc"); return cpu_.alloc_bytes(bytes); }
  void release(void* p) override { forbid("release"); cpu_.release(p); }
  void to_device(void* d, const void* s, std::size_t n) override { forbid("to_device"); cpu_.to_device(d, s, n); }
  void to_host(void* d, const void* s, std::size_t n) override { forbid("to_host"); cpu_.to_host(d, s, n); }
  void fill_zero(void* d, std::size_t n) override { log("fill_zero", d, n); cpu_.fill_zero(d, n); }
  void copy(void* d, const void* s, std::size_t n) override { log("copy", d, s, n); cpu_.copy(d, s, n); }
  bool host_memory() const override { return true; }
  std::uint64_t memory_budget() const override { return budget; }
  int block_members(int S, std::int64_t b) const override { return cpu_.block_members(S, b); }
  void for_each_block(int S, int mb, const std::function<void(int, int, int)>& fn) override {
    cpu_.for_each_block(S, mb, fn);
  }
  void run_recorded(std::uint64_t key, const std::function<void()>& ops) override {
    REQUIRE(!tracing_);
    tracing_ = true;
    trace_.str("");
    ops();
    tracing_ = false;
    ++recorded_runs;
    auto [it, fresh] = first_trace.emplace(key, trace_.str());
    if (!fresh) {
      ++replays_checked;
      if (it->second != trace_.str()) violate("key " + std::to_string(key) + " issued different ops");
    }
  }
  // The CPU's fused kernels, each step traced like an op.
  std::vector<std::unique_ptr<StepKernel>> step_kernels(const ModelShape& shape, int batch, std::string* why) override {
    std::vector<std::unique_ptr<StepKernel>> traced;
    for (auto& k : cpu_.step_kernels(shape, batch, why)) traced.push_back(std::make_unique<TracedKernel>(*this, std::move(k)));
    return traced;
  }
  void gemm_strided_batched(Trans ta, Trans tb, int m, int n, int k, float alpha, const float* A, int lda,
                            std::int64_t sA, const float* B, int ldb, std::int64_t sB, float beta, float* C,
                            int ldc, std::int64_t sC, int batch) override {
    log("gemm", static_cast<int>(ta), static_cast<int>(tb), m, n, k, alpha, A, lda, sA, B, ldb, sB, beta, C, ldc, sC, batch);
    cpu_.gemm_strided_batched(ta, tb, m, n, k, alpha, A, lda, sA, B, ldb, sB, beta, C, ldc, sC, batch);
  }
  void bias_activation(Activation act, float slope, int S, int rows, int cols, float* Z, std::int64_t sZ,
                       const float* b, std::int64_t sb, float* A, std::int64_t sA) override {
    log("bias_act", static_cast<int>(act), slope, S, rows, cols, Z, sZ, b, sb, A, sA);
    cpu_.bias_activation(act, slope, S, rows, cols, Z, sZ, b, sb, A, sA);
  }
  void activation_backward(Activation act, float slope, int S, int rows, int cols, const float* Z,
                           const float* A, std::int64_t s, float* dA) override {
    log("act_back", static_cast<int>(act), slope, S, rows, cols, Z, A, s, dA);
    cpu_.activation_backward(act, slope, S, rows, cols, Z, A, s, dA);
  }
  void dropout(int S, int rows, int cols, const float* X, std::int64_t sX, float* Y, std::int64_t sY,
               const DropoutKey& key) override {
    log("dropout", S, rows, cols, X, sX, Y, sY, key.rate, key.layer, key.pos0);
    cpu_.dropout(S, rows, cols, X, sX, Y, sY, key);
  }
  void bias_grad(int S, int rows, int cols, const float* dZ, std::int64_t sZ, float* db, std::int64_t sb) override {
    log("bias_grad", S, rows, cols, dZ, sZ, db, sb);
    cpu_.bias_grad(S, rows, cols, dZ, sZ, db, sb);
  }
  void loss_backward(const LossConfig& l, int S, int B, int O, const float* Z, std::int64_t sZ, const float* Y,
                     std::int64_t sY, float* dZ, double* ls, double* c, const int* rows) override {
    log("loss_back", static_cast<int>(l.type), S, B, O, Z, sZ, Y, sY, dZ, ls, c, rows);
    cpu_.loss_backward(l, S, B, O, Z, sZ, Y, sY, dZ, ls, c, rows);
  }
  void loss_forward(const LossConfig& l, int S, int B, int O, const float* Z, std::int64_t sZ, const float* Y,
                    std::int64_t sY, double* ls, double* c, const int* rows) override {
    log("loss_fwd", static_cast<int>(l.type), S, B, O, Z, sZ, Y, sY, ls, c, rows);
    cpu_.loss_forward(l, S, B, O, Z, sZ, Y, sY, ls, c, rows);
  }
  void output_transform(LossType l, int S, int B, int O, const float* Z, std::int64_t sZ, float* P,
                        std::int64_t sP) override {
    log("out", static_cast<int>(l), S, B, O, Z, sZ, P, sP);
    cpu_.output_transform(l, S, B, O, Z, sZ, P, sP);
  }
  void gather_batch(const BatchSampler& smp, std::uint32_t m0, int S, std::uint32_t pos0, int B, const float* X,
                    int F, const float* Y, int T, float* Xb, std::int64_t sXb, float* Yb, std::int64_t sYb,
                    const float* Ystats = nullptr) override {
    log("gather", S, pos0, B, X, F, Y, T, Xb, sXb, Yb, sYb, Ystats);
    log_sampler(smp, m0);
    cpu_.gather_batch(smp, m0, S, pos0, B, X, F, Y, T, Xb, sXb, Yb, sYb, Ystats);
  }
  void to_time_major(int S, int B, int T, int F, const float* src, std::int64_t ss, float* dst,
                     std::int64_t sd) override {
    log("time_major", S, B, T, F, src, ss, dst, sd);
    cpu_.to_time_major(S, B, T, F, src, ss, dst, sd);
  }
  void lstm_forward(int S, int B, int H, float* G, std::int64_t sG, const float* cp, float* c, float* h,
                    std::int64_t sC) override {
    log("lstm_fwd", S, B, H, G, sG, cp, c, h, sC);
    cpu_.lstm_forward(S, B, H, G, sG, cp, c, h, sC);
  }
  void lstm_backward(int S, int B, int H, const float* G, std::int64_t sG, const float* cp, const float* c,
                     const float* dh, std::int64_t sC, float* dc, std::int64_t sdc, float* dG) override {
    log("lstm_bwd", S, B, H, G, sG, cp, c, dh, sC, dc, sdc, dG);
    cpu_.lstm_backward(S, B, H, G, sG, cp, c, dh, sC, dc, sdc, dG);
  }
  void gru_forward(int S, int B, int H, float* Gx, float* Gh, std::int64_t sG, const float* bh, std::int64_t sb,
                   const float* hp, float* h, std::int64_t sH) override {
    log("gru_fwd", S, B, H, Gx, Gh, sG, bh, sb, hp, h, sH);
    cpu_.gru_forward(S, B, H, Gx, Gh, sG, bh, sb, hp, h, sH);
  }
  void gru_backward(int S, int B, int H, const float* Gx, const float* Gh, std::int64_t sG, const float* hp,
                    const float* dh, std::int64_t sH, float* dGx, float* dGh, float* dhp) override {
    log("gru_bwd", S, B, H, Gx, Gh, sG, hp, dh, sH, dGx, dGh, dhp);
    cpu_.gru_backward(S, B, H, Gx, Gh, sG, hp, dh, sH, dGx, dGh, dhp);
  }
  void sum_squares(int S, std::int64_t n, const float* x, std::int64_t sx, double* norm2) override {
    log("sumsq", S, n, x, sx, norm2);
    cpu_.sum_squares(S, n, x, sx, norm2);
  }
  void optimizer_update(OptimizerType t, int S, std::int64_t n, float* P, const float* G, float* S1, float* S2,
                        std::int64_t stride, const OptStep* h, float clip, const double* norm2) override {
    log("opt", static_cast<int>(t), S, n, P, G, S1, S2, stride, h, clip, norm2);
    cpu_.optimizer_update(t, S, n, P, G, S1, S2, stride, h, clip, norm2);
  }
  void freeze_diverged(int S, const double* loss_sum, int* frozen, OptStep* opt) override {
    log("freeze", S, loss_sum, frozen, opt);
    cpu_.freeze_diverged(S, loss_sum, frozen, opt);
  }

 private:
  template <class... A>
  void log(const char* op, const A&... args) {
    if (!tracing_) return;
    trace_ << op;
    ((trace_ << ' ' << args), ...);
    trace_ << '\n';
  }
  void log_sampler(const BatchSampler& s, std::uint32_t member0) {
    log("sampler", static_cast<int>(s.mode), s.seed, s.n, s.order, s.table, s.table_member0, s.table_stride, member0);
  }
  void forbid(const char* what) {
    if (tracing_) violate(std::string(what) + " inside run_recorded");
  }
  void violate(const std::string& why) {
    if (violations++ == 0) first_violation = why;
  }
  CpuBackend cpu_{1};
  bool tracing_ = false;
  std::ostringstream trace_;
};

Config config(const std::string& per_member, const std::string& layers, bool shuffle) {
  return parse_config("seed: 11\nswarm: {size: 12}\nmodel:\n  layers:\n" + layers +
                          "    - {type: dense, units: 2}\n"
                          "optimizer: {type: adam, lr: 0.01, grad_clip: 1.0}\n"
                          "schedule: {type: cosine, warmup_epochs: 1}\n"
                          "data:\n  source: {type: spirals, n: 120}\n  split: {train: 0.8, val: 0.1, test: 0.1}\n"
                          "  per_member: " + per_member + "\n"
                          "train: {epochs: 5, batch_size: 16, shuffle: " + (shuffle ? "true" : "false") + "}\n",
                      "test");
}

const std::string kSmall = "    - {type: dense, units: 8, activation: tanh}\n";  // fused lanes kernel on the CPU
const std::string kWide = "    - {type: dense, units: 80, activation: relu}\n"
                          "    - {type: dense, units: 80, activation: gelu}\n";  // separate ops

// Unequal sets: 12 groups of different sizes (sets mode).
PreparedData grouped(const Config& cfg) {
  PreparedData d = prepare_data(load_dataset(cfg.data, true), cfg.data);
  d.train.group.resize(d.train.n);
  for (int i = 0; i < d.train.n; ++i) d.train.group[i] = i < 40 ? i % 3 : i % 12;  // 3 groups larger
  d.group_names.clear();
  for (int g = 0; g < 12; ++g) d.group_names.push_back(std::string("g").append(std::to_string(g)));
  return d;
}

bool same(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
}

void check_same(const TrainOutput& a, const TrainOutput& b) {
  CHECK(same(a.params, b.params));
  CHECK(same(a.init_params, b.init_params));
  CHECK(same(a.train_loss, b.train_loss));
  CHECK(same(a.train_acc, b.train_acc));
  CHECK(same(a.val_loss, b.val_loss));
  CHECK(same(a.val_acc, b.val_acc));
  CHECK(same(a.pred_members, b.pred_members));
  CHECK(a.diverged_epoch == b.diverged_epoch);
}

struct Case {
  std::string name;
  Config cfg;
  PreparedData data;
  MemberSets sets;
};

std::vector<Case> cases() {
  std::vector<Case> r;
  for (const std::string* layers : {&kSmall, &kWide})
    for (bool shuffle : {true, false}) {
      const std::string tag = std::string(layers == &kSmall ? "small" : "wide") + (shuffle ? " shuffled" : "");
      Config b = config("bootstrap", *layers, shuffle);
      PreparedData bd = prepare_data(load_dataset(b.data, true), b.data);
      MemberSets bs = make_member_sets(b, bd);
      r.push_back({"bootstrap " + tag, b, bd, bs});
      Config g = config("shared", *layers, shuffle);
      g.data.per_member = PerMember::GroupBy;
      g.data.group_by = "g";
      PreparedData gd = grouped(g);
      MemberSets gs = make_member_sets(g, gd);
      r.push_back({"group_by " + tag, g, gd, gs});
    }
  return r;
}

}  // namespace

TEST_CASE("chunked training: every member equals its result in the whole swarm, bitwise") {
  for (const Case& c : cases()) {
    CAPTURE(c.name);
    CpuBackend be(2);
    const TrainOutput whole = train_swarm(c.cfg, c.data, c.sets, be, nullptr);
    for (int chunk : {1, 5}) {
      CAPTURE(chunk);
      int chunks_seen = 0;
      const TrainOutput parts = train_swarm_in_chunks(c.cfg, c.data, c.sets, be, [&](const EpochStats& st) {
        chunks_seen = std::max(chunks_seen, st.chunk);
        CHECK(st.chunks == (12 + chunk - 1) / chunk);
      }, chunk);
      check_same(whole, parts);
      CHECK(chunks_seen == (12 + chunk - 1) / chunk);
      CHECK(parts.kernel.find("chunks of up to " + std::to_string(chunk)) != std::string::npos);
    }
  }
}

TEST_CASE("memory plan: a device budget too small for the swarm trains it in chunks, same results") {
  const Case c = cases()[1];  // group_by, small model, shuffled
  CpuBackend cpu(1);
  TracingBackend dev;
  dev.budget = 1ull << 40;
  REQUIRE(plan_training(c.cfg, c.data, c.sets, cpu).chunk == 12);  // host memory: never planned
  Config six = c.cfg;
  six.swarm.size = 6;
  const ChunkPlan p12 = plan_training(c.cfg, c.data, c.sets, dev);
  const ChunkPlan p6 = plan_training(six, c.data, slice_member_sets(c.sets, 0, 6), dev);
  REQUIRE(p12.chunks == 1);
  const std::int64_t per_member = (p12.bytes - p6.bytes) / 6, fixed = p6.bytes - 6 * per_member;
  REQUIRE(per_member > 0);
  // Room for 5 members at the planner's 90% usable fraction.
  dev.budget = static_cast<std::uint64_t>(static_cast<double>(fixed + 5 * per_member + per_member / 2) / 0.9);
  const ChunkPlan plan = plan_training(c.cfg, c.data, c.sets, dev);
  CHECK(plan.chunk == 5);
  CHECK(plan.chunks == 3);
  CHECK(plan.note.find("3 chunks of up to 5 members") != std::string::npos);
  check_same(train_swarm(c.cfg, c.data, c.sets, cpu, nullptr), train_swarm(c.cfg, c.data, c.sets, dev, nullptr));
  // Not even one member fits: the planner's error, before any training.
  dev.budget = static_cast<std::uint64_t>(fixed / 2);
  CHECK_THROWS_AS(train_swarm(c.cfg, c.data, c.sets, dev, nullptr), BackendError);
}

TEST_CASE("recorded epochs: every run of a key issues the same ops, with no host traffic inside") {
  for (const Case& c : cases()) {
    CAPTURE(c.name);
    TracingBackend trace;
    const TrainOutput traced = train_swarm(c.cfg, c.data, c.sets, trace, nullptr);
    CHECK_MESSAGE(trace.violations == 0, trace.first_violation);
    // Every block's epoch ran under its own key once per epoch; all but the first were compared.
    const int keys = static_cast<int>(trace.first_trace.size());
    CHECK(keys >= 1);
    CHECK(trace.recorded_runs == keys * c.cfg.train.epochs);
    CHECK(trace.replays_checked == keys * (c.cfg.train.epochs - 1));
    // Forwarding changes nothing.
    CpuBackend be(1);
    check_same(traced, train_swarm(c.cfg, c.data, c.sets, be, nullptr));
  }
}
