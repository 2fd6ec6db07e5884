// The names of the enumerated config keys (see key_values.h).
#include "config/key_values.h"

#include <initializer_list>

#include "config/config.h"
#include "config/member_values.h"

namespace tn::cfg {

namespace {

template <class E>
std::vector<std::string> names(std::initializer_list<E> values) {
  std::vector<std::string> out;
  for (E v : values) out.emplace_back(to_string(v));
  return out;
}

}  // namespace

std::vector<std::pair<std::string, std::vector<std::string>>> key_values() {
  std::vector<std::string> activations;
  for (Activation a : layer_activations()) activations.emplace_back(to_string(a));
  using Init = LayerConfig::Init;
  return {
      {"data.missing", names({Missing::Error, Missing::DropRows, Missing::Mean, Missing::Median})},
      {"data.normalize", names({Normalize::None, Normalize::Standard, Normalize::MinMax})},
      {"data.normalize_target",
       names({Normalize::None, Normalize::Standard, Normalize::MinMax, Normalize::Robust, Normalize::Log1p})},
      {"data.per_member", names({PerMember::Shared, PerMember::Bootstrap, PerMember::Subsample, PerMember::Shards,
                                 PerMember::GroupBy})},
      {"data.source.type", {"spirals", "moons", "sine", "random_walk", "csv", "idx", "hdf5", "npy", "arrays"}},
      {"device", names({DeviceKind::Auto, DeviceKind::Cpu, DeviceKind::Cuda})},
      {"device_precision", names({DevicePrecision::Fp32, DevicePrecision::Tf32})},
      {"ensemble.select", {"all", "top", "greedy"}},
      {"loss.type", names({LossType::CrossEntropy, LossType::Bce, LossType::Mse, LossType::Mae, LossType::Huber})},
      {"model.layers.0.activation", activations},
      {"model.layers.0.init", names({Init::Auto, Init::He, Init::Glorot})},
      {"model.layers.0.type", {"dense", "lstm", "gru"}},
      {"optimizer.type", names({OptimizerType::Sgd, OptimizerType::Adam, OptimizerType::AdamW, OptimizerType::RmsProp})},
      {"output.predictions", {"members", "ensemble", "none"}},
      {"schedule.type", names({ScheduleType::Constant, ScheduleType::Step, ScheduleType::Cosine, ScheduleType::Linear})},
      {"search.type", names({SearchConfig::Type::Halving, SearchConfig::Type::Pbt})},
      {"train.early_stopping.metric", ranking_metrics()},
      {"train.tensorboard_runs",
       names({TensorBoardRuns::Auto, TensorBoardRuns::Members, TensorBoardRuns::Groups, TensorBoardRuns::Swarm})},
  };
}

}  // namespace tn::cfg
