// Reads run files back, checking the HDF5 layout documented in docs/run-file.md and naming
// what is missing or damaged; writing is io/run_file.cpp.
#include "io/run_file.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "io/h5.h"
#include "io/h5_file.h"
#include "io/run_file_eval.h"
#include "io/run_layout.h"

namespace tn {
namespace {

using io::kFormatVersion;
using io::layer_name;
using io::shape_text;

class Reader {
 public:
  // tensors false: the parameter and optimizer-state tensors and the members' own predictions
  // are checked for but not read (read_run_records).
  Reader(hid_t file, const std::string& path, bool tensors = true) : file_(file), path_(path), tensors_(tensors) {}

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
      if (tensors_) run.params = read_layers("/params");
      if (tensors_ && h5::exists(file_, "/init_params")) run.init_params = read_layers("/init_params");
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
  bool tensors_ = true;

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
      if (tensors_) arch.params = read_layers(g + "/params");
      if (tensors_ && h5::exists(file_, g + "/init_params")) arch.init_params = read_layers(g + "/init_params");
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
    if (tensors_) {
      t.params = read_layers(g + "/params");
      t.opt1 = read_layers(g + "/opt1");
      t.opt2 = read_layers(require(g + "/opt2"));
      t.best_params = read_layers(g + "/best_params");
    }
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
      if (tensors_) read_optional(g + "/members", p.members);
      read_optional(g + "/ensemble_mean", p.ensemble_mean);
      read_optional(g + "/ensemble_std", p.ensemble_std);
      read_optional(g + "/targets", p.targets);
      if (h5::exists(file_, g + "/member")) p.member = h5::read_ints(file_, g + "/member");
      if (h5::exists(file_, g + "/sample")) p.sample = h5::read_ints(file_, g + "/sample");
      read_optional(g + "/own", p.per_group);
      read_optional(g + "/own_original", p.per_group_original);
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

RunFile read_run_file(const std::string& path) {
  return io::read_h5_checked<RunFile>(path, "run file", [&](hid_t file) { return Reader(file, path).read(); });
}

RunFile read_run_records(const std::string& path) {
  return io::read_h5_checked<RunFile>(path, "run file", [&](hid_t file) { return Reader(file, path, false).read(); });
}

RunHead read_run_head(const std::string& path) {
  return io::read_h5_checked<RunHead>(path, "run file", [&](hid_t file) { return Reader(file, path).read_head(); });
}

}  // namespace tn
