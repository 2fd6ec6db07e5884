// The resolved configuration as YAML (to_yaml), and the YAML names of the config enums.

#include <algorithm>

#include "config/yaml_util.h"

namespace tn {

const char* to_string(DevicePrecision p) { return p == DevicePrecision::Tf32 ? "tf32" : "fp32"; }

const char* to_string(ScheduleType s) {
  switch (s) {
    case ScheduleType::Constant: return "constant";
    case ScheduleType::Step: return "step";
    case ScheduleType::Cosine: return "cosine";
    case ScheduleType::Linear: return "linear";
  }
  return "?";
}

const char* to_string(PerMember p) {
  switch (p) {
    case PerMember::Shared: return "shared";
    case PerMember::Bootstrap: return "bootstrap";
    case PerMember::Subsample: return "subsample";
    case PerMember::Shards: return "shards";
    case PerMember::GroupBy: return "group_by";
  }
  return "?";
}

const char* to_string(Normalize n) {
  switch (n) {
    case Normalize::None: return "none";
    case Normalize::Standard: return "standard";
    case Normalize::MinMax: return "minmax";
    case Normalize::Robust: return "robust";
    case Normalize::Log1p: return "log1p";
  }
  return "?";
}

const char* to_string(Encoding e) {
  switch (e) {
    case Encoding::Auto: return "auto";
    case Encoding::Numeric: return "numeric";
    case Encoding::OneHot: return "onehot";
    case Encoding::Ordinal: return "ordinal";
  }
  return "?";
}

const char* to_string(SearchConfig::Type t) {
  switch (t) {
    case SearchConfig::Type::None: return "none";
    case SearchConfig::Type::Halving: return "halving";
    case SearchConfig::Type::Pbt: return "pbt";
  }
  return "?";
}

const char* to_string(TensorBoardRuns r) {
  switch (r) {
    case TensorBoardRuns::Auto: return "auto";
    case TensorBoardRuns::Members: return "members";
    case TensorBoardRuns::Groups: return "groups";
    case TensorBoardRuns::Swarm: return "swarm";
  }
  return "?";
}

const char* to_string(Missing m) {
  switch (m) {
    case Missing::Error: return "error";
    case Missing::DropRows: return "drop_rows";
    case Missing::Mean: return "mean";
    case Missing::Median: return "median";
  }
  return "?";
}

const char* to_string(SeriesTransform t) {
  switch (t) {
    case SeriesTransform::None: return "none";
    case SeriesTransform::Diff: return "diff";
    case SeriesTransform::LogDiff: return "log_diff";
    case SeriesTransform::PctChange: return "pct_change";
  }
  return "?";
}

const char* to_string(SeriesScale s) { return s == SeriesScale::Window ? "window" : "series"; }

namespace cfg {
const char* to_string(LayerConfig::Init init) {
  switch (init) {
    case LayerConfig::Init::Auto: return "auto";
    case LayerConfig::Init::He: return "he";
    case LayerConfig::Init::Glorot: return "glorot";
  }
  return "?";
}
}  // namespace cfg

namespace {

using cfg::exact_text;

// Key/value writers: one overload per value type, so every value is emitted as text.
void kv(YAML::Emitter& e, const char* key, const std::string& v) {
  e << YAML::Key << key << YAML::Value << v;
}
void kv(YAML::Emitter& e, const char* key, const char* v) { kv(e, key, std::string(v)); }
void kv(YAML::Emitter& e, const char* key, double v) { kv(e, key, exact_text(v)); }
void kv(YAML::Emitter& e, const char* key, float v) { kv(e, key, exact_text(v)); }
void kv(YAML::Emitter& e, const char* key, int v) { kv(e, key, std::to_string(v)); }
void kv(YAML::Emitter& e, const char* key, std::uint64_t v) { kv(e, key, std::to_string(v)); }
void kv(YAML::Emitter& e, const char* key, bool v) { kv(e, key, v ? "true" : "false"); }

void begin(YAML::Emitter& e, const char* key) {
  e << YAML::Key << key << YAML::Value << YAML::BeginMap;
}

// A key that may hold a value per member: the per-member form as it was given, else the number.
void kv_member(YAML::Emitter& e, const char* key, double v, const Config& c, const std::string& full_key) {
  const MemberValues* mv = find_member_values(c, full_key);
  if (!mv) return kv(e, key, v);
  e << YAML::Key << key << YAML::Value << YAML::Flow << YAML::BeginMap;
  if (mv->form == MemberValues::Form::Values) {
    e << YAML::Key << "values" << YAML::Value << YAML::Flow << YAML::BeginSeq;
    for (double x : mv->values) e << exact_text(x);
    e << YAML::EndSeq;
  } else {
    e << YAML::Key << (mv->form == MemberValues::Form::Logspace ? "logspace" : "linspace") << YAML::Value
      << YAML::Flow << YAML::BeginSeq << exact_text(mv->lo) << exact_text(mv->hi) << YAML::EndSeq;
    kv(e, "num", mv->num);
  }
  e << YAML::EndMap;
}

// A per-member architecture key with text values: {values: [relu, tanh]}, or model.hidden's
// {values: [[16], [64, 64]]}.
void kv_labels(YAML::Emitter& e, const char* key, const MemberValues& mv) {
  e << YAML::Key << key << YAML::Value << YAML::Flow << YAML::BeginMap;
  e << YAML::Key << "values" << YAML::Value << YAML::Flow << YAML::BeginSeq;
  for (const std::string& label : mv.labels) {
    if (mv.key != "model.hidden") {
      e << label;
      continue;
    }
    e << YAML::Flow << YAML::BeginSeq;
    for (int u : hidden_units(label)) e << u;
    e << YAML::EndSeq;
  }
  e << YAML::EndSeq << YAML::EndMap;
}

void emit_model(YAML::Emitter& e, const ModelConfig& m, const Config& c) {
  begin(e, "model");
  kv_member(e, "init_scale", m.init_scale, c, "model.init_scale");
  if (const MemberValues* h = find_member_values(c, "model.hidden")) kv_labels(e, "hidden", *h);
  if (m.init_from.enabled()) {
    e << YAML::Key << "init_from" << YAML::Value << YAML::Flow << YAML::BeginMap;
    kv(e, "path", m.init_from.path);
    if (m.init_from.all) {
      kv(e, "members", "all");
    } else {
      e << YAML::Key << "members" << YAML::Value << YAML::Flow << YAML::BeginSeq;
      for (int k : m.init_from.members) e << k;
      e << YAML::EndSeq;
    }
    e << YAML::EndMap;
  }
  e << YAML::Key << "layers" << YAML::Value << YAML::BeginSeq;
  for (std::size_t i = 0; i < m.layers.size(); ++i) {
    const LayerConfig& l = m.layers[i];
    const std::string prefix = "model.layers." + std::to_string(i) + ".";
    e << YAML::Flow << YAML::BeginMap;
    if (const MemberValues* t = find_member_values(c, prefix + "type")) kv_labels(e, "type", *t);
    else kv(e, "type", l.type);
    if (const MemberValues* u = find_member_values(c, prefix + "units")) kv_member(e, "units", u->values.front(), c, u->key);
    else kv(e, "units", l.units);
    if (l.type == "dense") {
      if (const MemberValues* a = find_member_values(c, prefix + "activation")) kv_labels(e, "activation", *a);
      else kv(e, "activation", to_string(l.activation));
      const MemberValues* a = find_member_values(c, prefix + "activation");
      if (l.activation == Activation::LeakyRelu ||
          (a && std::count(a->labels.begin(), a->labels.end(), "leaky_relu")))
        kv(e, "leaky_slope", l.leaky_slope);
      if (l.dropout > 0) kv(e, "dropout", l.dropout);  // written only when used
    } else {
      kv(e, "return_sequences", l.return_sequences);
      const MemberValues* t = find_member_values(c, prefix + "type");
      if (l.type == "lstm" || (t && std::count(t->labels.begin(), t->labels.end(), "lstm")))
        kv(e, "forget_bias", l.forget_bias);
    }
    kv(e, "init", cfg::to_string(l.init));
    e << YAML::EndMap;
  }
  e << YAML::EndSeq << YAML::EndMap;
}

void emit_loss(YAML::Emitter& e, const LossConfig& l) {
  begin(e, "loss");
  kv(e, "type", to_string(l.type));
  if (l.type == LossType::Huber) kv(e, "delta", l.huber_delta);
  const auto numbers = [&](const char* key, const std::vector<double>& v) {
    e << YAML::Key << key << YAML::Value << YAML::Flow << YAML::BeginSeq;
    for (double x : v) e << exact_text(x);
    e << YAML::EndSeq;
  };
  if (l.balanced) kv(e, "class_weights", "balanced");
  else if (!l.class_weights.empty()) numbers("class_weights", l.class_weights);
  if (!l.pos_weight.empty()) numbers("pos_weight", l.pos_weight);
  e << YAML::EndMap;
}

void emit_optimizer(YAML::Emitter& e, const OptimizerConfig& o, const Config& c) {
  const auto member = [&](const char* key, double v) { kv_member(e, key, v, c, std::string("optimizer.") + key); };
  const bool sgd = o.type == OptimizerType::Sgd, rms = o.type == OptimizerType::RmsProp;
  begin(e, "optimizer");
  kv(e, "type", to_string(o.type));
  member("lr", o.lr);
  if (!sgd && !rms) {
    member("beta1", o.beta1);
    member("beta2", o.beta2);
  }
  if (!sgd) member("eps", o.eps);
  if (rms) member("alpha", o.alpha);
  if (sgd || rms) member("momentum", o.momentum);
  if (sgd) kv(e, "nesterov", o.nesterov);
  member("weight_decay", o.weight_decay);
  if (o.l1 != 0.0 || find_member_values(c, "optimizer.l1")) member("l1", o.l1);  // written only when used
  kv(e, "grad_clip", o.grad_clip);
  e << YAML::EndMap;
}

void emit_schedule(YAML::Emitter& e, const ScheduleConfig& s) {
  begin(e, "schedule");
  kv(e, "type", to_string(s.type));
  kv(e, "warmup_epochs", s.warmup_epochs);
  if (s.type == ScheduleType::Step) {
    kv(e, "step_every", s.step_every);
    kv(e, "gamma", s.gamma);
  }
  if (s.type == ScheduleType::Cosine || s.type == ScheduleType::Linear) kv(e, "min_lr", s.min_lr);
  e << YAML::EndMap;
}

// Keys `a` and `b` when set (the optional test pair of a file source).
void kv_pair(YAML::Emitter& e, const char* a, const std::string& va, const char* b,
             const std::string& vb) {
  if (va.empty()) return;
  kv(e, a, va);
  kv(e, b, vb);
}

void emit_csv(YAML::Emitter& e, const SourceConfig& s) {
  kv(e, "path", s.path);
  e << YAML::Key << "features" << YAML::Value << YAML::Flow;
  if (!s.features_from.empty()) {
    e << YAML::BeginMap;
    kv(e, "from", s.features_from);
    kv(e, "to", s.features_to);
    e << YAML::EndMap;
  } else {
    e << YAML::BeginSeq;
    for (const std::string& f : s.features) e << f;
    e << YAML::EndSeq;
  }
  kv(e, "target", s.target);
}

// The csv dialect keys that differ from the defaults (auto delimiter, '"', no comments, a header).
void emit_dialect(YAML::Emitter& e, const SourceConfig& s) {
  const auto text = [](char c) { return c == '\t' ? std::string("tab") : std::string(1, c); };
  if (s.delimiter != '\0') kv(e, "delimiter", text(s.delimiter));
  if (s.quote != '"') kv(e, "quote", text(s.quote));
  if (s.comment != '\0') kv(e, "comment", text(s.comment));
  if (!s.columns.empty()) {
    e << YAML::Key << "columns" << YAML::Value << YAML::Flow << YAML::BeginSeq;
    for (const std::string& c : s.columns) e << c;
    e << YAML::EndSeq;
  }
}

void kv_interval(YAML::Emitter& e, const char* key, double lo, double hi) {
  e << YAML::Key << key << YAML::Value << YAML::Flow << YAML::BeginSeq << exact_text(lo) << exact_text(hi)
    << YAML::EndSeq;
}

void emit_random_walk(YAML::Emitter& e, const SourceConfig& s) {
  const RandomWalkConfig& w = s.walk;
  kv(e, "series", w.series);
  kv(e, "length", w.length);
  kv(e, "seed", s.seed);
  kv_interval(e, "drift", w.drift_lo, w.drift_hi);
  kv_interval(e, "volatility", w.volatility_lo, w.volatility_hi);
  kv(e, "season_period", w.season_period);
  kv_interval(e, "season_amplitude", w.season_lo, w.season_hi);
  kv_interval(e, "start_price", w.start_lo, w.start_hi);
}

void emit_sequence(YAML::Emitter& e, const SequenceConfig& q) {
  e << YAML::Key << "sequence" << YAML::Value << YAML::Flow << YAML::BeginMap;
  kv(e, "window", q.window);
  kv(e, "horizon", q.horizon);
  kv(e, "stride", q.stride);
  kv(e, "target", q.target);
  e << YAML::Key << "features" << YAML::Value << YAML::Flow << YAML::BeginSeq;
  for (const std::string& f : q.features) e << f;
  e << YAML::EndSeq;
  if (!q.time.empty()) kv(e, "time", q.time);
  kv(e, "transform", to_string(q.transform));
  kv(e, "scale", to_string(q.scale));
  if (q.season > 0) kv(e, "season", q.season);
  e << YAML::EndMap;
}

// With sequence data a csv source has only its path (the columns are in data.sequence).
void emit_source(YAML::Emitter& e, const SourceConfig& s, bool sequence) {
  begin(e, "source");
  kv(e, "type", s.type);
  if (s.type == "csv" && sequence) {
    kv(e, "path", s.path);
    emit_dialect(e, s);
  } else if (s.type == "csv") {
    emit_csv(e, s);
    emit_dialect(e, s);
  } else if (s.type == "idx") {
    kv(e, "images", s.images);
    kv(e, "labels", s.labels);
    kv_pair(e, "test_images", s.test_images, "test_labels", s.test_labels);
  } else if (s.type == "hdf5") {
    kv(e, "path", s.path);
    kv(e, "x_dataset", s.x_dataset);
    kv(e, "y_dataset", s.y_dataset);
    kv_pair(e, "test_x_dataset", s.test_x_dataset, "test_y_dataset", s.test_y_dataset);
  } else if (s.type == "npy") {
    kv(e, "x_path", s.x_path);
    kv(e, "y_path", s.y_path);
    kv_pair(e, "test_x_path", s.test_x_path, "test_y_path", s.test_y_path);
  } else if (s.type == "random_walk") {
    emit_random_walk(e, s);
  } else if (s.type == "arrays") {  // in memory: nothing more to say
  } else {  // generators
    kv(e, "n", s.n);
    kv(e, "noise", s.noise);
    if (s.type == "spirals") kv(e, "rotations", s.rotations);
    kv(e, "seed", s.seed);
  }
  e << YAML::EndMap;
}

// A mode name, or {bootstrap|subsample: {fraction: f}} when f != 1 (or stratified), or
// {group_by: COLUMN}.
void emit_per_member(YAML::Emitter& e, const DataConfig& d) {
  const bool fraction = ((d.per_member == PerMember::Bootstrap ||
                          d.per_member == PerMember::Subsample) && d.member_fraction != 1.0) ||
                        (d.per_member == PerMember::Bootstrap && d.bootstrap_stratify);
  if (!fraction && d.per_member != PerMember::GroupBy) {
    kv(e, "per_member", to_string(d.per_member));
    return;
  }
  e << YAML::Key << "per_member" << YAML::Value << YAML::Flow << YAML::BeginMap;
  if (fraction) {
    begin(e, to_string(d.per_member));
    kv(e, "fraction", d.member_fraction);
    if (d.bootstrap_stratify) kv(e, "stratify", true);
    e << YAML::EndMap;
  } else {
    kv(e, "group_by", d.group_by);
  }
  e << YAML::EndMap;
}

void emit_data(YAML::Emitter& e, const DataConfig& d) {
  begin(e, "data");
  emit_source(e, d.source, d.sequence.enabled());
  begin(e, "split");
  kv(e, "train", d.split.train);
  kv(e, "val", d.split.val);
  kv(e, "test", d.split.test);
  if (!d.sequence.enabled()) kv(e, "seed", d.split.seed);  // sequence splits are chronological
  if (d.split.stratify) kv(e, "stratify", true);
  e << YAML::EndMap;
  emit_per_member(e, d);
  kv(e, "normalize", to_string(d.normalize));
  if (d.per_member == PerMember::GroupBy) kv(e, "normalize_per_member", d.normalize_per_member);
  // Always named for non-sequence data: its default depends on the loss, and a run file's
  // /config without it reads as none (runs from before the default).
  if (!d.sequence.enabled()) kv(e, "normalize_target", to_string(d.normalize_target));
  if (d.missing != Missing::Error) kv(e, "missing", to_string(d.missing));
  if (!d.drop.empty()) {
    e << YAML::Key << "drop" << YAML::Value << YAML::Flow << YAML::BeginSeq;
    for (const std::string& c : d.drop) e << c;
    e << YAML::EndSeq;
  }
  if (!d.feature_settings.empty()) {
    begin(e, "features");
    for (const FeatureSetting& f : d.feature_settings) {
      e << YAML::Key << f.column << YAML::Value << YAML::Flow << YAML::BeginMap;
      kv(e, "encoding", to_string(f.encoding));
      e << YAML::EndMap;
    }
    e << YAML::EndMap;
  }
  if (d.sequence.enabled()) emit_sequence(e, d.sequence);
  e << YAML::EndMap;
}

void emit_train(YAML::Emitter& e, const TrainConfig& t) {
  begin(e, "train");
  kv(e, "epochs", t.epochs);
  kv(e, "batch_size", t.batch_size);
  kv(e, "shuffle", t.shuffle);
  kv(e, "log_every", t.log_every);
  if (t.early_stopping.enabled()) {
    begin(e, "early_stopping");
    kv(e, "metric", t.early_stopping.metric);
    kv(e, "patience", t.early_stopping.patience);
    kv(e, "min_delta", t.early_stopping.min_delta);
    kv(e, "restore_best", t.early_stopping.restore_best);
    e << YAML::EndMap;
  }
  begin(e, "checkpoint");
  kv(e, "every_epochs", t.checkpoint.every_epochs);
  kv(e, "path", t.checkpoint.path);
  e << YAML::EndMap;
  if (!t.tensorboard.empty()) {  // only when set: the configs of runs without logs stay as they were
    kv(e, "tensorboard", t.tensorboard);
    kv(e, "tensorboard_runs", to_string(t.tensorboard_runs));
  }
  e << YAML::EndMap;
}

void emit_search(YAML::Emitter& e, const SearchConfig& s) {
  if (!s.enabled()) return;
  begin(e, "search");
  kv(e, "type", to_string(s.type));
  kv(e, "metric", s.metric);
  if (s.type == SearchConfig::Type::Halving) {
    e << YAML::Key << "rungs" << YAML::Value << YAML::Flow << YAML::BeginSeq;
    for (int r : s.rungs) e << r;
    e << YAML::EndSeq;
    kv(e, "keep", s.keep);
  } else {
    kv(e, "every_epochs", s.every_epochs);
    kv(e, "quantile", s.quantile);
    kv(e, "resample_probability", s.resample_probability);
    begin(e, "perturb");
    for (const SearchConfig::Perturb& p : s.perturb) {
      e << YAML::Key << p.key << YAML::Value << YAML::Flow << YAML::BeginSeq;
      for (double x : p.factors) e << exact_text(x);
      e << YAML::EndSeq;
    }
    e << YAML::EndMap;
  }
  e << YAML::EndMap;
}

void emit_ensemble(YAML::Emitter& e, const EnsembleConfig& x) {
  if (!x.enabled()) return;
  begin(e, "ensemble");
  kv(e, "select", x.select);
  if (x.k > 0) kv(e, "k", x.k);
  if (!x.metric.empty()) kv(e, "metric", x.metric);
  e << YAML::EndMap;
}

}  // namespace

std::string to_yaml(const Config& c) {
  YAML::Emitter e;
  e << YAML::BeginMap;
  kv(e, "name", c.name);
  kv(e, "seed", c.seed);
  kv(e, "device", c.device == DeviceKind::Cuda && c.device_index >= 0
                      ? "cuda:" + std::to_string(c.device_index)
                      : std::string(to_string(c.device)));
  kv(e, "device_precision", std::string(to_string(c.device_precision)));
  begin(e, "swarm");
  kv(e, "size", c.swarm.size);
  kv(e, "first_member", c.swarm.first_member);
  e << YAML::EndMap;
  emit_model(e, c.model, c);
  emit_loss(e, c.loss);
  emit_optimizer(e, c.optimizer, c);
  emit_schedule(e, c.schedule);
  emit_data(e, c.data);
  emit_train(e, c.train);
  emit_search(e, c.search);
  emit_ensemble(e, c.ensemble);
  begin(e, "output");
  kv(e, "path", c.output.path);
  if (c.output.predictions != "members") kv(e, "predictions", c.output.predictions);  // configs before it read the same
  e << YAML::EndMap;
  if (!c.grid.empty()) {
    e << YAML::Key << "grid" << YAML::Value << YAML::Flow << YAML::BeginSeq;
    for (const std::string& k : c.grid) e << k;
    e << YAML::EndSeq;
  }
  e << YAML::EndMap;
  return std::string(e.c_str()) + "\n";
}

}  // namespace tn
