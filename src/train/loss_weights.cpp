// Resolving class weights and pos_weight into per-output loss weights (train/loss_weights.h).
#include "train/loss_weights.h"

#include <string>

#include "data/dataset.h"

namespace tn {

std::vector<float> resolve_loss_weights(const LossConfig& loss, const SplitData& train, int outputs) {
  std::vector<float> w;
  if (loss.type == LossType::Bce && !loss.pos_weight.empty()) {
    for (int j = 0; j < outputs; ++j)
      w.push_back(static_cast<float>(loss.pos_weight[loss.pos_weight.size() == 1 ? 0 : static_cast<std::size_t>(j)]));
    return w;
  }
  if (loss.type != LossType::CrossEntropy) return w;
  if (!loss.class_weights.empty()) {
    if (static_cast<int>(loss.class_weights.size()) != outputs)
      throw DataError("loss.class_weights has " + std::to_string(loss.class_weights.size()) +
                      " weights, but the model has " + std::to_string(outputs) + " classes; give one weight per class");
    for (double v : loss.class_weights) w.push_back(static_cast<float>(v));
    return w;
  }
  if (!loss.balanced) return w;
  std::vector<long long> count(static_cast<std::size_t>(outputs), 0);
  for (float y : train.y) {
    const int c = static_cast<int>(y);
    if (c >= 0 && c < outputs) ++count[static_cast<std::size_t>(c)];
  }
  for (int c = 0; c < outputs; ++c) {
    if (count[static_cast<std::size_t>(c)] == 0)
      throw DataError("loss.class_weights: balanced: class " + std::to_string(c) +
                      " has no sample in the training split, so its weight n / (classes · count) is undefined; "
                      "give the weights as a list, or use a split that contains every class");
    w.push_back(static_cast<float>(static_cast<double>(train.n) /
                                   (static_cast<double>(outputs) * static_cast<double>(count[static_cast<std::size_t>(c)]))));
  }
  return w;
}

}  // namespace tn
