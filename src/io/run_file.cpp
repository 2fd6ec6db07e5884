// Writes run files (atomically), the HDF5 layout documented in docs/run-file.md; reading is
// io/run_file_read.cpp.
#include "io/run_file.h"

#include <utility>

#include "io/h5.h"
#include "io/h5_file.h"
#include "io/run_file_check.h"
#include "io/run_file_eval.h"
#include "io/run_layout.h"

namespace tn {
namespace {

using io::kFormatVersion;
using io::layer_name;

void write_array(hid_t file, const std::string& name, const Array& a) {
  h5::write_floats(file, name, a.shape, a.data.data());
}

void write_if_present(hid_t file, const std::string& name, const Array& a) {
  if (a.size() > 0) write_array(file, name, a);
}

void write_meta(hid_t file, const RunMeta& m) {
  const std::string g = "/meta";
  h5::Handle meta = h5::create_group(file, g);
  const hid_t id = meta.get();
  h5::set_string_attr(id, g, "version", m.version);
  h5::set_string_attr(id, g, "name", m.name);
  h5::set_string_attr(id, g, "device", m.device);
  h5::set_string_attr(id, g, "kernel", m.kernel);
  h5::set_string_attr(id, g, "created", m.created);
  h5::set_int_attr(id, g, "threads", m.threads, H5T_STD_I32LE);
  h5::set_int_attr(id, g, "swarm_size", m.swarm_size, H5T_STD_I32LE);
  h5::set_int_attr(id, g, "first_member", m.first_member, H5T_STD_I32LE);
  h5::set_int_attr(id, g, "epochs", m.epochs, H5T_STD_I32LE);
  h5::set_int_attr(id, g, "steps", m.steps, H5T_STD_I64LE);
  h5::set_double_attr(id, g, "wall_seconds", m.wall_seconds);
  h5::set_double_attr(id, g, "train_seconds", m.train_seconds);
  h5::set_int_attr(id, g, "interrupted", m.interrupted ? 1 : 0, H5T_STD_I32LE);
  if (!m.command.empty()) h5::set_string_attr(id, g, "command", m.command);
  if (m.shard_count > 0) {
    h5::set_int_attr(id, g, "shard_index", m.shard_index, H5T_STD_I32LE);
    h5::set_int_attr(id, g, "shard_count", m.shard_count, H5T_STD_I32LE);
    h5::set_int_attr(id, g, "shard_swarm_first", m.shard_swarm_first, H5T_STD_I32LE);
    h5::set_int_attr(id, g, "shard_swarm_size", m.shard_swarm_size, H5T_STD_I32LE);
  }
  meta.close("group " + g);
}

void write_layers(hid_t file, const std::string& root, const std::vector<LayerParams>& layers) {
  for (std::size_t i = 0; i < layers.size(); ++i) {
    for (const auto& [name, a] : layers[i].tensors) write_array(file, layer_name(root, i) + "/" + name, a);
  }
}

void write_predictions(hid_t file, const Predictions& p) {
  const std::string g = "/predictions/" + p.split;
  h5::Handle group = h5::create_group(file, g);
  h5::set_string_attr(group.get(), g, "split", p.split);
  group.close("group " + g);
  write_if_present(file, g + "/members", p.members);
  write_if_present(file, g + "/ensemble_mean", p.ensemble_mean);
  write_if_present(file, g + "/ensemble_std", p.ensemble_std);
  write_if_present(file, g + "/targets", p.targets);
  if (!p.member.empty()) h5::write_ints(file, g + "/member", p.member);
  if (!p.sample.empty()) h5::write_ints(file, g + "/sample", p.sample);
  write_if_present(file, g + "/own", p.per_group);
  write_if_present(file, g + "/own_original", p.per_group_original);
  write_if_present(file, g + "/targets_original", p.targets_original);
  for (const Predictions::Naive& n : p.naive) {
    write_if_present(file, g + "/" + n.kind, n.values);
    write_if_present(file, g + "/" + n.kind + "_original", n.original);
  }
}

void write_data_info(hid_t file, const DataInfo& d) {
  if (!d.feature_names.empty()) h5::write_strings(file, "/data/feature_names", d.feature_names);
  if (!d.class_names.empty()) h5::write_strings(file, "/data/class_names", d.class_names);
  if (d.target.empty() && d.seq_len == 0 && d.base_dir.empty()) return;
  h5::Handle group = h5::exists(file, "/data") ? h5::open_group(file, "/data")
                                               : h5::create_group(file, "/data");
  if (!d.target.empty()) h5::set_string_attr(group.get(), "/data", "target", d.target);
  if (!d.base_dir.empty()) h5::set_string_attr(group.get(), "/data", "base_dir", d.base_dir);
  if (d.seq_len > 0) {
    h5::set_int_attr(group.get(), "/data", "seq_len", d.seq_len, H5T_STD_I32LE);
    h5::set_int_attr(group.get(), "/data", "step_features", d.step_features, H5T_STD_I32LE);
    h5::set_string_attr(group.get(), "/data", "transform", d.transform);
    h5::set_string_attr(group.get(), "/data", "scale", d.scale);
  }
  group.close("group /data");
}

// /data/encoding: the source columns, their kinds, categories (concatenated, category_counts
// each) and fills, and @missing.
void write_encoding(hid_t file, const EncodingRecord& e) {
  if (e.empty()) return;
  h5::write_strings(file, "/data/encoding/columns", e.columns);
  h5::write_strings(file, "/data/encoding/kinds", e.kinds);
  if (!e.categories.empty()) h5::write_strings(file, "/data/encoding/categories", e.categories);
  h5::write_ints(file, "/data/encoding/category_counts", e.category_counts);
  h5::write_floats(file, "/data/encoding/fill", {e.fill.size()}, e.fill.data());
  h5::Handle g = h5::open_group(file, "/data/encoding");
  h5::set_string_attr(g.get(), "/data/encoding", "missing", e.missing);
  g.close("group /data/encoding");
}

void write_members(hid_t file, const MemberData& m) {
  if (m.per_member.empty()) return;
  h5::Handle g = h5::exists(file, "/members") ? h5::open_group(file, "/members") : h5::create_group(file, "/members");
  h5::set_string_attr(g.get(), "/members", "per_member", m.per_member);
  h5::set_double_attr(g.get(), "/members", "fraction", m.fraction);
  if (!m.group_by.empty()) h5::set_string_attr(g.get(), "/members", "group_by", m.group_by);
  if (!m.init_from_path.empty()) h5::set_string_attr(g.get(), "/members", "init_from", m.init_from_path);
  g.close("group /members");
  if (!m.init_from.empty()) h5::write_ints(file, "/members/init_from", m.init_from);
  h5::write_ints(file, "/members/sample_count", m.sample_count);
  if (!m.set_offset.empty()) {
    h5::write_ints(file, "/members/set_offset", m.set_offset);
    h5::write_ints(file, "/members/set_rows", m.set_rows);
  }
  if (!m.group_names.empty()) h5::write_strings(file, "/members/group_names", m.group_names);
  if (!m.hparams.empty() || !m.hparam_text.empty()) {
    h5::create_group(file, "/members/hparams").close("group /members/hparams");
    for (const auto& [key, values] : m.hparams) h5::write_doubles(file, "/members/hparams/" + key, values);
    for (const auto& [key, values] : m.hparam_text) h5::write_strings(file, "/members/hparams/" + key, values);
  }
  if (!m.architecture.empty()) h5::write_ints(file, "/members/architecture", m.architecture);
}

void write_splits(hid_t file, const std::vector<DataSplit>& splits) {
  for (const DataSplit& d : splits) {
    const std::string root = "/data/splits/" + d.name;
    h5::write_ints(file, root + "/rows", d.rows);
    write_if_present(file, root + "/X", d.X);
    write_if_present(file, root + "/y", d.y);
    if (!d.time.empty()) h5::write_strings(file, root + "/time", d.time);
  }
}

void write_state(hid_t file, const TrainState& t, const std::string& g = "/train_state") {
  h5::Handle group = h5::create_group(file, g);
  h5::set_int_attr(group.get(), g, "epoch", t.epoch, H5T_STD_I32LE);
  if (g == "/train_state") {
    h5::set_string_attr(group.get(), g, "data_fingerprint", t.data_fingerprint);
    h5::set_string_attr(group.get(), g, "kernel_target", t.kernel_target);
  }
  group.close("group " + g);
  for (std::size_t a = 0; a < t.architectures.size(); ++a)
    write_state(file, t.architectures[a], g + "/arch_" + std::to_string(a));
  write_layers(file, g + "/params", t.params);
  write_layers(file, g + "/opt1", t.opt1);
  write_layers(file, g + "/opt2", t.opt2);
  write_layers(file, g + "/best_params", t.best_params);
  if (!t.best_value.empty()) h5::write_doubles(file, g + "/best_value", t.best_value);
  if (!t.next_step.empty()) {
    const std::string pe = g + "/partial_epoch";
    h5::create_group(file, pe).close("group " + pe);
    h5::write_ints(file, pe + "/next_step", t.next_step);
    h5::write_doubles(file, pe + "/train_loss_sum", t.partial_loss);
    if (!t.partial_correct.empty()) h5::write_doubles(file, pe + "/train_correct_sum", t.partial_correct);
  }
}

void write_search(hid_t file, const SearchRecord& r) {
  if (!r.present()) return;
  h5::Handle g = h5::create_group(file, "/search");
  h5::set_string_attr(g.get(), "/search", "type", r.type);
  h5::set_string_attr(g.get(), "/search", "metric", r.metric);
  g.close("group /search");
  if (!r.epochs.empty()) h5::write_ints(file, "/search/epochs", r.epochs);
  if (!r.rung.empty()) h5::write_ints(file, "/search/rung", r.rung);
  if (!r.source.empty()) h5::write_int_rows(file, "/search/source", r.epochs.size(), r.source);
  for (std::size_t j = 0; j < r.keys.size(); ++j)
    h5::write_double_rows(file, "/search/values/" + r.keys[j], r.epochs.size() + 1, r.values[j]);
}

void write_objects(hid_t file, const RunFile& run) {
  h5::set_int_attr(file, "/", "format_version", kFormatVersion, H5T_STD_I32LE);
  h5::write_string_dataset(file, "/config", run.config_yaml);
  write_meta(file, run.meta);
  write_layers(file, "/params", run.params);
  write_layers(file, "/init_params", run.init_params);
  for (std::size_t a = 0; a < run.architectures.size(); ++a) {
    const ArchitectureParams& arch = run.architectures[a];
    const std::string g = "/architectures/arch_" + std::to_string(a);
    h5::Handle group = h5::create_group(file, g);
    h5::set_string_attr(group.get(), g, "architecture", arch.name);
    group.close("group " + g);
    h5::write_ints(file, g + "/members", arch.members);
    write_layers(file, g + "/params", arch.params);
    write_layers(file, g + "/init_params", arch.init_params);
  }
  write_if_present(file, "/history/train_loss", run.train_loss);
  write_if_present(file, "/history/val_loss", run.val_loss);
  write_if_present(file, "/history/train_accuracy", run.train_accuracy);
  write_if_present(file, "/history/val_accuracy", run.val_accuracy);
  if (!run.diverged_epoch.empty())
    h5::write_ints(file, "/members/diverged_epoch", run.diverged_epoch);
  if (!run.stopped_epoch.empty()) h5::write_ints(file, "/members/stopped_epoch", run.stopped_epoch);
  if (!run.best_epoch.empty()) h5::write_ints(file, "/members/best_epoch", run.best_epoch);
  if (run.state.present()) write_state(file, run.state);
  write_search(file, run.search);
  write_members(file, run.members);
  write_splits(file, run.splits);
  write_if_present(file, "/data/normalization/mean", run.normalization.mean);
  write_if_present(file, "/data/normalization/std", run.normalization.std);
  write_if_present(file, "/data/normalization/target_mean", run.normalization.target_mean);
  write_if_present(file, "/data/normalization/target_std", run.normalization.target_std);
  write_if_present(file, "/data/normalization/member_target_mean", run.normalization.member_target_mean);
  write_if_present(file, "/data/normalization/member_target_std", run.normalization.member_target_std);
  if (!run.normalization.method.empty()) {
    h5::Handle g = h5::open_group(file, "/data/normalization");
    h5::set_string_attr(g.get(), "/data/normalization", "method", run.normalization.method);
    g.close("group /data/normalization");
  }
  write_data_info(file, run.data);
  write_encoding(file, run.encoding);
  for (const Predictions& p : run.predictions) write_predictions(file, p);
  for (const EvalRecord& e : run.evals) io::write_eval(file, e);
  io::write_selection(file, "/ensemble", run.ensemble);
}

}  // namespace

void write_run_file(const std::string& path, const RunFile& run, bool replace) {
  io::check_run_file(path, run);
  io::write_h5_atomically(path, "run file", [&](hid_t file) { write_objects(file, run); },
                          replace ? io::Replace::Yes : io::Replace::No);
}

}  // namespace tn
