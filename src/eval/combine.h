// Combining the members' predictions into the ensemble's, and the per-sample uncertainty of
// the swarm (entropy, mutual information, disagreement). Conventions: docs/commands.md, "Metrics".
#pragma once
#include <string>
#include <vector>

#include "math/losses.h"

namespace tn {

enum class Combine { MeanProb, Vote, MeanLogit };

const char* to_string(Combine c);  // "mean_prob", "vote", "mean_logit"

// What S members output on N samples.
struct SwarmPredictions {
  int S = 0, N = 0, O = 0;
  std::vector<float> outputs;  // [S, N, O]: probabilities (classification) or values
  std::vector<float> logits;   // [S, N, O] before softmax/sigmoid; needed only for mean_logit
};

// The predictions of `members` (indices into p's, in that order) alone.
SwarmPredictions member_subset(const SwarmPredictions& p, const std::vector<int>& members);

// Classes behind O outputs: O for cross_entropy, 2 for bce (one output), 0 for regression.
int num_classes(LossType loss, int O);

// Member s's class probabilities [N, K]: its outputs for cross_entropy, (1 − p, p) for bce.
std::vector<float> class_probabilities(const SwarmPredictions& p, LossType loss, int s);

struct Combined {
  int K = 0;                        // classes; 0 for regression
  int width = 0;                    // columns of `prediction`: K, or O for regression
  std::vector<int> used, excluded;  // members (positions 0..S-1) with all-finite outputs, the rest
                                    // (with weights: of the members of weight > 0)
  std::vector<float> prediction;    // [N, width] ensemble class probabilities or mean values
  std::vector<int> label;           // [N] ensemble class (classification)
  // Per sample, classification only, from the mean of the used members' probabilities
  // whatever `how` is: entropy H[p̄] and mutual information H[p̄] − mean H[p_s] in nats;
  // disagreement = fraction of used members whose class differs from `label`.
  std::vector<float> entropy, mutual_information, disagreement;
};

// mean_prob: p̄ = mean of member probabilities; vote: fractions of member votes (argmax), a
// tie going to the class with the larger p̄; mean_logit: softmax (sigmoid for bce) of the
// mean logit. Regression: the mean, whatever `how` is. Members with a non-finite output
// (or logit, for mean_logit) are left out; with none left everything is NaN.
// `weights` [S] (null: every member 1) make every mean above, the votes, the mean member
// entropy and the disagreement weighted (Σ w·x / Σ w over the used members); a member of
// weight 0 is not used (an ensemble of selected members, eval/select.h).
Combined combine(const SwarmPredictions& p, LossType loss, Combine how, const std::vector<double>* weights = nullptr);

}  // namespace tn
