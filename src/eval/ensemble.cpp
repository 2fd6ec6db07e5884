// Ensemble mean and spread across members.
#include "eval/ensemble.h"

#include <cmath>
#include <limits>

namespace tn {

EnsembleStats ensemble_mean_std(const std::vector<float>& P, int S, int N, int O) {
  const std::size_t per = static_cast<std::size_t>(N) * O;
  EnsembleStats r;
  std::vector<int> used;
  for (int s = 0; s < S; ++s) {
    bool finite = true;
    for (std::size_t i = 0; i < per && finite; ++i) finite = std::isfinite(P[s * per + i]);
    (finite ? used : r.excluded).push_back(s);
  }
  r.mean.assign(per, std::numeric_limits<float>::quiet_NaN());
  r.std.assign(per, std::numeric_limits<float>::quiet_NaN());
  if (used.empty()) return r;
  for (std::size_t i = 0; i < per; ++i) {
    double sum = 0.0;
    for (int s : used) sum += P[s * per + i];
    const double mean = sum / used.size();
    double sq = 0.0;
    for (int s : used) sq += (P[s * per + i] - mean) * (P[s * per + i] - mean);
    r.mean[i] = static_cast<float>(mean);
    r.std[i] = static_cast<float>(std::sqrt(sq / used.size()));
  }
  return r;
}

}  // namespace tn
