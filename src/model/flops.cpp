// Analytic FLOP counts (see flops.h for what is counted).
#include "model/flops.h"

namespace tn {

double forward_flops_per_sample(const MlpShape& shape) {
  double f = 0;
  for (const DenseLayer& l : shape.layers) f += 2.0 * l.in * l.out + l.out;
  return f;
}

double backward_flops_per_sample(const MlpShape& shape) {
  double f = forward_flops_per_sample(shape);  // weight gradients (2·in·out) and bias gradients (out)
  for (std::size_t i = 1; i < shape.layers.size(); ++i) f += 2.0 * shape.layers[i].in * shape.layers[i].out;
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

TrainingWork training_work(const MlpShape& shape, const std::vector<OptimizerConfig>& opt,
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
