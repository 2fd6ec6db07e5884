// Loading a trained swarm's model from its run file (see stored_swarm.h).
#include "run/stored_swarm.h"

#include <algorithm>
#include <limits>

#include "run/errors.h"
#include "run/swarm_file.h"

namespace tn {
namespace {

// Which data section the loaded config keeps: the one the run was trained with, or a stand-in
// of the same kind when only the model is needed.
enum class DataSection { Trained, StandIn };

void check_sizes(const StoredSwarm& r) {
  // Sequence data: names and statistics are per step feature.
  const int seq = r.file.data.seq_len;
  const std::size_t F = static_cast<std::size_t>(seq > 0 ? r.file.data.step_features : r.shape.inputs());
  if (seq > 0 && static_cast<std::size_t>(r.shape.inputs()) != F * static_cast<std::size_t>(seq))
    throw RunFileError("run file '" + r.path + "': /data@seq_len " + std::to_string(seq) + " and @step_features " +
                       std::to_string(F) + " do not match the model's " + std::to_string(r.shape.inputs()) + " inputs");
  const auto bad = [&](const std::string& what, std::size_t n, std::size_t want) {
    if (n != 0 && n != want)
      throw RunFileError("run file '" + r.path + "': " + what + " has " + std::to_string(n) +
                         " entries but the model has " + std::to_string(want));
  };
  // Statistics per member group (group_by with normalize_per_member) are [G, F].
  const std::size_t G = std::max<std::size_t>(1, r.file.members.group_names.size());
  const std::size_t stats = r.file.normalization.mean.data.size() == G * F ? G * F : F;
  bad("/data/normalization/mean", r.file.normalization.mean.data.size(), stats);
  bad("/data/normalization/std", r.file.normalization.std.data.size(), stats);
  // Per-member target statistics are [S, T].
  const std::size_t ST = static_cast<std::size_t>(r.S) * static_cast<std::size_t>(r.shape.outputs());
  bad("/data/normalization/member_target_mean", r.file.normalization.member_target_mean.data.size(), ST);
  bad("/data/normalization/member_target_std", r.file.normalization.member_target_std.data.size(), ST);
  bad("/data/feature_names", r.file.data.feature_names.size(), F);
  bad("/data/class_names", r.file.data.class_names.size(), static_cast<std::size_t>(r.K));
}

StoredSwarm load(const std::string& path, DataSection data) {
  StoredSwarm r;
  r.path = path;
  r.file = read_run_file(path);
  if (r.file.meta.shard_count > 0 && !r.file.members.group_names.empty())
    throw UsageError("run file '" + path + "' is shard " + std::to_string(r.file.meta.shard_index) + " of " +
                     std::to_string(r.file.meta.shard_count) + " of a group_by swarm: its members are a block of the "
                     "groups; join the shards first (turbanet merge OUT.h5 PART...) and use the merged file");
  std::vector<Override> ov;
  if (data == DataSection::StandIn) {  // neither the training data nor its per-member sampling is needed
    // A stand-in source of the same kind (the model's shapes come from the run file; new series
    // are read with the stored data section, run/new_series.h).
    const bool seq = r.file.data.seq_len > 0, groups = r.file.members.per_member == "group_by";
    // Sequence runs: many series need group_by; one series does without (a run of members of
    // several architectures has no group_by).
    ov.push_back({"data.source", seq ? (groups ? "{type: random_walk}" : "{type: random_walk, series: 1}") : "{type: spirals}"});
    if (seq) ov.push_back({"data.sequence", "{window: " + std::to_string(r.file.data.seq_len) + ", target: close}"});
    ov.push_back({"data.per_member", seq && groups ? "{group_by: ticker}" : "shared"});
    ov.push_back({"data.normalize_per_member", "false"});  // group statistics are in the run file
    ov.push_back({"data.features", "null"});  // the encoding is in the run file too
    ov.push_back({"data.missing", "error"});
    ov.push_back({"data.drop", "null"});  // the features' names are in the run file
  }
  try {
    r.cfg = run_file_config(r.file, path, ov);
  } catch (const DataFileNotFound& e) {
    throw DataError(std::string(e.what()) + ". The run's own splits are rebuilt from its training data, " + e.key +
                    " '" + e.written + "' in its /config" +
                    (r.file.data.base_dir.empty() ? std::string(" (this run file is older than the record of where it was trained)")
                                                  : ", relative to '" + r.file.data.base_dir + "' where the run was trained") +
                    ". Put the file back there, run eval from the directory you trained in, or evaluate the data where it "
                    "is now: turbanet eval " + path + " --data PATH (every sample of it, as new data: a CSV with the run's columns, or a YAML config)");
  }
  r.S = r.file.meta.swarm_size;
  r.first_member = r.file.meta.first_member;
  FileModel m = model_from_run_file(r.file, r.cfg, path);
  r.shape = std::move(m.shape);
  r.params = std::move(m.params);
  r.classification = m.classification;
  r.K = m.K;
  for (FileArchitecture& a : m.architectures) r.architectures.push_back({a.name, a.members, a.shape, std::move(a.params)});
  // A diverged member keeps in the file the parameters it was frozen with, for inspection;
  // every command leaves it out of the ensemble as if they were not finite.
  const auto leave_out = [&](const ModelShape& shape, std::vector<float>& params, const std::vector<int>& members) {
    const ParamLayout layout(shape, static_cast<int>(members.size()));
    for (std::size_t i = 0; i < members.size(); ++i) {
      const int s = members[i];
      if (s < static_cast<int>(r.file.diverged_epoch.size()) && r.file.diverged_epoch[static_cast<std::size_t>(s)] > 0)
        for (int t = 0; t < shape.tensors(); ++t)
          std::fill_n(params.begin() + layout.at(t, static_cast<int>(i)), layout.size[t],
                      std::numeric_limits<float>::quiet_NaN());
    }
  };
  if (r.architectures.empty()) {
    std::vector<int> all(static_cast<std::size_t>(r.S));
    for (int s = 0; s < r.S; ++s) all[static_cast<std::size_t>(s)] = s;
    leave_out(r.shape, r.params, all);
  }
  for (StoredArchitecture& a : r.architectures) leave_out(a.shape, a.params, a.members);
  check_sizes(r);
  // The file lists per-member hyperparameters by name; reports order them as the config does.
  auto& hp = r.file.members.hparams;
  const auto& keys = member_value_keys();
  std::stable_sort(hp.begin(), hp.end(), [&](const auto& a, const auto& b) {
    return std::find(keys.begin(), keys.end(), a.first) < std::find(keys.begin(), keys.end(), b.first);
  });
  r.class_names = r.file.data.class_names;
  r.encoding = stored_encoding(r.file.encoding, path);
  if (r.class_names.empty())
    for (int k = 0; k < r.K; ++k) r.class_names.push_back(std::to_string(k));
  return r;
}

}  // namespace

StoredSwarm load_swarm_model(const std::string& path) { return load(path, DataSection::StandIn); }

StoredSwarm load_swarm_with_own_data(const std::string& path) { return load(path, DataSection::Trained); }

std::vector<std::pair<std::string, std::vector<std::string>>> architecture_hparams(const StoredSwarm& run) {
  std::vector<std::pair<std::string, std::vector<std::string>>> r = run.file.members.hparam_text;
  int keys = static_cast<int>(r.size());
  for (const auto& [key, values] : run.file.members.hparams) keys += is_architecture_key(key);
  if (run.architectures.empty() || keys < 2) return r;
  std::vector<std::string> names(static_cast<std::size_t>(run.S));
  for (const StoredArchitecture& a : run.architectures)
    for (int s : a.members) names[static_cast<std::size_t>(s)] = a.name;
  r.emplace_back("architecture", names);
  return r;
}

}  // namespace tn
