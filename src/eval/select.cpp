// Ensemble selection: every member, the top k, or Caruana's greedy forward selection.
#include "eval/select.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <stdexcept>

#include "eval/by_hparam.h"
#include "eval/metrics.h"

namespace tn {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// The selection's value: its weighted ensemble's metric m on the selection split.
double ensemble_value(const SwarmPredictions& p, LossType loss, const std::vector<float>& targets, Combine how,
                      const Selection& s, std::size_t m) {
  const std::vector<double> w = s.weights(p.S);
  return ensemble_metrics(p, loss, targets, how, &w, kNaN).values[m];
}

Selection select_top(const Evaluation& e, int k, const std::string& metric, std::size_t m) {
  Selection s;
  std::vector<int> order = e.finite;
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    return better_value(metric, e.members[a].values[m], e.members[b].values[m]);
  });
  order.resize(std::min(order.size(), static_cast<std::size_t>(k)));
  s.members = order;
  s.counts.assign(order.size(), 1);
  return s;
}

// The ensembles greedy selection tries under mean_prob (regression: the mean): the ensemble's
// probabilities or values are a running sum of the chosen members' (counted with repeats), so
// trying a candidate costs one pass over its outputs, not a combine() of every chosen member.
class RunningMean {
 public:
  RunningMean(const SwarmPredictions& p, LossType loss, const std::vector<float>& targets)
      : p_(p), targets_(targets), classification_(is_classification(loss)) {
    K_ = num_classes(loss, p.O);
    width_ = classification_ ? K_ : p.O;
    if (loss == LossType::Bce)  // (1 − p, p), as combine() sees it
      for (int s = 0; s < p.S; ++s) bce_.push_back(class_probabilities(p, loss, s));
    for (float y : targets) labels_.push_back(static_cast<int>(y));
    sum_.assign(static_cast<std::size_t>(p.N) * width_, 0.0);
    trial_.resize(sum_.size());
    pred_.resize(static_cast<std::size_t>(p.N));
  }
  // Metric m of the ensemble with member c added once more.
  double with(int c, std::size_t m) {
    const float* q = member(c);
    for (std::size_t i = 0; i < sum_.size(); ++i) trial_[i] = static_cast<float>((sum_[i] + q[i]) / (n_ + 1));
    if (!classification_) return regression_metrics(trial_.data(), targets_.data(), p_.N, width_).values[m];
    for (int i = 0; i < p_.N; ++i) pred_[i] = argmax(&trial_[static_cast<std::size_t>(i) * K_], K_);
    return classification_metrics(trial_.data(), pred_.data(), labels_.data(), p_.N, K_).values[m];
  }
  void add(int c) {
    const float* q = member(c);
    for (std::size_t i = 0; i < sum_.size(); ++i) sum_[i] += q[i];
    ++n_;
  }

 private:
  const float* member(int c) const {
    if (!bce_.empty()) return bce_[static_cast<std::size_t>(c)].data();
    return p_.outputs.data() + static_cast<std::size_t>(c) * p_.N * p_.O;
  }
  const SwarmPredictions& p_;
  const std::vector<float>& targets_;
  bool classification_;
  int K_ = 0, width_ = 0, n_ = 0;
  std::vector<std::vector<float>> bce_;
  std::vector<int> labels_, pred_;
  std::vector<double> sum_;
  std::vector<float> trial_;
};

Selection select_greedy(const SwarmPredictions& p, const Evaluation& e, LossType loss, const std::vector<float>& targets,
                        Combine how, int rounds, const std::string& metric, std::size_t m) {
  Selection s;
  std::vector<double> count(static_cast<std::size_t>(p.S), 0.0);
  std::vector<int> picks;
  // mean_prob and regression: running sums; vote and mean_logit: combine() each trial.
  const bool running = how == Combine::MeanProb || !is_classification(loss);
  std::optional<RunningMean> mean;
  if (running) mean.emplace(p, loss, targets);
  for (int r = 0; r < rounds && !e.finite.empty(); ++r) {
    int best = -1;
    double best_value = kNaN;
    for (int c : e.finite) {
      double v = 0;
      if (running) {
        v = mean->with(c, m);
      } else {
        count[c] += 1;
        v = ensemble_metrics(p, loss, targets, how, &count, kNaN).values[m];
        count[c] -= 1;
      }
      if (best < 0 || better_value(metric, v, best_value)) {
        best = c;
        best_value = v;
      }
    }
    count[best] += 1;
    if (mean) mean->add(best);
    picks.push_back(best);
    s.rounds.push_back(best_value);
  }
  // The shortest prefix with the best value: later rounds that do not improve are dropped.
  std::size_t keep = picks.empty() ? 0 : 1;
  for (std::size_t r = 1; r < s.rounds.size(); ++r)
    if (better_value(metric, s.rounds[r], s.rounds[keep - 1])) keep = r + 1;
  for (std::size_t r = 0; r < keep; ++r) {
    const auto at = std::find(s.members.begin(), s.members.end(), picks[r]);
    if (at == s.members.end()) {
      s.members.push_back(picks[r]);
      s.counts.push_back(1);
    } else {
      ++s.counts[static_cast<std::size_t>(at - s.members.begin())];
    }
  }
  return s;
}

}  // namespace

const char* to_string(SelectMethod m) {
  switch (m) {
    case SelectMethod::All: return "all";
    case SelectMethod::Top: return "top";
    case SelectMethod::Greedy: return "greedy";
  }
  return "?";
}

SelectSpec parse_select(const std::string& text) {
  const auto bad = [&]() {
    return std::invalid_argument("'" + text + "' is not a selection; use all, top:K (the K best members), greedy "
                                 "or greedy:K (K rounds of greedy selection, default " +
                                 std::to_string(kGreedyRounds) + "), e.g. top:5");
  };
  const std::size_t colon = text.find(':');
  const std::string name = text.substr(0, colon);
  SelectSpec spec;
  if (name == "all" && colon == std::string::npos) return spec;
  if (name != "top" && name != "greedy") throw bad();
  spec.method = name == "top" ? SelectMethod::Top : SelectMethod::Greedy;
  if (colon == std::string::npos) {
    if (spec.method == SelectMethod::Top) throw bad();
    return spec;
  }
  const std::string k = text.substr(colon + 1);
  if (k.empty() || k.size() > 9 || k.find_first_not_of("0123456789") != std::string::npos || std::stoi(k) < 1) throw bad();
  spec.k = std::stoi(k);
  return spec;
}

std::string select_text(const SelectSpec& spec) {
  if (spec.method == SelectMethod::All) return "all";
  const int k = spec.method == SelectMethod::Greedy && spec.k == 0 ? kGreedyRounds : spec.k;
  return std::string(to_string(spec.method)) + ":" + std::to_string(k);
}

std::string loss_metric(LossType loss) {
  if (is_classification(loss)) return "log_loss";
  return loss == LossType::Mae ? "mae" : "mse";
}

std::size_t metric_position(const std::vector<std::string>& names, const std::string& metric) {
  const auto it = std::find(names.begin(), names.end(), metric);
  if (it != names.end()) return static_cast<std::size_t>(it - names.begin());
  std::string list;
  for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
  throw std::invalid_argument("'" + metric + "' is not a metric of this run; its metrics: " + list);
}

bool better_value(const std::string& metric, double a, double b) {
  if (std::isnan(a)) return false;
  if (std::isnan(b)) return true;
  return higher_is_better(metric) ? a > b : a < b;
}

std::vector<double> Selection::weights(int S) const {
  std::vector<double> w(static_cast<std::size_t>(S), 0.0);
  double total = 0;
  for (int c : counts) total += c;
  for (std::size_t i = 0; i < members.size(); ++i) w[static_cast<std::size_t>(members[i])] = counts[i] / total;
  return w;
}

Selection select_members(const SwarmPredictions& p, const Evaluation& e, LossType loss,
                         const std::vector<float>& targets, Combine how, const SelectSpec& spec) {
  const std::string metric = spec.metric.empty() ? loss_metric(loss) : spec.metric;
  const std::size_t m = metric_position(e.names, metric);
  Selection s;
  if (spec.method == SelectMethod::Top) {
    s = select_top(e, spec.k, metric, m);
  } else if (spec.method == SelectMethod::Greedy) {
    s = select_greedy(p, e, loss, targets, how, spec.k > 0 ? spec.k : kGreedyRounds, metric, m);
  } else {
    s.members = e.finite;
    s.counts.assign(e.finite.size(), 1);
  }
  s.method = spec.method;
  s.k = spec.method == SelectMethod::Greedy && spec.k == 0 ? kGreedyRounds : spec.k;
  s.metric = metric;
  s.value = s.members.empty() ? kNaN : ensemble_value(p, loss, targets, how, s, m);
  return s;
}

}  // namespace tn
