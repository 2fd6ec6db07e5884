// Analytic floating-point operation count of training an MLP, for achieved GFLOP/s in
// `turbanet sweep` (documented in docs/sweep.md, checked by hand in tests/test_sweep.cpp).
#pragma once
#include <cstdint>
#include <vector>

#include "config/config.h"
#include "math/optimizers.h"
#include "swarm/shape.h"

namespace tn {

// Per sample, per member: forward 2·in·out + out (multiply-adds of the dense layer, bias) per
// dense layer; per recurrent layer (G = gates·H) 2·T·in·G (input projection) + 2·(T−1)·H·G
// (recurrent projection) + T·G (bias). Backward: the same again for the weight and bias
// gradients, plus the input gradients: 2·in·out for every dense layer but the first of a plain
// MLP, 2·(T−1)·G·H through time for every recurrent layer and 2·T·G·in for every recurrent
// layer above the first. Activations, cell equations, losses and softmax are not counted.
double forward_flops_per_sample(const ModelShape& shape);
double backward_flops_per_sample(const ModelShape& shape);
// Per parameter, per optimizer step, as update_param in math/optimizers.h is written (square
// root and division count one each, weight decay included): adam/adamw 16, sgd 4 (+2 with
// momentum, +2 more for nesterov), rmsprop 11 (+2 with momentum).
double update_flops_per_param(OptimizerType type, double momentum, bool nesterov);

struct TrainingWork {
  double flops = 0;           // whole run, all members
  double member_samples = 0;  // Σ over members of samples per epoch × epochs
};
// The work of training members with `samples[k]` training samples per epoch each (batches of
// at most `batch` rows) and optimizer settings `opt[k]` for `epochs` epochs, plus a forward
// pass over `val_n` validation samples per member and epoch.
TrainingWork training_work(const ModelShape& shape, const std::vector<OptimizerConfig>& opt,
                           const std::vector<std::uint32_t>& samples, int batch, int epochs, int val_n);

}  // namespace tn
