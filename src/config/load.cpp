// Reads a run configuration: YAML text -> overrides -> schema validation -> Config.
// The data section (source, split) is in load_data.cpp; to_yaml in emit.cpp.
#include <algorithm>
#include <functional>
#include <cctype>
#include <climits>
#include <filesystem>

#include "config/config_file.h"
#include "config/load_data.h"
#include "config/load_search.h"
#include "config/member_values.h"
#include "config/yaml_util.h"
#include "io/atomic_file.h"
#include "math/saturate.h"

namespace tn {
namespace {

using cfg::Field;
using cfg::Range;
using cfg::section_keys;

constexpr long long kIntMax = INT_MAX;

// True for a section that is present and not empty (`swarm:` alone keeps the defaults).
bool has_section(const Field& f) { return f.present() && !f.node().IsNull(); }

void read_name(const Field& f, std::string& name) {
  if (!f.present()) return;
  name = f.string();
  if (name.empty()) f.fail("must not be empty");
  for (char ch : name) {
    if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '.' && ch != '_' && ch != '-')
      f.fail(std::string("invalid character '") + ch + "' in '" + name +
             "'; allowed: letters, digits, '.', '_', '-'");
  }
}

void read_swarm(const Field& f, SwarmConfig& s) {
  if (!has_section(f)) return;
  f.check_keys(section_keys("swarm"));
  f.get("size", s.size, 1);
  f.get("first_member", s.first_member, 0, kIntMax - s.size);
}

// group_by without swarm.size: one member per group. random_walk's series are known now;
// a csv's groups when its data are read (size_from_groups).
void read_group_swarm(const Field& root, SwarmConfig& s) {
  const Field per_member = root["data"]["per_member"];
  if (root["swarm"]["size"].present() || !per_member.is_map() || !per_member["group_by"].present()) return;
  const Field source = root["data"]["source"];
  const Field type = source.is_map() ? source["type"] : source;
  if (type.is_scalar() && type.node().Scalar() == "random_walk") {
    s.size = RandomWalkConfig{}.series;
    if (source.is_map()) source.get("series", s.size, 1, 1000000);
    return;
  }
  s.size_from_groups = true;
}

// A per-member architecture key given as {values: [...]}: checks each value with `value`
// (which returns its text) and records the key with its values as labels (MemberValues::labels).
// Returns the first value's text.
std::string read_member_labels(const Field& f, const std::string& key, Config& c,
                               const std::function<std::string(const Field&)>& value) {
  f.check_keys(section_keys("(per-member labels)"));
  const Field v = f.required("values");
  if (!v.node().IsSequence()) v.fail_type("a list with one value per member group, e.g. [16, 64]");
  MemberValues mv;
  mv.key = key;
  for (const Field& item : v.items()) {
    mv.values.push_back(static_cast<double>(mv.labels.size()));
    mv.labels.push_back(value(item));
  }
  if (mv.labels.empty()) v.fail("must list at least one value");
  c.member_values.push_back(mv);
  return mv.labels.front();
}

// units: a number, or per member {values: [16, 64, ...]} (integers, recorded as numbers).
int read_units(const Field& f, const std::string& key, Config& c) {
  if (!f.is_map()) return static_cast<int>(f.integer(1, kIntMax));
  f.check_keys(section_keys("(per-member labels)"));
  const Field v = f.required("values");
  if (!v.node().IsSequence()) v.fail_type("a list of unit counts, e.g. [16, 64, 256]");
  MemberValues mv;
  mv.key = key;
  for (const Field& item : v.items()) mv.values.push_back(static_cast<double>(item.integer(1, kIntMax)));
  if (mv.values.empty()) v.fail("must list at least one value");
  c.member_values.push_back(mv);
  return static_cast<int>(mv.values.front());
}

LayerConfig read_layer(const Field& f, int index, Config& c) {
  if (!f.is_map()) f.fail_type("a map like {type: dense, units: 16}");
  LayerConfig l;
  const std::string prefix = "model.layers." + std::to_string(index) + ".";
  static const std::vector<std::string> types = {"dense", "lstm", "gru"};
  bool lstm_among = false;  // forget_bias applies when any member's layer is an lstm
  if (Field t = f["type"]; t.is_map()) {
    static const std::vector<std::string> recurrent = {"lstm", "gru"};
    l.type = read_member_labels(t, prefix + "type", c, [&](const Field& item) {
      const std::string name = recurrent[item.choose(recurrent)];
      lstm_among = lstm_among || name == "lstm";
      return name;
    });
  } else if (t.present()) {
    l.type = types[t.choose(types)];
  }
  lstm_among = lstm_among || l.type == "lstm";
  using Init = LayerConfig::Init;
  if (l.type != "dense") {
    // Recurrent cells have fixed gate activations (sigmoid and tanh).
    f.check_keys(section_keys("model.layers.N (recurrent)"), "type", lstm_among ? "lstm" : l.type);
    l.units = read_units(f.required("units"), prefix + "units", c);
    f.get("return_sequences", l.return_sequences);
    f.get("forget_bias", l.forget_bias);
    f.get("init", l.init, {Init::Auto, Init::Glorot});
    return l;
  }
  const std::vector<Activation>& activations = cfg::layer_activations();
  std::vector<std::string> names;
  for (Activation x : activations) names.emplace_back(to_string(x));
  bool leaky_among = false;
  if (Field a = f["activation"]; a.is_map()) {
    const std::string first = read_member_labels(a, prefix + "activation", c, [&](const Field& item) {
      const std::string name = names[item.choose(names)];
      leaky_among = leaky_among || name == "leaky_relu";
      return name;
    });
    l.activation = activations[static_cast<std::size_t>(std::find(names.begin(), names.end(), first) - names.begin())];
  } else if (a.present()) {
    l.activation = activations[a.choose(names)];
  }
  f.check_keys(section_keys("model.layers.N"), "activation", leaky_among ? "leaky_relu" : to_string(l.activation));
  l.units = read_units(f.required("units"), prefix + "units", c);
  f.get("leaky_slope", l.leaky_slope, Range::at_least(0));
  f.get("init", l.init, {Init::Auto, Init::He, Init::Glorot});
  f.get("dropout", l.dropout, Range::between(0, 1, false, true));
  return l;
}

// Recurrent layers come first and feed each other whole sequences; the last one hands its
// final state to the dense layers after it. return_sequences defaults to exactly that.
void check_layer_order(const std::vector<Field>& fields, std::vector<LayerConfig>& layers) {
  std::size_t rec = 0;
  while (rec < layers.size() && layers[rec].type != "dense") ++rec;
  for (std::size_t i = rec; i < layers.size(); ++i)
    if (layers[i].type != "dense")
      fields[i]["type"].fail("a " + layers[i].type + " layer after a dense layer; recurrent layers come first, "
                             "then the dense layers that read their final state");
  if (rec == 0) return;
  if (rec == layers.size())
    fields.back().fail("the model ends with a " + layers.back().type +
                       " layer; add a dense output layer (e.g. {type: dense, units: 1}) that reads its final state");
  for (std::size_t i = 0; i < rec; ++i) {
    const bool last = i + 1 == rec;
    const Field given = fields[i]["return_sequences"];
    if (given.present() && layers[i].return_sequences == last)
      given.fail(last ? "the last recurrent layer hands only its final state to the dense layers; per-step "
                        "outputs are not supported, so leave return_sequences false"
                      : "must be true: the next layer is recurrent and reads every step");
    layers[i].return_sequences = !last;
  }
}

// model.init_from: {path, members: all | [k, ...]}. The path is looked up like a data file;
// one that is not found is kept as written and refused when training starts (a stored config
// must stay readable after its source run has moved).
void read_init_from(const Field& f, InitFromConfig& w, const std::vector<std::string>& dirs) {
  if (!f.present()) return;
  if (!f.is_map()) f.fail_type("a map like {path: runs/old.h5, members: all}");
  f.check_keys(section_keys("model.init_from"));
  const Field path = f.required("path");
  w.path = path.string();
  if (w.path.empty()) path.fail("must not be empty");
  if (std::string found = cfg::find_file(w.path, dirs); !found.empty()) w.path = found;
  const Field members = f["members"];
  if (!members.present() || (members.is_scalar() && members.string() == "all")) return;
  if (!members.node().IsSequence()) members.fail_type("'all' or a list of source member indices like [0, 0, 3]");
  w.all = false;
  for (const Field& m : members.items()) w.members.push_back(static_cast<int>(m.integer(0, kIntMax)));
}

// model.hidden: {values: [[16], [64, 64], []]}: per member, the units of the hidden dense
// layers (those before the output layer), each taking the settings of model.layers' first
// hidden dense layer (member_model in config/member_values.cpp).
void read_hidden(const Field& model, Config& c) {
  const Field f = model["hidden"];
  if (!f.present() || f.node().IsNull()) return;  // `--set model.hidden=null` takes it away
  const std::vector<LayerConfig>& layers = c.model.layers;
  const int first = hidden_dense_begin(c.model);
  const int n = static_cast<int>(layers.size()) - 1 - first;
  if (n < 1)
    f.fail("replaces the hidden dense layers (those before the output layer), each taking the activation, init and "
           "dropout of the first of them; give model.layers one, e.g. [{units: 16, activation: relu}, {units: 3}]");
  if (n > 1)
    f.fail("replaces the hidden dense layers, each taking the settings of one written layer; model.layers has " +
           std::to_string(n) + " hidden dense layers, so give only one (the template), then the output layer");
  if (!f.is_map()) f.fail_type("{values: [[16], [64, 64], ...]}: per member, the units of each hidden dense layer");
  // The template's activation may vary per member (every hidden layer takes it), its units not.
  const std::string units_key = "model.layers." + std::to_string(first) + ".units";
  if (find_member_values(c, units_key))
    f.fail("gives the hidden layers' units per member, so " + units_key +
           " cannot vary per member too; write every combination in model.hidden");
  read_member_labels(f, "model.hidden", c, [&](const Field& item) {
    if (!item.node().IsSequence()) item.fail_type("a list of unit counts, one per hidden layer, e.g. [64, 64] (or [] for none)");
    std::vector<int> units;
    for (const Field& u : item.items()) units.push_back(static_cast<int>(u.integer(1, kIntMax)));
    return hidden_label(units);
  });
}

void read_model(const Field& f, Config& c, const std::vector<std::string>& dirs) {
  f.check_keys(section_keys("model"));
  ModelConfig& m = c.model;
  const std::vector<Field> layers = f.required("layers").items();
  if (layers.empty()) f["layers"].fail("must contain at least one layer");
  // Each layer on its own (a refused one stands as the default, so that the indices hold); the
  // order of the layers and model.hidden are checked once every layer was read.
  bool read = true;
  for (std::size_t i = 0; i < layers.size(); ++i) {
    m.layers.emplace_back();
    read = layers[i].keep([&] { m.layers.back() = read_layer(layers[i], static_cast<int>(i), c); }) && read;
  }
  if (!read) return;
  check_layer_order(layers, m.layers);
  read_hidden(f, c);
  cfg::read_member_value(f["init_scale"], "model.init_scale", m.init_scale, Range::above(0), c);
  read_init_from(f["init_from"], m.init_from, dirs);
}

// A section given as a name ("sgd") or as a map with a `type` key.
template <class E>
void read_type(const Field& f, E& type, std::initializer_list<E> values) {
  if (f.node().IsSequence()) f.fail_type("a name or a map");
  if (f.is_map()) f.get("type", type, values);
  else type = f.choice(values);
}

// A list of numbers (each in r), or one number when `one` allows it.
std::vector<double> read_numbers(const Field& f, Range r, bool one, const std::string& expected) {
  std::vector<double> v;
  if (one && f.is_scalar()) return {f.number(r)};
  if (!f.node().IsSequence()) f.fail_type(expected);
  for (const Field& x : f.items()) v.push_back(x.number(r));
  if (v.empty()) f.fail("must not be empty; " + expected);
  return v;
}

void read_loss(const Field& f, LossConfig& l) {
  if (!has_section(f)) return;
  read_type(f, l.type,
            {LossType::CrossEntropy, LossType::Bce, LossType::Mse, LossType::Mae, LossType::Huber});
  if (f.is_map())
    f.check_keys(section_keys("loss"), "type", to_string(l.type));
  f.get("delta", l.huber_delta, Range::above(0));
  if (const Field cw = f["class_weights"]; cw.present()) {
    if (cw.is_scalar() && cw.string() == "balanced") {
      l.balanced = true;
    } else {
      l.class_weights = read_numbers(cw, Range::at_least(0), false,
                                     "'balanced' or a list of one weight per class like [1.0, 4.0]");
      bool positive = false;
      for (double w : l.class_weights) positive = positive || w > 0;
      if (!positive) cw.fail("every weight is 0, so no sample would count; give at least one weight > 0");
    }
  }
  if (const Field pw = f["pos_weight"]; pw.present())
    l.pos_weight = read_numbers(pw, Range::at_least(0), true, "a number, or a list of one number per output");
}

void read_optimizer(const Field& f, Config& c) {
  if (!has_section(f)) return;
  OptimizerConfig& o = c.optimizer;
  using T = OptimizerType;
  read_type(f, o.type, {T::Sgd, T::Adam, T::AdamW, T::RmsProp});
  if (f.is_map()) f.check_keys(section_keys("optimizer"), "type", to_string(o.type));
  // Each of these may be one number or a value per member ({values|linspace|logspace}).
  const auto value = [&](const char* key, double& out, Range r) {
    f[key].keep([&] { cfg::read_member_value(f[key], std::string("optimizer.") + key, out, r, c); });
  };
  value("lr", o.lr, Range::above(0));
  value("beta1", o.beta1, Range::between(0, 1, false, true));
  value("beta2", o.beta2, Range::between(0, 1, false, true));
  value("eps", o.eps, Range::above(0));
  value("momentum", o.momentum, Range::between(0, 1, false, true));
  f.get("nesterov", o.nesterov);
  value("alpha", o.alpha, Range::between(0, 1, true, true));
  value("weight_decay", o.weight_decay, Range::at_least(0));
  value("l1", o.l1, Range::at_least(0));
  f.get("grad_clip", o.grad_clip, Range::at_least(0));
  const MemberValues* mom = find_member_values(c, "optimizer.momentum");
  if (o.nesterov && !f["momentum"].has_errors() && (mom ? cfg::smallest_value(*mom) : o.momentum) <= 0)
    f["nesterov"].fail("nesterov needs momentum > 0; set optimizer.momentum, e.g. 0.9");
}

void read_schedule(const Field& f, ScheduleConfig& s) {
  if (!has_section(f)) return;
  using T = ScheduleType;
  read_type(f, s.type, {T::Constant, T::Step, T::Cosine, T::Linear});
  if (f.is_map())
    f.check_keys(section_keys("schedule"), "type", to_string(s.type));
  f.get("warmup_epochs", s.warmup_epochs, Range::at_least(0));
  if (s.type == ScheduleType::Step)
    s.step_every = static_cast<int>(f.required("step_every").integer(1, kIntMax));
  f.get("gamma", s.gamma, Range::between(0, 1, true, false));
  f.get("min_lr", s.min_lr, Range::at_least(0));
}

void read_early_stopping(const Field& f, EarlyStoppingConfig& s) {
  if (!has_section(f)) return;
  f.check_keys(section_keys("train.early_stopping"));
  s.metric = ranking_metrics()[f.required("metric").choose(ranking_metrics())];
  f.get("patience", s.patience, 1);
  f.get("min_delta", s.min_delta, Range::at_least(0));
  f.get("restore_best", s.restore_best);
}

void read_checkpoint(const Field& f, CheckpointConfig& c) {
  if (!has_section(f)) return;
  f.check_keys(section_keys("train.checkpoint"));
  f.get("every_epochs", c.every_epochs, 0);
  if (Field p = f["path"]; p.present()) {
    c.path = p.string();
    if (c.path.empty()) p.fail("must not be empty (leave the key out for the default beside output.path)");
  }
}

void read_train(const Field& f, TrainConfig& t) {
  if (!has_section(f)) return;
  f.check_keys(section_keys("train"));
  f.get("epochs", t.epochs, 1);
  f.get("batch_size", t.batch_size, 1);
  f.get("shuffle", t.shuffle);
  f.get("log_every", t.log_every, 0);
  read_early_stopping(f["early_stopping"], t.early_stopping);
  read_checkpoint(f["checkpoint"], t.checkpoint);
  if (Field p = f["tensorboard"]; p.present()) {
    t.tensorboard = p.string();
    if (t.tensorboard.empty()) p.fail("must not be empty (leave the key out for no TensorBoard logs)");
  }
  using R = TensorBoardRuns;
  f.get("tensorboard_runs", t.tensorboard_runs, {R::Auto, R::Members, R::Groups, R::Swarm});
}

void read_output(const Field& f, Config& c) {
  if (has_section(f)) {
    f.check_keys(section_keys("output"));
    if (Field p = f["path"]; p.present()) {
      c.output.path = p.string();
      if (c.output.path.empty()) p.fail("must not be empty");
    }
    static const std::vector<std::string> kept = {"members", "ensemble", "none"};
    if (Field p = f["predictions"]; p.present()) p.keep([&] { c.output.predictions = kept[p.choose(kept)]; });
  }
  if (c.output.path.empty()) c.output.path = "runs/" + c.name + ".h5";
}

// device: auto | cpu | cuda | cuda:N (N a GPU ordinal).
void read_device(const Field& f, Config& c) {
  if (!f.present()) return;
  const std::string v = f.string();
  if (v.rfind("cuda:", 0) == 0) {
    const std::string n = v.substr(5);
    if (n.empty() || n.size() > 4 || n.find_first_not_of("0123456789") != std::string::npos)
      f.fail("expected cuda:N with N a GPU index (0, 1, ...), got '" + v + "'");
    c.device = DeviceKind::Cuda;
    c.device_index = std::stoi(n);
    return;
  }
  c.device = f.choice({DeviceKind::Auto, DeviceKind::Cpu, DeviceKind::Cuda});
}

// Architecture keys that give every member the same value (e.g. model.hidden: {values:
// [[16, 16]]}) and are not in the grid: the model written out, an ordinary swarm.
void fold_single_architecture(Config& c) {
  bool single = per_member_architecture(c);
  for (const MemberValues& v : c.member_values) {
    if (!is_architecture_key(v.key)) continue;
    const bool one = v.labels.empty() ? std::all_of(v.values.begin(), v.values.end(), [&](double x) { return x == v.values.front(); })
                                      : std::all_of(v.labels.begin(), v.labels.end(), [&](const std::string& x) { return x == v.labels.front(); });
    single = single && one && !std::count(c.grid.begin(), c.grid.end(), v.key);
  }
  if (!single) return;
  c.model = member_model(c, c.swarm.first_member);
  c.member_values.erase(std::remove_if(c.member_values.begin(), c.member_values.end(),
                                       [](const MemberValues& v) { return is_architecture_key(v.key); }),
                        c.member_values.end());
}

// Per-member architectures (train/architectures.h): not on the output layer, whose units the
// data fix, and not with what needs every member's state in one array or one member numbering.
void check_architecture_keys(const Field& root, const Config& c) {
  const std::string out = "model.layers." + std::to_string(c.model.layers.size() - 1) + ".";
  const Field model = root["model"];
  for (const char* k : {"units", "activation"})
    if (find_member_values(c, out + k))
      model["layers"].items().back()[k].fail(std::string("the output layer's ") + k +
                                             " cannot vary per member (the data and the loss fix them); vary the "
                                             "hidden layers' (model.hidden, or model.layers.<i>." + k + ")");
  const char* what = "members of different architectures (per-member model keys)";
  if (c.search.type == SearchConfig::Type::Pbt)
    root["search"].fail(std::string("PBT copies a member's parameters into another's, but this swarm has ") + what +
                        ", whose parameters do not fit each other; use search: {type: halving, ...}, or give every "
                        "member one architecture");
  if (c.data.per_member == PerMember::GroupBy)
    root["data"]["per_member"].fail(std::string("group_by trains one member per group, which does not combine yet with ") +
                                    what + "; give every member one architecture");
}

// Checks that involve more than one section.
void check_consistency(const Field& root, const Config& c) {
  const LayerConfig& last = c.model.layers.back();
  const Field units = root["model"]["layers"].items().back()["units"];
  if (c.data.sequence.enabled() && is_classification(c.loss.type))
    root["data"]["sequence"].fail(std::string("sequence targets are numbers (the next values of '") +
                                  c.data.sequence.target + "'), so they need a regression loss: "
                                  "set loss: mse, mae or huber (the loss is " + to_string(c.loss.type) + ")");
  if (is_classification(c.loss.type) && c.data.normalize_target != Normalize::None)
    root["data"]["normalize_target"].fail(std::string("scales regression targets, but the loss is ") +
                                          to_string(c.loss.type) + " (class labels); remove data.normalize_target");
  if (!is_classification(c.loss.type) && !c.data.sequence.enabled()) {
    const char* why = " keeps each class's share, so it needs class labels: a classification loss (cross_entropy "
                      "or bce); the loss is ";
    if (c.data.split.stratify) root["data"]["split"]["stratify"].fail(std::string("stratify") + why + to_string(c.loss.type));
    if (c.data.bootstrap_stratify)
      root["data"]["per_member"]["bootstrap"]["stratify"].fail(std::string("a stratified bootstrap") + why +
                                                               to_string(c.loss.type));
  }
  if (c.train.early_stopping.enabled())
    cfg::check_ranking_metric(root["train"]["early_stopping"]["metric"], c.train.early_stopping.metric, c);
  const InitFromConfig& w = c.model.init_from;
  const Field init_from = root["model"]["init_from"];
  const long long members = static_cast<long long>(c.swarm.first_member) + c.swarm.size;
  if (w.enabled() && !w.all && static_cast<long long>(w.members.size()) != members)
    init_from["members"].fail(
        "lists " + std::to_string(w.members.size()) + " source members, but the swarm has " + std::to_string(members) +
        " members (0.." + std::to_string(members - 1) + "): give one source member per member, in member order" +
        (c.swarm.first_member > 0 ? " (entries before swarm.first_member are not used)" : "") +
        ", or write members: all (member k starts from member k)");
  if (w.enabled() && (c.model.init_scale != 1.0 || find_member_values(c, "model.init_scale")))
    root["model"]["init_scale"].fail("scales random initial weights, but model.init_from starts every member from a "
                                     "trained run's parameters; remove one of the two");
  if (per_member_architecture(c)) check_architecture_keys(root, c);
  if (c.output.predictions == "ensemble" && c.data.per_member == PerMember::GroupBy)
    root["output"]["predictions"].fail("group_by has one member per group and no ensemble; its predictions are one "
                                       "per sample already (/predictions/<split>/own): use members or none");
  if (last.dropout > 0)
    root["model"]["layers"].items().back()["dropout"].fail(
        "dropout on the output layer would drop outputs; put it on the hidden layers before it");
  const Field loss = root["loss"];
  if (!c.loss.class_weights.empty() && static_cast<int>(c.loss.class_weights.size()) != last.units)
    loss["class_weights"].fail("gives " + std::to_string(c.loss.class_weights.size()) + " weights, but the output layer has " +
                               std::to_string(last.units) + " units (classes); give one weight per class");
  if (c.loss.pos_weight.size() > 1 && static_cast<int>(c.loss.pos_weight.size()) != last.units)
    loss["pos_weight"].fail("gives " + std::to_string(c.loss.pos_weight.size()) + " values, but the output layer has " +
                            std::to_string(last.units) + " units; give one number, or one per output");
  if (c.loss.type == LossType::CrossEntropy && last.units < 2)
    units.fail("the cross_entropy loss needs at least 2 output units (one per class), got " +
               std::to_string(last.units) + "; for a single output use loss: bce");
}

// Sizes that overflow the types that count or index them, refused before any data are read.
// (Whether a run fits in the machine's memory is checked before it starts: train/trainer.h.)
void check_sizes(const Field& root, const Config& c) {
  constexpr std::int64_t kArrays = 4 * sizeof(float);  // parameters, gradients, 2 optimizer states
  const std::int64_t S = c.swarm.size;
  // Parameters per member that do not depend on the data: each layer's weights from the layer
  // before it, recurrent weights and biases (the first layer's inputs come from the data).
  const std::vector<Field> fields = root["model"]["layers"].items();
  std::int64_t params = 0;
  for (std::size_t i = 0; i < c.model.layers.size(); ++i) {
    const LayerConfig& l = c.model.layers[i];
    const std::int64_t G = static_cast<std::int64_t>(l.type == "lstm" ? 4 : l.type == "gru" ? 3 : 1) * l.units;
    params = sat_add(params, l.type == "gru" ? 2 * G : G);
    if (l.type != "dense") params = sat_add(params, sat_mul(l.units, G));
    if (i > 0) params = sat_add(params, sat_mul(c.model.layers[i - 1].units, G));
    if (sat_mul(params, kArrays) == kSaturated)
      fields[i]["units"].fail("the layers up to this one have more parameters per member than can be counted "
                              "(their parameters, gradients and optimizer state would take more than 8 EiB); use fewer units");
  }
  if (sat_mul(params, kArrays, S) == kSaturated)
    root["swarm"]["size"].fail(std::to_string(S) + " members of " + std::to_string(params) +
                               " parameters or more each need more than 8 EiB for their parameters, gradients and "
                               "optimizer state; reduce swarm.size or the layers' units");
  // Per-member histories: train and validation loss and accuracy for every epoch.
  if (sat_mul(S, c.train.epochs, 4 * sizeof(float)) == kSaturated)
    root["train"]["epochs"].fail(std::to_string(c.train.epochs) + " epochs of loss history for " + std::to_string(S) +
                                 " members need more than 8 EiB; reduce train.epochs or swarm.size");
  const SourceConfig& src = c.data.source;
  if (src.type == "random_walk" && static_cast<std::int64_t>(src.walk.series) * src.walk.length > kIntMax)
    root["data"]["source"].fail(std::to_string(src.walk.series) + " series x " + std::to_string(src.walk.length) +
                                " steps make " + std::to_string(static_cast<std::int64_t>(src.walk.series) * src.walk.length) +
                                " rows, more than the " + std::to_string(kIntMax) +
                                " a data set can have; reduce data.source.series or data.source.length");
  const SequenceConfig& q = c.data.sequence;
  if (q.enabled() && static_cast<std::int64_t>(q.window) * static_cast<std::int64_t>(q.features.size()) > kIntMax)
    root["data"]["sequence"]["window"].fail(
        std::to_string(q.window) + " steps x " + std::to_string(q.features.size()) + " features make more than " +
        std::to_string(kIntMax) + " input values per sample; reduce data.sequence.window");
}

// Every error that does not make later checks meaningless is kept (Field::keep) and all are
// reported together (Origin::throw_kept): the sections are read one by one, each key of them
// on its own (Field::get, check_keys), so a typo in one leaves the others checked. What stops
// early: a YAML syntax error (parse_document), a --set that cannot be applied, and a section
// that is missing or not a map, which ends the reading of that section only. The keys read
// with other sections (grid, search, ensemble) wait for the sections they depend on to be
// read right, and the checks across sections (check_consistency, check_sizes) for all of them.
Config read_config(const Field& root, const std::vector<std::string>& data_dirs) {
  root.check_keys(section_keys(""));
  Config c;
  const auto section = [&](const char* key, const std::function<void(const Field&)>& read) {
    const Field f = root[key];
    f.keep([&] { read(f); });
  };
  section("name", [&](const Field& f) { read_name(f, c.name); });
  root.get("seed", c.seed);
  section("device", [&](const Field& f) { read_device(f, c); });
  root.get("device_precision", c.device_precision, {DevicePrecision::Fp32, DevicePrecision::Tf32});
  section("swarm", [&](const Field& f) {
    read_swarm(f, c.swarm);
    read_group_swarm(root, c.swarm);
  });
  section("model", [&](const Field&) { read_model(root.required("model"), c, data_dirs); });
  section("loss", [&](const Field& f) { read_loss(f, c.loss); });
  section("optimizer", [&](const Field& f) { read_optimizer(f, c); });
  section("schedule", [&](const Field& f) { read_schedule(f, c.schedule); });
  section("data", [&](const Field&) { cfg::read_data(root.required("data"), c.data, data_dirs); });
  section("train", [&](const Field& f) { read_train(f, c.train); });
  section("output", [&](const Field& f) { read_output(f, c); });
  if (c.train.checkpoint.path.empty()) c.train.checkpoint.path = default_checkpoint_path(c.output.path);
  // grid, search and ensemble read the model's layers, the swarm's size, the loss and the data's
  // per_member: with an error kept there, their checks would judge defaults.
  bool depended_on_ok = true;
  for (const char* key : {"swarm", "model", "loss", "data"}) depended_on_ok = depended_on_ok && !root[key].has_errors();
  if (depended_on_ok) {
    section("grid", [&](const Field&) {
      cfg::read_grid(root, c);
      fold_single_architecture(c);
    });
    section("search", [&](const Field&) { cfg::read_search(root, c); });
    section("ensemble", [&](const Field&) { cfg::read_ensemble(root, c); });
  }
  if (!root["data"]["normalize_target"].present() && !is_classification(c.loss.type) && !c.data.sequence.enabled())
    c.data.normalize_target = Normalize::Standard;  // regression targets are scaled unless told otherwise
  root.origin().throw_kept();
  check_consistency(root, c);
  check_sizes(root, c);
  return c;
}

}  // namespace

std::string run_file_stem(const std::string& path) {
  const std::string ext = ".h5";
  const bool h5 = path.size() > ext.size() && path.compare(path.size() - ext.size(), ext.size(), ext) == 0;
  return h5 ? path.substr(0, path.size() - ext.size()) : path;
}

std::string default_checkpoint_path(const std::string& output) {
  return io::with_suffix(run_file_stem(output), ".ckpt.h5");  // fits 255 bytes for any run file name
}

Config parse_config(const std::string& yaml_text, const std::string& origin,
                    const std::vector<Override>& overrides, const std::optional<std::vector<std::string>>& data_dirs) {
  const cfg::Origin where{origin, overrides, true, {}};
  YAML::Node root = cfg::parse_document(yaml_text, where);
  const Field top(where, root, "", root.Mark());
  if (!root.IsMap()) top.fail_type("a map of settings (name, model, data, ...) at the top level");
  try {
    cfg::apply_overrides(root, overrides);
    const std::string origin_dir = std::filesystem::path(origin).parent_path().string();
    Config c = read_config(top, data_dirs.value_or(origin_dir.empty() ? std::vector<std::string>{""}
                                                                      : std::vector<std::string>{"", origin_dir}));
    c.source_file = origin;
    return c;
  } catch (const YAML::Exception& e) {  // a yaml-cpp surprise still names the file
    throw ConfigError(where.where(e.mark, "") + ": " + e.msg);
  }
}

Config load_config(const std::string& path, const std::vector<Override>& overrides) {
  const std::string text = cfg::read_config_file(path);
  cfg::check_not_data(path, text);
  return parse_config(text, path, overrides);
}

}  // namespace tn
