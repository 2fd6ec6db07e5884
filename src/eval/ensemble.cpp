// Ensemble mean and spread across members.
#include "eval/ensemble.h"

#include <cmath>
#include <limits>

namespace tn {

EnsembleStats ensemble_mean_std(const std::vector<float>& P, int S, int N, int O, const std::vector<double>* weights) {
  const std::size_t per = static_cast<std::size_t>(N) * O;
  const auto w = [&](int s) { return weights ? (*weights)[static_cast<std::size_t>(s)] : 1.0; };
  EnsembleStats r;
  std::vector<int> used;
  double total = 0.0;
  for (int s = 0; s < S; ++s) {
    if (!(w(s) > 0)) continue;
    bool finite = true;
    for (std::size_t i = 0; i < per && finite; ++i) finite = std::isfinite(P[s * per + i]);
    (finite ? used : r.excluded).push_back(s);
    if (finite) total += w(s);
  }
  r.mean.assign(per, std::numeric_limits<float>::quiet_NaN());
  r.std.assign(per, std::numeric_limits<float>::quiet_NaN());
  if (used.empty()) return r;
  for (std::size_t i = 0; i < per; ++i) {
    double sum = 0.0;
    for (int s : used) sum += w(s) * P[s * per + i];
    const double mean = sum / total;
    double sq = 0.0;
    for (int s : used) sq += w(s) * (P[s * per + i] - mean) * (P[s * per + i] - mean);
    r.mean[i] = static_cast<float>(mean);
    r.std[i] = static_cast<float>(std::sqrt(sq / total));
  }
  return r;
}

}  // namespace tn
