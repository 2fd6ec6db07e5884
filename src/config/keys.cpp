// The table of configuration keys (see keys.h); config.md documents each of them.
#include "config/keys.h"

#include <algorithm>
#include <stdexcept>

namespace tn::cfg {

namespace {

using V = std::vector<std::string>;

std::vector<KeySection> make_sections() {
  const V adam = {"adam", "adamw"}, sgd = {"sgd"};
  const V gen = {"spirals", "moons", "sine"}, csv = {"csv"}, idx = {"idx"}, h5 = {"hdf5"}, npy = {"npy"},
          walk = {"random_walk"}, seeded = {"spirals", "moons", "sine", "random_walk"};
  return {
      {"", {"name", "seed", "device", "device_precision", "swarm", "model", "loss", "optimizer", "schedule", "data",
            "train", "output", "grid", "search", "ensemble"}},
      {"swarm", {"size", "first_member"}},
      {"model", {"layers", "hidden", "init_scale", "init_from"}},
      // A dense layer (selector: activation) and a recurrent one (selector: type).
      {"model.layers.N", {"type", "units", "activation", {"leaky_slope", {"leaky_relu"}}, "init", "dropout"}},
      {"model.layers.N (recurrent)", {"type", "units", "return_sequences", {"forget_bias", {"lstm"}}, "init"}},
      {"model.init_from", {"path", "members"}},
      {"loss", {"type", {"delta", {"huber"}}, {"class_weights", {"cross_entropy"}}, {"pos_weight", {"bce"}}}},
      {"optimizer",
       {"type", "lr", {"beta1", adam}, {"beta2", adam}, {"eps", {"adam", "adamw", "rmsprop"}},
        {"momentum", {"sgd", "rmsprop"}}, {"nesterov", sgd}, {"alpha", {"rmsprop"}}, "weight_decay", "l1",
        "grad_clip"}},
      {"schedule", {"type", "warmup_epochs", {"step_every", {"step"}}, {"gamma", {"step"}}, {"min_lr", {"cosine", "linear"}}}},
      {"train", {"epochs", "batch_size", "shuffle", "log_every", "early_stopping", "checkpoint", "tensorboard",
                 "tensorboard_runs"}},
      {"train.early_stopping", {"metric", "patience", "min_delta", "restore_best"}},
      {"train.checkpoint", {"every_epochs", "path"}},
      {"output", {"path", "predictions"}},
      {"data", {"source", "split", "per_member", "normalize", "normalize_per_member", "normalize_target", "sequence",
                "features", "missing", "drop"}},
      {"data.source",
       {"type", {"n", gen}, {"noise", gen}, {"rotations", {"spirals"}}, {"seed", seeded}, {"series", walk},
        {"length", walk}, {"drift", walk}, {"volatility", walk}, {"season_period", walk}, {"season_amplitude", walk},
        {"start_price", walk}, {"path", {"csv", "hdf5"}}, {"features", csv}, {"target", csv}, {"delimiter", csv},
        {"quote", csv}, {"comment", csv}, {"columns", csv}, {"images", idx}, {"labels", idx}, {"test_images", idx},
        {"test_labels", idx}, {"x_dataset", h5}, {"y_dataset", h5}, {"test_x_dataset", h5}, {"test_y_dataset", h5},
        {"x_path", npy}, {"y_path", npy}, {"test_x_path", npy}, {"test_y_path", npy}}},
      {"data.source.features", {"from", "to"}},
      {"data.split", {"train", "val", "test", "seed", "stratify"}},
      {"data.per_member", {"bootstrap", "subsample", "group_by"}},
      // (selector: the mode, bootstrap or subsample)
      {"data.per_member.bootstrap", {"fraction", {"stratify", {"bootstrap"}}}},
      {"data.per_member.subsample", {"fraction", {"stratify", {"bootstrap"}}}},
      {"data.features.COLUMN", {"encoding"}},
      {"data.sequence", {"window", "horizon", "stride", "target", "features", "time", "transform", "scale", "season"}},
      {"search",
       {"type", "metric", {"rungs", {"halving"}}, {"keep", {"halving"}}, {"every_epochs", {"pbt"}}, {"quantile", {"pbt"}},
        {"perturb", {"pbt"}}, {"resample_probability", {"pbt"}}}},
      {"ensemble", {"select", {"k", {"top", "greedy"}}, {"metric", {"top", "greedy"}}}},
      // Forms a value may take: a number per member, NumPy-style logspace, a label per member.
      {"(per-member values)", {"values", "linspace", "logspace", "num"}},
      {"(logspace)", {"exponents", "base"}},
      {"(per-member labels)", {"values"}},
  };
}

}  // namespace

bool KeyRule::applies(const std::string& selected) const {
  return applies_to.empty() || std::find(applies_to.begin(), applies_to.end(), selected) != applies_to.end();
}

const std::vector<KeySection>& key_sections() {
  static const std::vector<KeySection> sections = make_sections();
  return sections;
}

const std::vector<KeyRule>& section_keys(const std::string& name) {
  for (const KeySection& s : key_sections())
    if (s.name == name) return s.keys;
  throw std::logic_error("no config key section '" + name + "' (config/keys.cpp)");
}

std::vector<std::string> key_paths() {
  std::vector<std::string> out;
  for (const KeySection& s : key_sections()) {
    if (s.name.rfind("(", 0) == 0 || s.name.find("COLUMN") != std::string::npos) continue;  // a form, a column
    std::string base = s.name.substr(0, s.name.find(' '));
    if (const std::size_t n = base.find(".N"); n != std::string::npos) base[n + 1] = '0';  // ".N" -> ".0"
    for (const KeyRule& k : s.keys) out.push_back(base.empty() ? k.key : base + "." + k.key);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace tn::cfg
