// Checkpoints and resuming (see run/checkpoint.h).
#include "run/checkpoint.h"

#include <algorithm>

#include "model/build.h"
#include "run/swarm_file.h"
#include "run/tensorboard_log.h"
#include "train/architectures.h"

namespace tn {
namespace {

// A [S, epochs] history of the file, or empty; RunFileError when its shape is not that.
std::vector<float> file_history(const Array& a, int S, int epochs, const std::string& name, const std::string& path) {
  if (a.data.empty()) return {};
  if (a.shape != std::vector<std::uint64_t>{static_cast<std::uint64_t>(S), static_cast<std::uint64_t>(epochs)})
    throw RunFileError("checkpoint '" + path + "': " + name + " is not [" + std::to_string(S) + ", " +
                       std::to_string(epochs) + "] (swarm_size, /train_state@epoch)");
  return a.data;
}

std::vector<int> per_member(const std::vector<int>& v, int S, int fill, const std::string& name, const std::string& path) {
  if (v.empty()) return std::vector<int>(static_cast<std::size_t>(S), fill);
  if (static_cast<int>(v.size()) != S)
    throw RunFileError("checkpoint '" + path + "': " + name + " does not have one entry per member");
  return v;
}

std::string joined(const std::vector<std::string>& keys) {
  std::string text;
  for (const std::string& k : keys) text += (text.empty() ? "" : ", ") + k;
  return text;
}

// The search's state as far as trained (TrainOutput's search_* and, for halving, stopped_epoch).
void read_search_state(const SearchRecord& r, const Config& cfg, TrainOutput& t, const std::string& path) {
  const int S = cfg.swarm.size;
  const auto bad = [&](const std::string& what) {
    throw RunFileError("checkpoint '" + path + "': " + what + "; resume from a checkpoint written with this search");
  };
  if (r.type != to_string(cfg.search.type)) bad("/search@type is '" + r.type + "', not " + to_string(cfg.search.type));
  const auto R = r.epochs.size();
  t.search_epochs = r.epochs;
  if (cfg.search.type == SearchConfig::Type::Halving) {
    t.search_rung = per_member(r.rung, S, 0, "/search/rung", path);
    return;
  }
  if (r.source.size() != R * S) bad("/search/source is not [rounds, " + std::to_string(S) + "]");
  t.search_source = r.source;
  for (const SearchConfig::Perturb& p : cfg.search.perturb) {
    const auto at = std::find(r.keys.begin(), r.keys.end(), p.key);
    if (at == r.keys.end()) bad("/search/values has no " + p.key);
    const std::vector<double>& v = r.values[static_cast<std::size_t>(at - r.keys.begin())];
    if (v.size() != (R + 1) * S) bad("/search/values/" + p.key + " is not [rounds + 1, " + std::to_string(S) + "]");
    t.search_values.push_back(v);
  }
}

// An epoch interrupted between steps (next_step and the sums, one per member of `members`
// members), checked against the epoch's `spe` steps.
PartialEpoch read_partial(const TrainState& st, int members, long spe, const std::string& where, const std::string& path) {
  PartialEpoch p;
  if (st.next_step.empty()) return p;
  const bool shaped = static_cast<int>(st.next_step.size()) == members && static_cast<int>(st.partial_loss.size()) == members &&
                      (st.partial_correct.empty() || static_cast<int>(st.partial_correct.size()) == members);
  if (!shaped)
    throw RunFileError("checkpoint '" + path + "': " + where + "/partial_epoch does not have one entry per member");
  for (int k : st.next_step)
    if (k < 0 || k > spe)
      throw RunFileError("checkpoint '" + path + "': " + where + "/partial_epoch/next_step holds " + std::to_string(k) +
                         ", outside the epoch's " + std::to_string(spe) + " steps");
  p.next_step = st.next_step;
  p.loss_sum = st.partial_loss;
  p.correct_sum = st.partial_correct;
  return p;
}

// Members of several architectures: each architecture's state (parameters, optimizer state,
// its own epochs and interrupted epoch), checked against the architectures `cfg` gives.
void read_architecture_states(const RunFile& f, const Config& cfg, const PreparedData& data, const MemberSets& sets,
                              TrainOutput& t, const std::string& path) {
  const std::vector<ArchitectureGroup> groups = architecture_groups(cfg);
  if (f.architectures.size() != groups.size() || f.state.architectures.size() != groups.size())
    throw RunFileError("checkpoint '" + path + "' holds " + std::to_string(f.state.architectures.size()) +
                       " architectures' states, but its /config gives " + std::to_string(groups.size()));
  const long spe = epoch_steps(cfg, sets);
  for (std::size_t a = 0; a < groups.size(); ++a) {
    const ArchitectureGroup& g = groups[a];
    const ArchitectureParams& fa = f.architectures[a];
    const TrainState& st = f.state.architectures[a];
    const std::string where = "/train_state/arch_" + std::to_string(a);
    std::vector<int> members;
    for (int s : g.members) members.push_back(cfg.swarm.first_member + s);
    if (fa.name != g.name || fa.members != members)
      throw RunFileError("checkpoint '" + path + "': /architectures/arch_" + std::to_string(a) + " holds '" + fa.name +
                         "', not the members of '" + g.name + "' that its /config gives");
    if (st.epoch > t.epochs)
      throw RunFileError("checkpoint '" + path + "': " + where + "@epoch is past /train_state@epoch");
    const int M = static_cast<int>(g.members.size());
    ArchitectureOutput o;
    o.name = g.name;
    o.members = g.members;
    o.shape = make_model_shape(architecture_config(cfg, g), data);
    o.layout = ParamLayout(o.shape, M);
    const std::string arch = "/architectures/arch_" + std::to_string(a);
    o.params = st.params.empty() ? params_from_layers(fa.params, o.shape, M, path, arch + "/params")
                                 : params_from_layers(st.params, o.shape, M, path, where + "/params");
    if (!fa.init_params.empty()) o.init_params = params_from_layers(fa.init_params, o.shape, M, path, arch + "/init_params");
    o.opt1 = params_from_layers(st.opt1, o.shape, M, path, where + "/opt1");
    o.opt2 = params_from_layers(st.opt2, o.shape, M, path, where + "/opt2");
    if (!st.best_params.empty()) o.best_params = params_from_layers(st.best_params, o.shape, M, path, where + "/best_params");
    if (cfg.train.early_stopping.enabled() && cfg.train.early_stopping.restore_best && o.best_params.empty() &&
        st.epoch > 0)  // an architecture that had not started has no best epoch yet
      throw RunFileError("checkpoint '" + path + "' has no " + where + "/best_params, which restore_best needs");
    o.epochs = st.epoch;
    o.partial = read_partial(st, M, spe, where, path);
    if (o.partial.present() && cfg.train.epochs <= o.epochs)
      throw ConfigError("--resume: '" + path + "' was interrupted during epoch " + std::to_string(o.epochs + 1) +
                        " of architecture " + g.name + "; set train.epochs to at least " + std::to_string(o.epochs + 1) +
                        " to finish it");
    if (a == 0) t.shape = o.shape;
    t.steps_per_epoch = spe;
    t.architectures.push_back(std::move(o));
  }
}

}  // namespace

RunFilesHeld hold_run_files(const Config& cfg) {
  const auto hold = [&](const std::string& key, const std::string& path) {
    io::LockAttempt a = io::lock_file(path, io::Hold::Run);
    if (!a.lock.held())
      throw ConfigError(key + ": '" + path + "' belongs to a run in progress, " + a.holder +
                        "; wait for it to end, or give this run another output.path (the checkpoint is beside it)");
    return std::move(a.lock);
  };
  RunFilesHeld held;
  held.run_file = hold("output.path", cfg.output.path);
  held.checkpoint = hold("train.checkpoint.path", cfg.train.checkpoint.path);
  return held;
}

const std::vector<std::string>& resumable_keys() {
  static const std::vector<std::string> keys = {
      "name", "train.epochs", "train.log_every", "output.path", "output.predictions", "model.init_from.path",
      "train.checkpoint.every_epochs", "train.tensorboard", "train.tensorboard_runs",
      "train.checkpoint.path", "data.source.path", "data.source.images", "data.source.labels",
      "data.source.test_images", "data.source.test_labels", "data.source.x_path", "data.source.y_path",
      "data.source.test_x_path", "data.source.test_y_path"};
  return keys;
}

std::string kernel_target(const Backend& be) {
  const std::string d = be.describe();
  const std::size_t end = d.find(')');  // "cpu: avx2 kernels (8 floats per vector), ..."
  return be.name() + " " + (end == std::string::npos ? d.substr(0, d.find(',')) : d.substr(0, end + 1));
}

RunFile make_checkpoint(const Config& cfg, const PreparedData& data, const MemberSets& sets, const TrainOutput& t,
                        const Backend& be, double wall, const std::string& fingerprint) {
  RunFile r = make_trained_file(cfg, data, sets, t, be, wall);
  TrainState& st = r.state;
  st.epoch = t.epochs;
  if (t.architectures.empty()) {
    st.opt1 = params_to_layers(t.shape, t.layout, t.opt1);
    st.opt2 = params_to_layers(t.shape, t.layout, t.opt2);
    if (!t.best_params.empty()) st.best_params = params_to_layers(t.shape, t.layout, t.best_params);
  }
  for (const ArchitectureOutput& a : t.architectures) {  // each at its own epoch
    TrainState as;
    as.epoch = a.epochs;
    as.opt1 = params_to_layers(a.shape, a.layout, a.opt1);
    as.opt2 = params_to_layers(a.shape, a.layout, a.opt2);
    if (!a.best_params.empty()) as.best_params = params_to_layers(a.shape, a.layout, a.best_params);
    as.next_step = a.partial.next_step;
    as.partial_loss = a.partial.loss_sum;
    as.partial_correct = a.partial.correct_sum;
    st.architectures.push_back(std::move(as));
  }
  st.best_value = t.best_value;
  st.data_fingerprint = fingerprint;
  st.kernel_target = kernel_target(be);
  st.next_step = t.partial.next_step;
  st.partial_loss = t.partial.loss_sum;
  st.partial_correct = t.partial.correct_sum;
  return r;
}

ResumePoint read_resume_point(const std::string& path, const Config& cfg, const PreparedData& data,
                              const MemberSets& sets, const std::string& fingerprint) {
  const RunFile f = read_run_file(path);
  if (!f.state.present())
    throw ConfigError("--resume: '" + path + "' holds no training state (/train_state): only checkpoints "
                      "(train.checkpoint) and run files of interrupted runs can be resumed; to extend a run, "
                      "train it with train.checkpoint.every_epochs > 0 and resume from its checkpoint");
  Config old = run_file_config(f, path);
  if (f.meta.shard_count > 0) {  // a shard's /config is the whole swarm's; /meta holds its block
    old.swarm.first_member = f.meta.first_member;
    old.swarm.size = f.meta.swarm_size;
  }
  std::vector<std::string> differ;
  for (const std::string& key : config_differences(old, cfg)) {
    const auto& ok = resumable_keys();
    if (std::find(ok.begin(), ok.end(), key) == ok.end()) differ.push_back(key);
  }
  const bool schedule_needs_epochs = cfg.schedule.type == ScheduleType::Cosine || cfg.schedule.type == ScheduleType::Linear;
  if (old.train.epochs != cfg.train.epochs && schedule_needs_epochs) differ.insert(differ.begin(), "train.epochs");
  if (!differ.empty())
    throw ConfigError("--resume: the configuration differs from that of '" + path + "' in " + joined(differ) +
                      ", which change how the swarm trains; resume with the checkpoint's configuration (its /config). "
                      "A resumed run may change only: " + joined(resumable_keys()) +
                      (schedule_needs_epochs ? " (train.epochs not with a cosine or linear schedule, whose length is "
                                               "train.epochs)" : ""));
  // The logs continue in the runs they have: another layout in the same directory would leave
  // the old runs' curves stopping at the checkpoint beside new ones starting there.
  if (!old.train.tensorboard.empty() && old.train.tensorboard == cfg.train.tensorboard &&
      resolved_runs(old) != resolved_runs(cfg))
    throw ConfigError("--resume: train.tensorboard_runs is " + std::string(to_string(cfg.train.tensorboard_runs)) +
                      " (runs: " + to_string(resolved_runs(cfg)) + "), but the logs of '" + path + "' in '" +
                      cfg.train.tensorboard + "' were written with train.tensorboard_runs " +
                      to_string(old.train.tensorboard_runs) + " (runs: " + to_string(resolved_runs(old)) +
                      "); resume with train.tensorboard_runs=" + to_string(old.train.tensorboard_runs) +
                      ", or give train.tensorboard another directory");
  if (f.state.data_fingerprint != fingerprint)
    throw ConfigError("--resume: the training data differ from those of '" + path + "' (data fingerprint '" +
                      f.state.data_fingerprint + "', now '" + fingerprint + "'); resume with the same data files");
  if (cfg.train.epochs < f.state.epoch)
    throw ConfigError("--resume: train.epochs is " + std::to_string(cfg.train.epochs) + ", but '" + path +
                      "' has trained " + std::to_string(f.state.epoch) + " epochs; set train.epochs to at least that");
  const int S = cfg.swarm.size, E = f.state.epoch;
  if (f.meta.swarm_size != S || f.meta.first_member != cfg.swarm.first_member)
    throw RunFileError("checkpoint '" + path + "': /meta@swarm_size or @first_member does not match its /config");
  ResumePoint r;
  TrainOutput& t = r.state;
  t.epochs = E;
  if (per_member_architecture(cfg)) {
    read_architecture_states(f, cfg, data, sets, t, path);
  } else {
    t.shape = make_model_shape(cfg, data);
    t.layout = ParamLayout(t.shape, S);
    t.params = params_from_layers(f.state.params.empty() ? f.params : f.state.params, t.shape, S, path);
    if (!f.init_params.empty()) t.init_params = params_from_layers(f.init_params, t.shape, S, path);
    t.opt1 = params_from_layers(f.state.opt1, t.shape, S, path);
    t.opt2 = params_from_layers(f.state.opt2, t.shape, S, path);
    if (!f.state.best_params.empty()) t.best_params = params_from_layers(f.state.best_params, t.shape, S, path);
  }
  t.train_loss = file_history(f.train_loss, S, E, "/history/train_loss", path);
  t.val_loss = file_history(f.val_loss, S, E, "/history/val_loss", path);
  t.train_acc = file_history(f.train_accuracy, S, E, "/history/train_accuracy", path);
  t.val_acc = file_history(f.val_accuracy, S, E, "/history/val_accuracy", path);
  t.diverged_epoch = per_member(f.diverged_epoch, S, -1, "/members/diverged_epoch", path);
  if (cfg.train.early_stopping.enabled() || cfg.search.type == SearchConfig::Type::Halving)  // both stop members
    t.stopped_epoch = per_member(f.stopped_epoch, S, -1, "/members/stopped_epoch", path);
  if (cfg.train.early_stopping.enabled()) {
    t.best_epoch = per_member(f.best_epoch, S, 0, "/members/best_epoch", path);
    if (static_cast<int>(f.state.best_value.size()) != S)
      throw RunFileError("checkpoint '" + path + "': /train_state/best_value does not have one entry per member");
    t.best_value = f.state.best_value;
    if (cfg.train.early_stopping.restore_best && t.best_params.empty() && t.architectures.empty())
      throw RunFileError("checkpoint '" + path + "' has no /train_state/best_params, which restore_best needs");
  }
  if (cfg.search.enabled()) read_search_state(f.search, cfg, t, path);
  if (!f.state.next_step.empty()) {
    // Interrupted between steps of epoch E + 1: continue it from each member's step.
    t.partial = read_partial(f.state, S, epoch_steps(cfg, sets), "/train_state", path);
    if (cfg.train.epochs <= E)
      throw ConfigError("--resume: '" + path + "' was interrupted during epoch " + std::to_string(E + 1) +
                        "; set train.epochs to at least " + std::to_string(E + 1) + " to finish it");
  }
  r.kernel_target = f.state.kernel_target;
  return r;
}

}  // namespace tn
