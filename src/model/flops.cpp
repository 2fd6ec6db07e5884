// Analytic FLOP counts (see flops.h for what is counted).
#include "model/flops.h"

namespace tn {

namespace {
// Multiply-add FLOPs of one recurrent layer's GEMMs per sample: the input projection of T
// steps and the recurrent projection of the T − 1 steps after the first.
double input_projection(const ModelShape& s, const RecurrentLayer& l) {
  return 2.0 * s.seq_len * l.in * l.gates() * l.units;
}
double recurrent_projection(const ModelShape& s, const RecurrentLayer& l) {
  return 2.0 * (s.seq_len - 1) * l.units * l.gates() * l.units;
}
}  // namespace

double forward_flops_per_sample(const ModelShape& shape) {
  double f = 0;
  for (const RecurrentLayer& l : shape.recurrent)
    f += input_projection(shape, l) + recurrent_projection(shape, l) + static_cast<double>(shape.seq_len) * l.gates() * l.units;
  for (const DenseLayer& l : shape.layers) f += 2.0 * l.in * l.out + l.out;
  return f;
}

double backward_flops_per_sample(const ModelShape& shape) {
  // Weight and bias gradients cost what the forward GEMMs and bias additions cost.
  double f = forward_flops_per_sample(shape);
  // Input gradients: every dense layer but the first of a plain MLP; through time, dL/dh_t of
  // the recurrent projection, and dL/d(input) of every recurrent layer above the first.
  const bool rec = !shape.recurrent.empty();
  for (std::size_t i = rec ? 0 : 1; i < shape.layers.size(); ++i) f += 2.0 * shape.layers[i].in * shape.layers[i].out;
  for (std::size_t r = 0; r < shape.recurrent.size(); ++r) {
    f += recurrent_projection(shape, shape.recurrent[r]);
    if (r > 0) f += input_projection(shape, shape.recurrent[r]);
  }
  return f;
}

double update_flops_per_param(OptimizerType type, double momentum, bool nesterov) {
  switch (type) {
    case OptimizerType::Adam:
    case OptimizerType::AdamW: return 16;
    case OptimizerType::Sgd: return 4 + (momentum != 0 ? 2 : 0) + (momentum != 0 && nesterov ? 2 : 0);
    case OptimizerType::RmsProp: return 11 + (momentum != 0 ? 2 : 0);
  }
  return 0;
}

TrainingWork training_work(const ModelShape& shape, const std::vector<OptimizerConfig>& opt,
                           const std::vector<std::uint32_t>& samples, int batch, int epochs, int val_n) {
  const double fwd = forward_flops_per_sample(shape), bwd = backward_flops_per_sample(shape);
  TrainingWork w;
  for (std::size_t k = 0; k < samples.size(); ++k) {
    const std::uint32_t n = samples[k];
    const double upd = update_flops_per_param(opt[k].type, opt[k].momentum, opt[k].nesterov) *
                       static_cast<double>(shape.params_per_member());
    const double steps = (static_cast<double>(n) + batch - 1) / batch;
    w.flops += epochs * (n * (fwd + bwd) + static_cast<double>(static_cast<long long>(steps)) * upd + val_n * fwd);
    w.member_samples += static_cast<double>(n) * epochs;
  }
  return w;
}

}  // namespace tn
