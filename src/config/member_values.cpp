// Per-member hyperparameters: reading, grids, and the per-member optimizer/init values.
#include "config/member_values.h"

#include <algorithm>
#include <charconv>
#include <climits>
#include <cmath>
#include <cstdio>
#include <string>

#include "util/suggest.h"

namespace tn {

const std::vector<std::string>& member_value_keys() {
  static const std::vector<std::string> keys = {"optimizer.lr",    "optimizer.weight_decay", "optimizer.momentum",
                                                "optimizer.beta1", "optimizer.beta2",        "optimizer.eps",
                                                "optimizer.alpha", "model.init_scale", "optimizer.l1"};
  return keys;
}

const std::vector<std::string>& ranking_metrics() {
  static const std::vector<std::string> metrics = {"val_loss", "val_accuracy", "train_loss", "train_accuracy"};
  return metrics;
}

const MemberValues* find_member_values(const Config& c, const std::string& key) {
  for (const MemberValues& v : c.member_values)
    if (v.key == key) return &v;
  return nullptr;
}

double MemberValues::value(long long i) const {
  if (form == Form::Values) return values[static_cast<std::size_t>(i)];
  if (i <= 0) return lo;
  if (i >= num - 1) return hi;
  const double t = static_cast<double>(i) / (num - 1);
  const double x = form == Form::Logspace ? std::exp(std::log(lo) + t * (std::log(hi) - std::log(lo)))
                                          : lo + t * (hi - lo);
  // As printed with %.6g and read back (to_chars with a precision is printf's %g).
  char buf[32];
  const auto printed = std::to_chars(buf, buf + sizeof buf, x, std::chars_format::general, 6);
  double rounded = x;
  std::from_chars(buf, printed.ptr, rounded);
  return rounded;
}

std::string MemberValues::text(long long member) const {
  const double v = at(member);
  if (!labels.empty()) return labels[static_cast<std::size_t>(v)];
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

bool is_architecture_key(const std::string& key) {
  return key == "model.hidden" || key.rfind("model.layers.", 0) == 0;
}

bool per_member_architecture(const Config& c) {
  return std::any_of(c.member_values.begin(), c.member_values.end(),
                     [](const MemberValues& v) { return is_architecture_key(v.key); });
}

int hidden_dense_begin(const ModelConfig& m) {
  int i = 0;
  while (i < static_cast<int>(m.layers.size()) && m.layers[static_cast<std::size_t>(i)].type != "dense") ++i;
  return i;
}

std::string hidden_label(const std::vector<int>& units) {
  std::string s = "[";
  for (std::size_t i = 0; i < units.size(); ++i) s += (i ? ", " : "") + std::to_string(units[i]);
  return s + "]";
}

std::vector<int> hidden_units(const std::string& label) {
  if (label.size() < 2 || label.front() != '[' || label.back() != ']')
    throw std::invalid_argument("not a list of units: '" + label + "'");
  std::vector<int> units;
  std::size_t at = 1;
  while (at < label.size() - 1) {
    const std::size_t end = std::min(label.find(',', at), label.size() - 1);
    units.push_back(std::stoi(label.substr(at, end - at)));
    at = end + 1;
  }
  return units;
}

ModelConfig member_model(const Config& c, long long member) {
  ModelConfig m = c.model;
  const std::string hidden_key = "model.hidden";
  for (const MemberValues& v : c.member_values) {
    if (!is_architecture_key(v.key) || v.key == hidden_key) continue;
    // model.layers.<i>.<field>
    const std::string rest = v.key.substr(std::string("model.layers.").size());
    const std::size_t dot = rest.find('.');
    LayerConfig& l = m.layers.at(static_cast<std::size_t>(std::stoi(rest.substr(0, dot))));
    const std::string field = rest.substr(dot + 1);
    if (field == "units") {
      l.units = static_cast<int>(v.at(member));
    } else if (field == "type") {
      l.type = v.text(member);
    } else if (field == "activation") {
      const std::string name = v.text(member);
      for (Activation a : cfg::layer_activations())
        if (name == to_string(a)) l.activation = a;
    }
  }
  if (const MemberValues* h = find_member_values(c, hidden_key)) {
    const int first = hidden_dense_begin(m);
    const LayerConfig tmpl = m.layers[static_cast<std::size_t>(first)];
    const LayerConfig out = m.layers.back();
    m.layers.resize(static_cast<std::size_t>(first));
    for (int u : hidden_units(h->text(member))) {
      m.layers.push_back(tmpl);
      m.layers.back().units = u;
    }
    m.layers.push_back(out);
  }
  return m;
}

std::string architecture_text(const ModelConfig& m) {
  std::string s;
  for (std::size_t i = 0; i < m.layers.size(); ++i) {
    const LayerConfig& l = m.layers[i];
    s += (i ? ", " : "") + l.type + " " + std::to_string(l.units);
    if (l.type == "dense" && i + 1 < m.layers.size()) s += std::string(" ") + to_string(l.activation);
  }
  return s;
}

double* optimizer_field(OptimizerConfig& o, const std::string& key) {
  if (key == "optimizer.lr") return &o.lr;
  if (key == "optimizer.weight_decay") return &o.weight_decay;
  if (key == "optimizer.l1") return &o.l1;
  if (key == "optimizer.momentum") return &o.momentum;
  if (key == "optimizer.beta1") return &o.beta1;
  if (key == "optimizer.beta2") return &o.beta2;
  if (key == "optimizer.eps") return &o.eps;
  if (key == "optimizer.alpha") return &o.alpha;
  return nullptr;
}

OptimizerConfig member_optimizer(const Config& c, long long member) {
  OptimizerConfig o = c.optimizer;
  for (const MemberValues& v : c.member_values)
    if (double* field = optimizer_field(o, v.key)) *field = v.at(member);
  return o;
}

double member_init_scale(const Config& c, long long member) {
  const MemberValues* v = find_member_values(c, "model.init_scale");
  return v ? v->at(member) : c.model.init_scale;
}

namespace cfg {
namespace {

// logspace: {exponents: [a, b], base: B}: NumPy's np.logspace(a, b, num, base=B), that is
// the values B^a .. B^b (base 10 unless given).
void read_exponents(const Field& f, MemberValues& mv) {
  f.check_keys(section_keys("(logspace)"));
  double base = 10;
  f.get("base", base, Range::above(0));
  if (base == 1) f["base"].fail("must not be 1 (every value would be 1)");
  const Field e = f.required("exponents");
  const std::vector<Field> items = e.node().IsSequence() ? e.items() : std::vector<Field>{};
  if (items.size() != 2) e.fail_type("[from, to], two exponents like [-4, -1]");
  const Range finite = Range::between(-300, 300);
  mv.lo = std::pow(base, items[0].number(finite));
  mv.hi = std::pow(base, items[1].number(finite));
  if (!(mv.lo > 0 && mv.hi > 0 && std::isfinite(mv.lo) && std::isfinite(mv.hi)))
    e.fail("base^exponent must be a positive finite number");
}

std::string fmt_number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

// The first value of a linspace or logspace outside `r`, or -1. The ends are exact; the values
// between them run monotonically (rounding to 6 digits keeps their order), so within the
// allowed interval they form one run, and a binary search finds where it ends.
long long first_outside(const MemberValues& mv, const Range& r) {
  const long long n = mv.count();
  const auto outside = [&](long long i) { return !r.contains(mv.value(i)); };
  if (outside(0)) return 0;
  if (n > 2) {
    if (outside(1)) return 1;
    if (outside(n - 2)) {
      long long in = 1, out = n - 2;
      while (out - in > 1) {
        const long long mid = in + (out - in) / 2;
        (outside(mid) ? out : in) = mid;
      }
      return out;
    }
  }
  return n > 1 && outside(n - 1) ? n - 1 : -1;
}

// Indices of the first two and the last two values, in order and without repeats: the
// smallest and the largest value are among them (see first_outside).
std::vector<long long> extreme_indices(const MemberValues& mv) {
  const long long n = mv.count();
  std::vector<long long> idx;
  for (const long long i : {0ll, 1ll, n - 2, n - 1})
    if (i >= 0 && i < n && (idx.empty() || i > idx.back())) idx.push_back(i);
  return idx;
}

}  // namespace

const std::vector<Activation>& layer_activations() {
  static const std::vector<Activation> a = {Activation::Relu, Activation::LeakyRelu, Activation::Tanh,
                                            Activation::Sigmoid, Activation::Gelu, Activation::Identity};
  return a;
}

double smallest_value(const MemberValues& mv) {
  if (mv.form == MemberValues::Form::Values) return *std::min_element(mv.values.begin(), mv.values.end());
  double m = mv.value(0);  // monotonic: the smallest is at one end
  for (const long long i : extreme_indices(mv)) m = std::min(m, mv.value(i));
  return m;
}

void read_member_value(const Field& f, const std::string& key, double& scalar, Range r, Config& c) {
  if (!f.present()) return;
  if (!f.is_map()) {
    scalar = f.number(r);
    return;
  }
  f.check_keys(section_keys("(per-member values)"));
  MemberValues mv;
  mv.key = key;
  int forms = 0;
  for (const char* form : {"values", "linspace", "logspace"}) forms += f[form].present() ? 1 : 0;
  if (forms != 1)
    f.fail("give exactly one of values: [...], linspace: [from, to] or logspace: [from, to] "
           "(a value per member), or a plain number");
  if (Field v = f["values"]; v.present()) {
    if (f["num"].present()) f["num"].fail("num goes with linspace or logspace; values lists every value");
    for (const Field& item : v.items()) mv.values.push_back(item.number(r));
    if (mv.values.empty()) v.fail("must list at least one value");
  } else {
    const bool log = f["logspace"].present();
    const Field ends = log ? f["logspace"] : f["linspace"];
    mv.form = log ? MemberValues::Form::Logspace : MemberValues::Form::Linspace;
    if (log && ends.is_map()) {
      read_exponents(ends, mv);
    } else {
      const std::vector<Field> items = ends.items();
      if (items.size() != 2)
        ends.fail(log ? "expected [from, to], two positive numbers, or NumPy's exponents: {base: 10, exponents: [-4, -1]}"
                      : "expected [from, to], two numbers");
      const Range positive = Range::above(0);
      mv.lo = items[0].number(log ? positive : r);
      mv.hi = items[1].number(log ? positive : r);
    }
    mv.num = c.swarm.size;
    if (c.swarm.size_from_groups && !f["num"].present())
      f.fail("give num: with group_by and no swarm.size the swarm has one member per group, which is known "
             "only when the data are read");
    f.get("num", mv.num, 1);
    // The values are computed when members ask for them (MemberValues::value), not here.
    if (const long long i = first_outside(mv, r); i >= 0)
      ends.fail("value " + fmt_number(mv.value(i)) + " (number " + std::to_string(i) +
                ") is outside the allowed range " + r.describe());
  }
  scalar = mv.value(0);
  c.member_values.push_back(mv);
}

void read_grid(const Field& root, Config& c) {
  if (Field g = root["grid"]; g.present() && !g.node().IsNull()) {
    const std::vector<Field> items = g.items();
    if (items.size() < 2) g.fail("a grid combines at least two per-member keys, e.g. [optimizer.lr, optimizer.weight_decay]");
    for (const Field& item : items) {
      const std::string key = item.string();
      if (!find_member_values(c, key)) {
        std::vector<std::string> known = member_value_keys();
        known.push_back("model.hidden");
        for (const MemberValues& v : c.member_values) known.push_back(v.key);
        item.fail("'" + key + "' has no per-member values; give it as {values: [...]} (numbers also {linspace: [a, b], "
                  "num: N} or {logspace: [a, b], num: N}) first" +
                  (std::find(known.begin(), known.end(), key) != known.end() ? "" : did_you_mean(key, known)));
      }
      if (std::count(c.grid.begin(), c.grid.end(), key)) item.fail("'" + key + "' is listed twice");
      c.grid.push_back(key);
    }
    // First key slowest: stride of key i = product of the counts of the keys after it. A
    // member index is below 2^31, so a grid with more combinations could never be covered.
    long long stride = 1;
    for (auto it = c.grid.rbegin(); it != c.grid.rend(); ++it) {
      auto& mv = *std::find_if(c.member_values.begin(), c.member_values.end(),
                               [&](const MemberValues& v) { return v.key == *it; });
      mv.stride = stride;
      if (!__builtin_mul_overflow(stride, mv.count(), &stride) && stride <= INT_MAX) continue;
      std::string product;
      for (const std::string& key : c.grid)
        product += (product.empty() ? "" : " x ") + std::to_string(find_member_values(c, key)->count()) + " (" + key + ")";
      g.fail("the grid has " + product + " combinations, more than the " + std::to_string(INT_MAX) +
             " members a swarm can have; give its keys fewer values (a smaller num, or shorter values lists)");
    }
  }
  // Every value must get the same number of members (checked for a whole swarm, that is
  // when it starts at member 0; a run of members [first, first + size) takes its slice).
  if (c.swarm.first_member != 0) return;
  long long grid_period = 1;
  for (const MemberValues& v : c.member_values)
    if (std::count(c.grid.begin(), c.grid.end(), v.key)) grid_period *= v.count();  // <= INT_MAX (above)
  for (const MemberValues& v : c.member_values) {
    const bool in_grid = std::count(c.grid.begin(), c.grid.end(), v.key) > 0;
    const long long period = in_grid ? grid_period : v.count();
    if (c.swarm.size % period == 0) continue;
    const std::string what = in_grid ? "the grid has " + std::to_string(period) + " combinations"
                                     : v.key + " has " + std::to_string(period) + " values";
    root["swarm"]["size"].fail(what + ", which do not divide the swarm of " + std::to_string(c.swarm.size) +
                               " members evenly (member k takes combination k mod " + std::to_string(period) +
                               "); set swarm.size to a multiple of " + std::to_string(period));
  }
}

}  // namespace cfg
}  // namespace tn
