// Writes (atomically) and reads run files, the HDF5 layout documented in docs/run-file.md.
#include "io/run_file.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "io/h5.h"
#include "io/h5_file.h"
#include "io/run_file_eval.h"

namespace tn {

std::uint64_t Array::size() const {
  if (shape.empty()) return 0;  // an Array without a shape holds nothing (no scalars here)
  std::uint64_t n = 1;
  for (std::uint64_t d : shape) n *= d;
  return n;
}


namespace {

template <class T>
void put_by_split(std::vector<T>& items, T item) {
  const auto same = [&](const T& x) { return x.split == item.split; };
  const auto it = std::find_if(items.begin(), items.end(), same);
  if (it != items.end()) *it = std::move(item);
  else items.push_back(std::move(item));
}

}  // namespace

const Predictions* RunFile::find_predictions(const std::string& split) const {
  for (const Predictions& p : predictions)
    if (p.split == split) return &p;
  return nullptr;
}

Predictions* RunFile::find_predictions(const std::string& split) {
  return const_cast<Predictions*>(std::as_const(*this).find_predictions(split));
}

void RunFile::put(Predictions p) { put_by_split(predictions, std::move(p)); }
void RunFile::put(EvalRecord e) { put_by_split(evals, std::move(e)); }

const std::vector<std::string>& layer_tensor_order() {
  static const std::vector<std::string> order = {"W", "Wx", "Wh", "b", "bx", "bh"};
  return order;
}

const Array& LayerParams::operator[](const std::string& name) const {
  for (const auto& [n, a] : tensors)
    if (n == name) return a;
  throw RunFileError("layer has no tensor '" + name + "'");
}

Array& LayerParams::operator[](const std::string& name) {
  return const_cast<Array&>(static_cast<const LayerParams&>(*this)[name]);
}

namespace {

constexpr int kFormatVersion = 1;

std::string layer_name(const std::string& root, std::size_t i) {
  return root + "/layer_" + std::to_string(i);
}


std::string shape_text(const std::vector<std::uint64_t>& shape) {
  std::string text = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) text += ',';
    text += std::to_string(shape[i]);
  }
  return text + "]";
}

// ---------------------------------------------------------------- validation (before any I/O)

struct Validator {
  const std::string& path;

  void fail(const std::string& why) const {
    throw RunFileError("cannot write run file '" + path + "': " + why);
  }
  void array(const Array& a, const std::string& name, bool required) const {
    if (a.shape.empty() && a.data.empty() && !required) return;
    if (a.shape.empty()) fail(name + " has no shape");
    if (a.size() != a.data.size()) {
      fail(name + " has shape " + shape_text(a.shape) + " (" + std::to_string(a.size()) +
           " values) but holds " + std::to_string(a.data.size()) + " values");
    }
  }
  void layers(const std::vector<LayerParams>& layers, const std::string& root) const {
    for (std::size_t i = 0; i < layers.size(); ++i) {
      if (layers[i].tensors.empty()) fail(layer_name(root, i) + " has no tensors");
      for (const auto& [name, a] : layers[i].tensors) {
        if (std::find(layer_tensor_order().begin(), layer_tensor_order().end(), name) == layer_tensor_order().end())
          fail(layer_name(root, i) + "/" + name + " is not a parameter tensor name");
        array(a, layer_name(root, i) + "/" + name, true);
      }
    }
  }
  void split_name(const std::string& split, const char* what) const {
    if (split.empty() || split == "." || split.find('/') != std::string::npos)
      fail(std::string(what) + " split '" + split + "' is not a valid group name");
  }
  void predictions(const Predictions& p) const {
    split_name(p.split, "prediction");
    const std::string g = "/predictions/" + p.split;
    array(p.members, g + "/members", false);
    array(p.ensemble_mean, g + "/ensemble_mean", false);
    array(p.ensemble_std, g + "/ensemble_std", false);
    array(p.targets, g + "/targets", false);
    array(p.own, g + "/own", false);
    array(p.own_original, g + "/own_original", false);
    array(p.targets_original, g + "/targets_original", false);
    for (const Predictions::Naive& n : p.naive) {
      array(n.values, g + "/" + n.kind, false);
      array(n.original, g + "/" + n.kind + "_original", false);
    }
    if (!p.member.empty() && p.own.shape.size() == 2 && p.own.shape[0] != p.member.size())
      fail(g + "/member has " + std::to_string(p.member.size()) + " entries but /own has " +
           std::to_string(p.own.shape[0]) + " samples");
    if (!p.sample.empty() && p.sample.size() != p.member.size())
      fail(g + "/sample has " + std::to_string(p.sample.size()) + " entries but /member has " +
           std::to_string(p.member.size()));
  }
  void scores(const ScoreRecord& r, std::size_t S, std::size_t M, const std::string& name) const {
    if (r.empty()) return;
    if (r.members.size() != S * M || r.pooled.size() != M || r.quantiles.size() != M * 7)
      fail(name + ": scores do not match " + std::to_string(M) + " metrics and " + std::to_string(S) + " members");
  }
  void eval(const EvalRecord& e) const {
    split_name(e.split, "evaluation");
    const std::string g = "/eval/" + e.split;
    const std::size_t M = e.metrics.size();
    if (e.members.size() != e.member.size() * M || e.member_mean.size() != M ||
        e.member_std.size() != M || e.ensemble.size() != (e.own() ? 0 : M))
      fail(g + ": metric values do not match " + std::to_string(M) + " metrics and " +
           std::to_string(e.member.size()) + " members");
    array(e.member_confusion, g + "/members/confusion", false);
    array(e.member_mean_confusion, g + "/member_mean/confusion", false);
    array(e.ensemble_confusion, g + "/ensemble/confusion", false);
    array(e.ensemble_prediction, g + "/per_sample/ensemble", false);
    array(e.entropy, g + "/per_sample/entropy", false);
    array(e.mutual_information, g + "/per_sample/mutual_information", false);
    array(e.disagreement, g + "/per_sample/disagreement", false);
    if (!e.own()) return;
    const std::size_t S = e.member.size();
    scores({e.members, e.pooled, e.quantiles}, S, M, g);
    if (e.member_samples.size() != S) fail(g + "/members/n_samples does not have one entry per member");
    scores(e.original, S, M, g + "/original");
    for (const EvalRecord::Baseline& b : e.baselines) {
      scores(b.scores, S, M, g + "/" + b.kind + " baseline");
      scores(b.original, S, M, g + "/original/" + b.kind + " baseline");
    }
  }
  void run(const RunFile& r) const {
    if (r.params.empty() && r.architectures.empty()) fail("the run has no parameters (/params/layer_0)");
    layers(r.params, "/params");
    layers(r.init_params, "/init_params");
    for (std::size_t a = 0; a < r.architectures.size(); ++a) {
      const std::string g = "/architectures/arch_" + std::to_string(a);
      if (r.architectures[a].params.empty()) fail(g + " has no parameters");
      layers(r.architectures[a].params, g + "/params");
      layers(r.architectures[a].init_params, g + "/init_params");
    }
    layers(r.state.params, "/train_state/params");
    layers(r.state.opt1, "/train_state/opt1");
    layers(r.state.opt2, "/train_state/opt2");
    layers(r.state.best_params, "/train_state/best_params");
    for (std::size_t a = 0; a < r.state.architectures.size(); ++a) {
      const TrainState& st = r.state.architectures[a];
      const std::string g = "/train_state/arch_" + std::to_string(a);
      if (st.opt1.empty() || st.opt2.empty()) fail(g + " has no optimizer state");
      layers(st.params, g + "/params");
      layers(st.opt1, g + "/opt1");
      layers(st.opt2, g + "/opt2");
      layers(st.best_params, g + "/best_params");
    }
    if (!r.state.architectures.empty() && r.state.architectures.size() != r.architectures.size())
      fail("/train_state has " + std::to_string(r.state.architectures.size()) + " architectures' states for " +
           std::to_string(r.architectures.size()) + " architectures");
    array(r.train_loss, "/history/train_loss", false);
    array(r.val_loss, "/history/val_loss", false);
    array(r.train_accuracy, "/history/train_accuracy", false);
    array(r.val_accuracy, "/history/val_accuracy", false);
    array(r.normalization.mean, "/data/normalization/mean", false);
    array(r.normalization.std, "/data/normalization/std", false);
    array(r.normalization.target_mean, "/data/normalization/target_mean", false);
    array(r.normalization.target_std, "/data/normalization/target_std", false);
    for (const Predictions& p : r.predictions) predictions(p);
    for (const EvalRecord& e : r.evals) eval(e);
  }
};

// ---------------------------------------------------------------- writing

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
  write_if_present(file, g + "/own", p.own);
  write_if_present(file, g + "/own_original", p.own_original);
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

// ---------------------------------------------------------------- reading

class Reader {
 public:
  Reader(hid_t file, const std::string& path) : file_(file), path_(path) {}

  RunHead read_head() const {
    check_format_version();
    RunHead h;
    read_meta(h.meta);
    h.config_yaml = h5::read_string_dataset(file_, require("/config"));
    return h;
  }

  RunFile read() {
    check_format_version();
    RunFile run;
    run.config_yaml = h5::read_string_dataset(file_, require("/config"));
    read_meta(run.meta);
    if (h5::exists(file_, "/architectures")) {
      run.architectures = read_architectures();
    } else {
      // A dense first layer has W, a recurrent one Wx (read_layers checks the rest).
      if (!h5::exists(file_, "/params/layer_0/Wx")) require("/params/layer_0/W");
      run.params = read_layers("/params");
      if (h5::exists(file_, "/init_params")) run.init_params = read_layers("/init_params");
    }
    read_optional("/history/train_loss", run.train_loss);
    read_optional("/history/val_loss", run.val_loss);
    read_optional("/history/train_accuracy", run.train_accuracy);
    read_optional("/history/val_accuracy", run.val_accuracy);
    if (h5::exists(file_, "/members/diverged_epoch")) {
      run.diverged_epoch = h5::read_ints(file_, "/members/diverged_epoch");
    }
    if (h5::exists(file_, "/members/stopped_epoch")) run.stopped_epoch = h5::read_ints(file_, "/members/stopped_epoch");
    if (h5::exists(file_, "/members/best_epoch")) run.best_epoch = h5::read_ints(file_, "/members/best_epoch");
    if (h5::exists(file_, "/train_state")) read_state(run.state, "/train_state", run.architectures.size());
    if (h5::exists(file_, "/search")) read_search(run.search);
    read_optional("/data/normalization/mean", run.normalization.mean);
    read_optional("/data/normalization/std", run.normalization.std);
    read_optional("/data/normalization/target_mean", run.normalization.target_mean);
    read_optional("/data/normalization/target_std", run.normalization.target_std);
    if (h5::exists(file_, "/data/normalization")) {
      h5::Handle g = h5::open_group(file_, "/data/normalization");
      if (h5::has_attr(g.get(), "/data/normalization", "method"))
        run.normalization.method = h5::get_string_attr(g.get(), "/data/normalization", "method");
    }
    read_members(run.members);
    read_splits(run.splits);
    read_data_info(run.data);
    read_encoding(run.encoding);
    run.predictions = read_predictions();
    run.evals = io::read_evals(file_);
    run.ensemble = io::read_selection(file_, "/ensemble");
    return run;
  }

 private:
  hid_t file_;
  const std::string& path_;

  void read_search(SearchRecord& r) const {
    h5::Handle g = h5::open_group(file_, "/search");
    r.type = h5::get_string_attr(g.get(), "/search", "type");
    r.metric = h5::get_string_attr(g.get(), "/search", "metric");
    if (h5::exists(file_, "/search/epochs")) r.epochs = h5::read_ints(file_, "/search/epochs");
    if (h5::exists(file_, "/search/rung")) r.rung = h5::read_ints(file_, "/search/rung");
    std::uint64_t rows = 0;
    if (h5::exists(file_, "/search/source")) {
      r.source = h5::read_int_rows(file_, "/search/source", rows);
      if (rows != r.epochs.size()) damaged("/search/source has " + std::to_string(rows) + " rows, /search/epochs " +
                                           std::to_string(r.epochs.size()) + " rounds");
    }
    if (!h5::exists(file_, "/search/values")) return;
    for (const std::string& key : h5::list_group(file_, "/search/values")) {
      r.keys.push_back(key);
      r.values.push_back(h5::read_double_rows(file_, "/search/values/" + key, rows));
      if (rows != r.epochs.size() + 1)
        damaged("/search/values/" + key + " has " + std::to_string(rows) + " rows, not one more than the " +
                std::to_string(r.epochs.size()) + " rounds");
    }
  }

  [[noreturn]] void missing(const std::string& what) const {
    throw RunFileError("run file '" + path_ + "' has no " + what +
                       ": it was not written by turbanet or is damaged");
  }
  [[noreturn]] void damaged(const std::string& what) const {
    throw RunFileError("run file '" + path_ + "' is damaged: " + what + "; restore it from a copy or train again");
  }

  // Returns `name` when it exists, else throws the "has no <name>" error.
  const std::string& require(const std::string& name) const {
    for (std::size_t end = name.find('/', 1);; end = name.find('/', end + 1)) {
      const std::string prefix = name.substr(0, end);
      if (!h5::exists(file_, prefix)) missing(prefix);
      if (end == std::string::npos) return name;
    }
  }

  void check_format_version() const {
    if (!h5::has_attr(file_, "/", "format_version")) missing("format_version attribute");
    const std::int64_t v = h5::get_int_attr(file_, "/", "format_version");
    if (v != kFormatVersion) {
      throw RunFileError("run file '" + path_ + "' has format_version " + std::to_string(v) +
                         ", but this turbanet reads only format_version " +
                         std::to_string(kFormatVersion));
    }
  }

  // Reads attribute `attr` of /meta with `get` after checking that it exists.
  template <typename Get>
  auto meta_attr(hid_t meta, const char* attr, Get get) const {
    if (!h5::has_attr(meta, "/meta", attr)) missing("/meta attribute '" + std::string(attr) + "'");
    return get(meta, "/meta", attr);
  }
  std::string text_attr(hid_t meta, const char* attr) const {
    return meta_attr(meta, attr, h5::get_string_attr);
  }
  // A /meta count: a whole number in [lo, INT_MAX].
  int int_attr(hid_t meta, const char* attr, int lo = 0) const {
    const std::int64_t v = meta_attr(meta, attr, h5::get_int_attr);
    if (v < lo || v > std::numeric_limits<int>::max())
      damaged("/meta@" + std::string(attr) + " is " + std::to_string(v) + ", outside [" + std::to_string(lo) + ", " +
              std::to_string(std::numeric_limits<int>::max()) + "]");
    return static_cast<int>(v);
  }

  void read_meta(RunMeta& m) const {
    h5::Handle group = h5::open_group(file_, require("/meta"));
    const hid_t g = group.get();
    m.version = text_attr(g, "version");
    m.name = text_attr(g, "name");
    m.device = text_attr(g, "device");
    m.kernel = text_attr(g, "kernel");
    m.created = text_attr(g, "created");
    m.threads = int_attr(g, "threads");
    m.swarm_size = int_attr(g, "swarm_size", 1);
    m.first_member = int_attr(g, "first_member");
    if (m.first_member > std::numeric_limits<int>::max() - m.swarm_size)
      damaged("members [" + std::to_string(m.first_member) + ", " + std::to_string(m.first_member) + " + " +
              std::to_string(m.swarm_size) + ") (/meta@first_member, @swarm_size) exceed the largest member index");
    m.epochs = int_attr(g, "epochs");
    m.steps = meta_attr(g, "steps", h5::get_int_attr);
    if (m.steps < 0) damaged("/meta@steps is " + std::to_string(m.steps));
    m.wall_seconds = meta_attr(g, "wall_seconds", h5::get_double_attr);
    m.train_seconds = meta_attr(g, "train_seconds", h5::get_double_attr);
    if (h5::has_attr(g, "/meta", "interrupted")) m.interrupted = h5::get_int_attr(g, "/meta", "interrupted") != 0;
    if (h5::has_attr(g, "/meta", "shard_count")) {
      m.shard_index = int_attr(g, "shard_index");
      m.shard_count = int_attr(g, "shard_count", 1);
      m.shard_swarm_first = int_attr(g, "shard_swarm_first");
      m.shard_swarm_size = int_attr(g, "shard_swarm_size", 1);
      if (m.shard_index >= m.shard_count)
        damaged("/meta@shard_index " + std::to_string(m.shard_index) + " is not below @shard_count " +
                std::to_string(m.shard_count));
    }
  }

  Array read_array(const std::string& name) const {
    Array a;
    h5::read_floats(file_, require(name), a.shape, a.data);
    return a;
  }

  void read_optional(const std::string& name, Array& out) const {
    if (h5::exists(file_, name)) out = read_array(name);
  }

  // layer_0, layer_1, ... until the next one is missing.
  // /architectures/arch_0, arch_1, ... in that order (every one up to the first missing).
  std::vector<ArchitectureParams> read_architectures() const {
    std::vector<ArchitectureParams> r;
    const std::size_t n = h5::list_group(file_, "/architectures").size();
    for (std::size_t a = 0; a < n; ++a) {
      const std::string g = require("/architectures/arch_" + std::to_string(a));
      ArchitectureParams arch;
      h5::Handle group = h5::open_group(file_, g);
      arch.name = h5::get_string_attr(group.get(), g, "architecture");
      arch.members = h5::read_ints(file_, require(g + "/members"));
      if (!h5::exists(file_, g + "/params/layer_0/Wx")) require(g + "/params/layer_0/W");
      arch.params = read_layers(g + "/params");
      if (h5::exists(file_, g + "/init_params")) arch.init_params = read_layers(g + "/init_params");
      r.push_back(std::move(arch));
    }
    return r;
  }

  std::vector<LayerParams> read_layers(const std::string& root) const {
    std::vector<LayerParams> layers;
    for (std::size_t i = 0; h5::exists(file_, layer_name(root, i)); ++i) {
      const std::string g = layer_name(root, i);
      const std::vector<std::string> names = h5::list_group(file_, g);
      const auto has = [&](const char* n) { return std::find(names.begin(), names.end(), n) != names.end(); };
      // The layer's kind from the tensors it has; every tensor of that kind must be there.
      const std::vector<std::string> want = has("W")                ? std::vector<std::string>{"W", "b"}
                                            : has("bx") || has("bh") ? std::vector<std::string>{"Wx", "Wh", "bx", "bh"}
                                            : has("Wx") || has("Wh") ? std::vector<std::string>{"Wx", "Wh", "b"}
                                                                     : std::vector<std::string>{"W", "b"};
      LayerParams l;
      for (const std::string& name : want) l.tensors.emplace_back(name, read_array(require(g + "/" + name)));
      if (names.size() != want.size())
        throw RunFileError("run file '" + path_ + "': " + g + " holds tensors besides its parameters (" +
                           std::to_string(names.size()) + " entries)");
      layers.push_back(std::move(l));
    }
    return layers;
  }

  void read_state(TrainState& t, const std::string& g = "/train_state", std::size_t architectures = 0) const {
    const bool root = g == "/train_state";
    {
      h5::Handle group = h5::open_group(file_, g);
      for (const char* a : {"epoch", "data_fingerprint", "kernel_target"})
        if ((root || a == std::string("epoch")) && !h5::has_attr(group.get(), g, a)) missing(g + " attribute '" + a + "'");
      const std::int64_t e = h5::get_int_attr(group.get(), g, "epoch");
      if (e < 0 || e > std::numeric_limits<int>::max()) damaged(g + "@epoch is " + std::to_string(e));
      t.epoch = static_cast<int>(e);
      if (root) {
        t.data_fingerprint = h5::get_string_attr(group.get(), g, "data_fingerprint");
        t.kernel_target = h5::get_string_attr(group.get(), g, "kernel_target");
      }
    }
    if (root && architectures > 0) {  // one state per architecture, the per-member arrays here
      for (std::size_t a = 0; a < architectures; ++a) {
        t.architectures.emplace_back();
        read_state(t.architectures.back(), require(g + "/arch_" + std::to_string(a)));
      }
      if (h5::exists(file_, g + "/best_value")) t.best_value = h5::read_doubles(file_, g + "/best_value");
      return;
    }
    require(g + "/opt1/layer_0");
    t.params = read_layers(g + "/params");
    t.opt1 = read_layers(g + "/opt1");
    t.opt2 = read_layers(require(g + "/opt2"));
    t.best_params = read_layers(g + "/best_params");
    if (h5::exists(file_, g + "/best_value")) t.best_value = h5::read_doubles(file_, g + "/best_value");
    const std::string pe = g + "/partial_epoch";
    if (h5::exists(file_, pe)) {
      t.next_step = h5::read_ints(file_, require(pe + "/next_step"));
      t.partial_loss = h5::read_doubles(file_, require(pe + "/train_loss_sum"));
      if (h5::exists(file_, pe + "/train_correct_sum")) t.partial_correct = h5::read_doubles(file_, pe + "/train_correct_sum");
    }
  }

  void read_splits(std::vector<DataSplit>& splits) const {
    if (!h5::exists(file_, "/data/splits")) return;
    for (const std::string& name : h5::list_group(file_, "/data/splits")) {
      DataSplit d;
      d.name = name;
      const std::string root = "/data/splits/" + name;
      d.rows = h5::read_ints(file_, require(root + "/rows"));
      read_optional(root + "/X", d.X);
      read_optional(root + "/y", d.y);
      if (h5::exists(file_, root + "/time")) d.time = h5::read_strings(file_, root + "/time");
      splits.push_back(std::move(d));
    }
  }

  void read_members(MemberData& m) const {
    if (!h5::exists(file_, "/members/sample_count")) return;  // written before per-member data modes
    h5::Handle g = h5::open_group(file_, "/members");
    if (h5::has_attr(g.get(), "/members", "per_member"))
      m.per_member = h5::get_string_attr(g.get(), "/members", "per_member");
    if (h5::has_attr(g.get(), "/members", "fraction"))
      m.fraction = h5::get_double_attr(g.get(), "/members", "fraction");
    if (h5::has_attr(g.get(), "/members", "group_by"))
      m.group_by = h5::get_string_attr(g.get(), "/members", "group_by");
    if (h5::has_attr(g.get(), "/members", "init_from"))
      m.init_from_path = h5::get_string_attr(g.get(), "/members", "init_from");
    if (h5::exists(file_, "/members/init_from")) m.init_from = h5::read_ints(file_, "/members/init_from");
    m.sample_count = h5::read_ints(file_, "/members/sample_count");
    if (h5::exists(file_, "/members/set_offset")) {
      m.set_offset = h5::read_ints(file_, "/members/set_offset");
      m.set_rows = h5::read_ints(file_, require("/members/set_rows"));
    }
    if (h5::exists(file_, "/members/group_names")) m.group_names = h5::read_strings(file_, "/members/group_names");
    if (h5::exists(file_, "/members/hparams"))  // in name order; the run layer orders them by key
      for (const std::string& key : h5::list_group(file_, "/members/hparams")) {
        const std::string name = "/members/hparams/" + key;
        if (h5::is_string_dataset(file_, name)) m.hparam_text.emplace_back(key, h5::read_strings(file_, name));
        else m.hparams.emplace_back(key, h5::read_doubles(file_, name));
      }
    if (h5::exists(file_, "/members/architecture")) m.architecture = h5::read_ints(file_, "/members/architecture");
  }

  void read_encoding(EncodingRecord& e) const {
    if (!h5::exists(file_, "/data/encoding")) return;
    e.columns = h5::read_strings(file_, require("/data/encoding/columns"));
    e.kinds = h5::read_strings(file_, require("/data/encoding/kinds"));
    e.category_counts = h5::read_ints(file_, require("/data/encoding/category_counts"));
    if (h5::exists(file_, "/data/encoding/categories")) e.categories = h5::read_strings(file_, "/data/encoding/categories");
    Array fill;
    read_optional(require("/data/encoding/fill"), fill);
    e.fill = fill.data;
    std::size_t total = 0;
    bool negative = false;
    for (int c : e.category_counts) c < 0 ? void(negative = true) : void(total += static_cast<std::size_t>(c));
    if (e.kinds.size() != e.columns.size() || e.category_counts.size() != e.columns.size() ||
        e.fill.size() != e.columns.size() || negative || total != e.categories.size())
      throw RunFileError("run file '" + path_ + "': /data/encoding: columns, kinds, category_counts and fill must have "
                         "one entry per column, and categories sum(category_counts) entries");
    h5::Handle g = h5::open_group(file_, "/data/encoding");
    e.missing = h5::get_string_attr(g.get(), "/data/encoding", "missing");
  }

  void read_data_info(DataInfo& d) const {
    if (h5::exists(file_, "/data/feature_names"))
      d.feature_names = h5::read_strings(file_, "/data/feature_names");
    if (h5::exists(file_, "/data/class_names"))
      d.class_names = h5::read_strings(file_, "/data/class_names");
    if (!h5::exists(file_, "/data")) return;
    h5::Handle group = h5::open_group(file_, "/data");
    if (h5::has_attr(group.get(), "/data", "target"))
      d.target = h5::get_string_attr(group.get(), "/data", "target");
    if (h5::has_attr(group.get(), "/data", "base_dir"))
      d.base_dir = h5::get_string_attr(group.get(), "/data", "base_dir");
    if (h5::has_attr(group.get(), "/data", "seq_len")) {
      d.seq_len = static_cast<int>(h5::get_int_attr(group.get(), "/data", "seq_len"));
      d.step_features = static_cast<int>(h5::get_int_attr(group.get(), "/data", "step_features"));
    }
    const auto name = [&](const char* attr, std::string& out, std::initializer_list<const char*> allowed) {
      if (!h5::has_attr(group.get(), "/data", attr)) return;
      out = h5::get_string_attr(group.get(), "/data", attr);
      if (std::find(allowed.begin(), allowed.end(), out) == allowed.end())
        throw h5::Error(std::string("/data@") + attr + " is '" + out + "', not a data.sequence." + attr + " value");
    };
    name("transform", d.transform, {"none", "diff", "log_diff", "pct_change"});
    name("scale", d.scale, {"series", "window"});
  }

  std::vector<Predictions> read_predictions() const {
    if (!h5::exists(file_, "/predictions")) return {};
    std::vector<Predictions> all;
    for (const std::string& split : h5::list_group(file_, "/predictions")) {
      const std::string g = "/predictions/" + split;
      Predictions p;
      p.split = split;
      read_optional(g + "/members", p.members);
      read_optional(g + "/ensemble_mean", p.ensemble_mean);
      read_optional(g + "/ensemble_std", p.ensemble_std);
      read_optional(g + "/targets", p.targets);
      if (h5::exists(file_, g + "/member")) p.member = h5::read_ints(file_, g + "/member");
      if (h5::exists(file_, g + "/sample")) p.sample = h5::read_ints(file_, g + "/sample");
      read_optional(g + "/own", p.own);
      read_optional(g + "/own_original", p.own_original);
      read_optional(g + "/targets_original", p.targets_original);
      for (const char* kind : {"persistence", "seasonal_naive", "drift"}) {
        Predictions::Naive n{kind, {}, {}};
        read_optional(g + "/" + kind, n.values);
        read_optional(g + "/" + n.kind + "_original", n.original);
        if (n.values.size() > 0 || n.original.size() > 0) p.naive.push_back(std::move(n));
      }
      all.push_back(std::move(p));
    }
    return all;
  }
};

}  // namespace

void write_run_file(const std::string& path, const RunFile& run, bool replace) {
  Validator{path}.run(run);
  io::write_h5_atomically(path, "run file", [&](hid_t file) { write_objects(file, run); },
                          replace ? io::Replace::Yes : io::Replace::No);
}

RunFile read_run_file(const std::string& path) {
  return io::read_h5_checked<RunFile>(path, "run file", [&](hid_t file) { return Reader(file, path).read(); });
}

RunHead read_run_head(const std::string& path) {
  return io::read_h5_checked<RunHead>(path, "run file", [&](hid_t file) { return Reader(file, path).read_head(); });
}

}  // namespace tn
