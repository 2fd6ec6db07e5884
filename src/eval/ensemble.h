// Combining member predictions into the ensemble's.
#pragma once
#include <vector>

namespace tn {

struct EnsembleStats {
  std::vector<float> mean, std;  // [N, O]
  std::vector<int> excluded;     // members left out because a prediction was not finite
};

// Mean and population standard deviation (ddof = 0) across members of P [S, N, O], over the
// members whose predictions are all finite. With no finite member, mean and std are NaN.
// `weights` [S] (null: equal) weight both (Σ w·x / Σ w); members of weight 0 are not used.
EnsembleStats ensemble_mean_std(const std::vector<float>& P, int S, int N, int O,
                                const std::vector<double>* weights = nullptr);

}  // namespace tn
