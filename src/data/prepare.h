// From a loaded dataset to what training needs: train/val/test splits (contiguous copies,
// shared by all members) and normalization fitted on the training split only.
#pragma once
#include <string>
#include <vector>

#include "data/dataset.h"
#include "data/prepared.h"

namespace tn {

// Splits `d` and normalizes. The split uses the split seed: a shared random permutation,
// then consecutive ranges of sizes round(val·n), round(test·n), and the rest for train; a
// source with its own test set (d.predefined_test) keeps it as the test split and carves
// val from the rest. With split.stratify the same split sizes are cut from each class in
// proportion, the per-class counts of scikit-learn's train_test_split(stratify=y) (test split
// off first, then val from the rest; ties between classes go to the lower class index), each
// split in file order. Throws DataError when the training split would be empty.
// CSV columns are encoded (data/encode.h) with categories and fills fitted on the training split.
// With cfg.normalize_target each target column is scaled by the training split's statistics
// (PreparedData::target_scaling), per group with cfg.normalize_per_member; with log1p a target ≤ −1 is a DataError naming its file:line
// (or row) and column.
// With cfg.sequence, `d` is a long-format table and the windows are cut by prepare_sequences.
PreparedData prepare_data(Dataset d, const DataConfig& cfg);

// Whether each member's target statistics come from its own training rows: data.normalize_target
// on non-sequence data with per_member bootstrap, subsample or shards (MemberSets::target_mean).
// The training split then holds f(y) (log1p'd for log1p, else as loaded), not scaled.
bool member_target_statistics(const DataConfig& cfg);
// The target statistics of rows [n, T] (f(y), already log1p'd for log1p) into mean[at..at+T)
// and std[at..at+T), as prepare_data fits them on the training split: standard and log1p the
// mean and (population) std, minmax the minimum and range, robust the median and interquartile
// range; a constant column gets 1.
void fit_target_statistics(const std::vector<float>& y, int T, Normalize method, std::vector<float>& mean,
                           std::vector<float>& std, std::size_t at);

// Values in the model's units [R, T] back in the target's original units,
// y = f⁻¹(v·target_std[t] + target_mean[t]) (float arithmetic; f⁻¹ = expm1 for log1p, else the
// identity), for non-sequence data with data.normalize_target `method`: statistics [T], or
// [G, T] per member group (normalize_per_member), row r then taking row group[r] (its group,
// which is the member that predicts it with group_by); unchanged with none. Empty statistics
// (per-member statistics: the splits hold f(y)) apply f⁻¹ only.
// Sequence data convert per sample with TargetUnits.
void targets_to_original(std::vector<float>& v, int T, Normalize method, const std::vector<float>& target_mean,
                         const std::vector<float>& target_std, const std::vector<int>& group = {});
// The same for a swarm's outputs [S, N, T]: local member s's block with the statistics of
// member first_member + s (its group's row of [G, T] ones; [T] ones for every member; row s of
// per-member [S, T] ones with first_member 0), so each member is in original units before an
// ensemble is formed.
void member_targets_to_original(std::vector<float>& v, int S, int first_member, int T, Normalize method,
                                const std::vector<float>& target_mean, const std::vector<float>& target_std);
// What the target scaling of non-sequence data is, for the train log ("" without):
// "targets standardized with the training split's mean and std (m / s): data.normalize_target:
// standard (set none to train on raw targets); ...".
// With per-member statistics (member_target_statistics), those of the members, [S, T].
std::string target_scaling_note(const PreparedData& p, const std::vector<float>& member_mean = {},
                                const std::vector<float>& member_std = {});
// Every split's y of non-sequence data back in original units (after training: for metrics
// and the run file); unchanged without data.normalize_target.
void targets_to_original(PreparedData& p);

// Applies normalization statistics to X [n, F] in place: per feature with mean/std [F], or
// per sample's group (group[i]) with [G, F] statistics.
void apply_normalization(std::vector<float>& X, int F, const std::vector<float>& mean,
                         const std::vector<float>& std, const std::vector<int>& group = {});

}  // namespace tn
