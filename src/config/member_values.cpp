// Per-member hyperparameters: reading, grids, and the per-member optimizer/init values.
#include "config/member_values.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

namespace tn {

const std::vector<std::string>& member_value_keys() {
  static const std::vector<std::string> keys = {"optimizer.lr",    "optimizer.weight_decay", "optimizer.momentum",
                                                "optimizer.beta1", "optimizer.beta2",        "optimizer.eps",
                                                "optimizer.alpha", "model.init_scale"};
  return keys;
}

const MemberValues* find_member_values(const Config& c, const std::string& key) {
  for (const MemberValues& v : c.member_values)
    if (v.key == key) return &v;
  return nullptr;
}

OptimizerConfig member_optimizer(const Config& c, long long member) {
  OptimizerConfig o = c.optimizer;
  for (const MemberValues& v : c.member_values) {
    const double x = v.at(member);
    if (v.key == "optimizer.lr") o.lr = x;
    else if (v.key == "optimizer.weight_decay") o.weight_decay = x;
    else if (v.key == "optimizer.momentum") o.momentum = x;
    else if (v.key == "optimizer.beta1") o.beta1 = x;
    else if (v.key == "optimizer.beta2") o.beta2 = x;
    else if (v.key == "optimizer.eps") o.eps = x;
    else if (v.key == "optimizer.alpha") o.alpha = x;
  }
  return o;
}

double member_init_scale(const Config& c, long long member) {
  const MemberValues* v = find_member_values(c, "model.init_scale");
  return v ? v->at(member) : c.model.init_scale;
}

namespace cfg {
namespace {

std::string fmt_number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

}  // namespace

void read_member_value(const Field& f, const std::string& key, double& scalar, Range r, Config& c) {
  if (!f.present()) return;
  if (!f.is_map()) {
    scalar = f.number(r);
    return;
  }
  f.check_keys({"values", "linspace", "logspace", "num"});
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
    const std::vector<Field> items = ends.items();
    if (items.size() != 2) ends.fail("expected [from, to], two numbers");
    mv.form = log ? MemberValues::Form::Logspace : MemberValues::Form::Linspace;
    const Range positive = Range::above(0);
    mv.lo = items[0].number(log ? positive : r);
    mv.hi = items[1].number(log ? positive : r);
    mv.num = c.swarm.size;
    f.get("num", mv.num, 1);
    for (int i = 0; i < mv.num; ++i) {
      const double t = mv.num == 1 ? 0.0 : static_cast<double>(i) / (mv.num - 1);
      const double x = log ? std::exp(std::log(mv.lo) + t * (std::log(mv.hi) - std::log(mv.lo)))
                           : mv.lo + t * (mv.hi - mv.lo);
      // The ends are exact; values in between are rounded as printed, so that the run file's
      // config reproduces them on any machine.
      mv.values.push_back(i == 0 ? mv.lo : (i == mv.num - 1 ? mv.hi : std::stod(fmt_number(x))));
      if (!r.contains(mv.values.back()))
        ends.fail("value " + fmt_number(mv.values.back()) + " (number " + std::to_string(i) + ") is outside the allowed range " +
                  r.describe());
    }
  }
  scalar = mv.values.front();
  c.member_values.push_back(mv);
}

void read_grid(const Field& root, Config& c) {
  if (Field g = root["grid"]; g.present()) {
    const std::vector<Field> items = g.items();
    if (items.size() < 2) g.fail("a grid combines at least two per-member keys, e.g. [optimizer.lr, optimizer.weight_decay]");
    for (const Field& item : items) {
      const std::string key = item.string();
      if (!find_member_values(c, key)) {
        const std::string near = suggest(key, member_value_keys());
        item.fail("'" + key + "' has no per-member values; give it as {values: [...]}, {linspace: [a, b], num: N} "
                  "or {logspace: [a, b], num: N} first" + (near.empty() || near == key ? "" : "; did you mean '" + near + "'?"));
      }
      if (std::count(c.grid.begin(), c.grid.end(), key)) item.fail("'" + key + "' is listed twice");
      c.grid.push_back(key);
    }
    // First key slowest: stride of key i = product of the counts of the keys after it.
    long long stride = 1;
    for (auto it = c.grid.rbegin(); it != c.grid.rend(); ++it) {
      auto& mv = *std::find_if(c.member_values.begin(), c.member_values.end(),
                               [&](const MemberValues& v) { return v.key == *it; });
      mv.stride = stride;
      stride *= static_cast<long long>(mv.values.size());
    }
  }
  // Every value must get the same number of members (checked for a whole swarm, that is
  // when it starts at member 0; a run of members [first, first + size) takes its slice).
  if (c.swarm.first_member != 0) return;
  long long grid_period = 1;
  for (const MemberValues& v : c.member_values)
    if (std::count(c.grid.begin(), c.grid.end(), v.key)) grid_period *= static_cast<long long>(v.values.size());
  for (const MemberValues& v : c.member_values) {
    const bool in_grid = std::count(c.grid.begin(), c.grid.end(), v.key) > 0;
    const long long period = in_grid ? grid_period : static_cast<long long>(v.values.size());
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
