// Names of the math enums as used in configs, messages and run files.
#include "math/activations.h"
#include "math/losses.h"
#include "math/optimizers.h"

namespace tn {

const char* to_string(Activation a) {
  switch (a) {
    case Activation::Identity: return "identity";
    case Activation::Relu: return "relu";
    case Activation::LeakyRelu: return "leaky_relu";
    case Activation::Tanh: return "tanh";
    case Activation::Sigmoid: return "sigmoid";
    case Activation::Gelu: return "gelu";
  }
  return "?";
}

const char* to_string(LossType l) {
  switch (l) {
    case LossType::CrossEntropy: return "cross_entropy";
    case LossType::Bce: return "bce";
    case LossType::Mse: return "mse";
    case LossType::Mae: return "mae";
    case LossType::Huber: return "huber";
  }
  return "?";
}

const char* to_string(OptimizerType o) {
  switch (o) {
    case OptimizerType::Sgd: return "sgd";
    case OptimizerType::Adam: return "adam";
    case OptimizerType::AdamW: return "adamw";
    case OptimizerType::RmsProp: return "rmsprop";
  }
  return "?";
}

}  // namespace tn
