// The separate-ops step kernel and the choice between it and a backend's fused kernel.
#include "model/step_kernel_choice.h"

#include <utility>

namespace tn {
namespace {

// One step as separate backend ops: the reference every fused kernel is tested against.
class OpsStepKernel final : public StepKernel {
 public:
  OpsStepKernel(Backend& be, std::function<OpsScratch(int)> scratch) : be_(be), scratch_(std::move(scratch)) {}
  std::string describe() const override {
    return "separate ops per step (gather, forward, loss, backward, update per tensor)";
  }
  int block_members() const override { return 0; }

  void step(const StepBatch& b, const StepUpdate& up, int worker) override {
    const OpsScratch ws = scratch_(worker);
    ModelBuffers& buf = *ws.buf;
    const ModelShape& shape = *b.shape;
    const int F = shape.inputs(), O = shape.outputs(), Bcap = buf.batch;
    const std::int64_t sX = static_cast<std::int64_t>(Bcap) * F, sY = static_cast<std::int64_t>(Bcap) * b.targets;
    const std::int64_t sZ = static_cast<std::int64_t>(Bcap) * O;
    const BlockParams &p = *b.params, &g = *b.grads;
    be_.gather_batch(*b.sampler, b.member0, b.S, b.pos0, b.B, b.X, F, b.Y, b.targets, buf.X, sX, buf.Y, sY, b.Ystats);
    DropoutKey dk;
    dk.seed = b.seed;
    dk.member0 = b.member0;
    dk.members = b.members;
    dk.epoch = b.epoch;
    dk.pos0 = b.pos0;
    const DropoutKey* drop = b.epoch ? &dk : nullptr;
    const float* Z = model_forward(be_, shape, p, buf, b.S, b.B, drop);
    be_.loss_backward(*b.loss, b.S, b.B, O, Z, sZ, buf.Y, sY, buf.dA, b.loss_sum, b.correct, b.rows);
    model_backward(be_, shape, p, g, buf, b.S, b.B, drop);
    if (up.frozen) be_.freeze_diverged(b.S, b.loss_sum, up.frozen, up.opt);
    if (up.clip > 0.0f) {
      be_.fill_zero(ws.norm2, b.S * sizeof(double));
      for (int t = 0; t < shape.tensors(); ++t) be_.sum_squares(b.S, g.stride(t), g.t[t], g.stride(t), ws.norm2);
    }
    for (int t = 0; t < shape.tensors(); ++t)
      be_.optimizer_update(up.type, b.S, p.stride(t), p.t[t], g.t[t], up.state1->t[t], up.state2->t[t], p.stride(t),
                           up.opt, up.clip, ws.norm2);
  }

 private:
  Backend& be_;
  std::function<OpsScratch(int)> scratch_;
};

}  // namespace

StepKernelChoice choose_step_kernel(Backend& be, const ModelShape& shape, int batch, const std::string& ops_only,
                                    std::function<OpsScratch(int worker)> scratch) {
  std::string why = ops_only;
  std::vector<std::unique_ptr<StepKernel>> fused;
  if (ops_only.empty()) fused = be.step_kernels(shape, batch, &why);
  StepKernelChoice c;
  if (!fused.empty()) {
    c.kernel = std::move(fused.front());
    c.note = "step kernel: " + c.kernel->describe();
    return c;
  }
  c.kernel = std::make_unique<OpsStepKernel>(be, std::move(scratch));
  c.note = "step kernel: " + c.kernel->describe() + "; no fused kernel: " + why;
  return c;
}

}  // namespace tn
