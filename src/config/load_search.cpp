// Reads and checks `search`: halving (rungs, keep) or pbt (every_epochs, quantile, perturb,
// resample_probability), with the metric both rank members by.
#include "config/load_search.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "config/member_values.h"
#include "math/losses.h"

namespace tn::cfg {
namespace {

// keep: a number in (0, 1), or a fraction written a/b (e.g. 1/3).
double read_keep(const Field& f) {
  if (!f.present()) return 1.0 / 3.0;
  if (!f.is_scalar()) f.fail_type("a fraction in (0, 1), e.g. 0.5 or 1/3");
  const std::string text = f.string();
  double keep = 0;
  if (const std::size_t slash = text.find('/'); slash != std::string::npos) {
    try {
      std::size_t a = 0, b = 0;
      const double num = std::stod(text.substr(0, slash), &a), den = std::stod(text.substr(slash + 1), &b);
      if (a != slash || b != text.size() - slash - 1 || den == 0) throw std::invalid_argument(text);
      keep = num / den;
    } catch (const std::exception&) {
      f.fail("expected a fraction a/b or a number, e.g. 1/3 or 0.5, got '" + text + "'");
    }
  } else {
    keep = f.number();
  }
  if (!(keep > 0 && keep < 1)) f.fail("must be between 0 and 1 (exclusive): the share of members kept at each rung");
  return keep;
}

void read_halving(const Field& f, const Config& c, SearchConfig& s) {
  const Field rungs = f.required("rungs");
  int last = 0;
  for (const Field& r : rungs.items()) {
    const int e = static_cast<int>(r.integer(1, 2147483647));
    if (e <= last) r.fail("rungs must increase: " + std::to_string(e) + " follows " + std::to_string(last));
    if (e >= c.train.epochs)
      r.fail("rung at epoch " + std::to_string(e) + " is not before the last epoch (train.epochs is " +
             std::to_string(c.train.epochs) + "); rungs are the epochs after which members are cut");
    s.rungs.push_back(e);
    last = e;
  }
  if (s.rungs.empty()) rungs.fail("give at least one rung, e.g. rungs: [4, 12]");
  s.keep = read_keep(f["keep"]);
}

void read_pbt(const Field& f, const Config& c, SearchConfig& s) {
  const Field every = f.required("every_epochs");
  s.every_epochs = static_cast<int>(every.integer(1, 2147483647));
  if (s.every_epochs >= c.train.epochs)
    every.fail("is " + std::to_string(s.every_epochs) + ", not fewer than train.epochs (" +
               std::to_string(c.train.epochs) + "): no round would run");
  f.get("quantile", s.quantile, Range::between(0, 0.5, true, false));
  if (static_cast<int>(std::floor(s.quantile * c.swarm.size)) < 1)
    f["quantile"].fail("quantile × swarm.size (" + fmt::format("{:g}", s.quantile) + " × " + std::to_string(c.swarm.size) +
                       ") is below 1, so no member would be replaced; raise quantile or the swarm size (at least " +
                       std::to_string(static_cast<int>(std::ceil(1 / s.quantile))) + ")");
  f.get("resample_probability", s.resample_probability, Range::between(0, 1, false, false));
  const Field perturb = f["perturb"];
  if (!perturb.present()) return;
  if (!perturb.is_map()) perturb.fail_type("a map of per-member keys to factors, e.g. {optimizer.lr: [0.8, 1.25]}");
  OptimizerConfig probe;
  for (const auto& kv : perturb.node()) {
    const std::string key = kv.first.as<std::string>();
    const Field item = perturb[key];
    const std::string field = key.substr(key.find('.') + 1);
    const OptimizerType t = c.optimizer.type;
    const bool applies = field == "lr" || field == "weight_decay" || field == "l1" ||
                         ((field == "beta1" || field == "beta2") && (t == OptimizerType::Adam || t == OptimizerType::AdamW)) ||
                         (field == "eps" && t != OptimizerType::Sgd) ||
                         (field == "momentum" && (t == OptimizerType::Sgd || t == OptimizerType::RmsProp)) ||
                         (field == "alpha" && t == OptimizerType::RmsProp);
    if (optimizer_field(probe, key) && !applies)
      item.fail("'" + key + "' is not a setting of optimizer " + to_string(t) + ", so perturbing it would change nothing");
    if (!optimizer_field(probe, key))
      item.fail("'" + key + "' cannot be perturbed: PBT changes optimizer settings while training (optimizer.lr, "
                "optimizer.weight_decay, optimizer.l1, optimizer.momentum, optimizer.beta1, optimizer.beta2, "
                "optimizer.eps, optimizer.alpha)");
    SearchConfig::Perturb p{key, {}};
    for (const Field& x : item.items()) p.factors.push_back(x.number(Range::above(0)));
    if (p.factors.empty()) item.fail("give at least one factor, e.g. [0.8, 1.25]");
    if (s.resample_probability > 0 && !find_member_values(c, key))
      item.fail("resample_probability is " + fmt::format("{:g}", s.resample_probability) + ", but '" + key +
                "' has no per-member values to resample from; give it as {values: [...]} or {logspace: [a, b]}, "
                "or set search.resample_probability: 0");
    s.perturb.push_back(std::move(p));
  }
}

}  // namespace

void check_ranking_metric(const Field& at, const std::string& metric, const Config& c) {
  if (metric_maximized(metric) && !is_classification(c.loss.type))
    at.fail(metric + " needs a classification loss (cross_entropy or bce); use " +
            (metric == "val_accuracy" ? "val_loss" : "train_loss"));
  if (metric.rfind("val_", 0) == 0 && c.data.split.val <= 0)
    at.fail(metric + " needs a validation split: set data.split.val (e.g. 0.1), or use " +
            (metric_maximized(metric) ? "train_accuracy" : "train_loss"));
}

void read_search(const Field& root, Config& c) {
  const Field f = root["search"];
  if (!f.present() || f.node().IsNull()) return;  // `search: null` (--set search=null): off
  if (!f.is_map()) f.fail_type("a map with type: halving or pbt");
  SearchConfig& s = c.search;
  s.type = f.required("type").choice({SearchConfig::Type::Halving, SearchConfig::Type::Pbt});
  f.check_keys(section_keys("search"), "type", to_string(s.type));
  s.metric = c.data.split.val > 0 ? "val_loss" : "train_loss";
  if (Field m = f["metric"]; m.present()) s.metric = ranking_metrics()[m.choose(ranking_metrics())];
  check_ranking_metric(f["metric"], s.metric, c);
  if (c.train.early_stopping.enabled())
    f.fail("search and train.early_stopping both decide when members stop; remove one of the two");
  if (c.data.per_member == PerMember::GroupBy)
    f.fail("data.per_member group_by trains one member per group, each on its own data, so members are not "
           "candidates for the same model to rank or copy; search needs members that share a task");
  if (s.type == SearchConfig::Type::Halving) read_halving(f, c, s);
  else read_pbt(f, c, s);
}

}  // namespace tn::cfg
