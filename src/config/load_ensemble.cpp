// Reads and checks `ensemble`: which members make the ensemble (all, the top k, or greedy
// selection), and the metric they are chosen by on the validation split.
#include <algorithm>

#include "config/load_search.h"
#include "eval/metrics.h"
#include "math/losses.h"
#include "util/suggest.h"

namespace tn::cfg {

void read_ensemble(const Field& root, Config& c) {
  const Field f = root["ensemble"];
  if (!f.present() || f.node().IsNull()) return;
  if (!f.is_map()) f.fail_type("a map like {select: top, k: 5}");
  EnsembleConfig& e = c.ensemble;
  static const std::vector<std::string> methods = {"all", "top", "greedy"};
  if (Field s = f["select"]; s.present()) e.select = methods[s.choose(methods)];
  f.check_keys(section_keys("ensemble"), "select", e.select);
  if (e.select == "top") {
    const Field k = f.required("k");
    e.k = static_cast<int>(k.integer(1, 2147483647));
    if (!c.swarm.size_from_groups && e.k > c.swarm.size)
      k.fail("keeps " + std::to_string(e.k) + " members, but the swarm has " + std::to_string(c.swarm.size) +
             " (swarm.size); keep at most as many, or use select: all");
  } else {
    f.get("k", e.k, 1);
  }
  if (!e.enabled()) return;
  if (c.data.per_member == PerMember::GroupBy)
    f.fail("data.per_member group_by trains one member per group, each for its own series or group, so there is "
           "no ensemble to choose members for; remove `ensemble`");
  const Field metric = f["metric"];
  if (!metric.present()) return;
  e.metric = metric.string();
  const bool classification = is_classification(c.loss.type);
  const int K = c.loss.type == LossType::Bce ? 2 : c.model.layers.back().units;
  const std::vector<std::string>& names = classification ? classification_metric_names(K) : regression_metric_names();
  if (std::find(names.begin(), names.end(), e.metric) != names.end()) return;
  const std::vector<std::string>& binary = classification_metric_names(2);
  if (classification && std::find(binary.begin(), binary.end(), e.metric) != binary.end())
    metric.fail("'" + e.metric + "' is a metric of two-class runs, and this one has " + std::to_string(K) +
                " classes; choose one of " + join(names));
  const std::string near = nearest_name(e.metric, names);
  metric.fail("'" + e.metric + "' is not a " + (classification ? "classification" : "regression") + " metric" +
              (near.empty() ? "" : " (did you mean '" + near + "'?)") + "; choose one of " + join(names));
}

}  // namespace tn::cfg
