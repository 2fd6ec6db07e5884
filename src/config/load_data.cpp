// Reader of the `data` section: the source (spirals or csv, with csv path resolution),
// the train/val/test split and the per-member options.
#include "config/load_data.h"

#include <cmath>
#include <cstdio>
#include <filesystem>

namespace tn::cfg {
namespace {

namespace fs = std::filesystem;

std::string fmt(double v) {  // short, for messages: 0.7 + 0.2 is "0.9"
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.10g", v);
  return buf;
}

bool is_file(const fs::path& p) {
  std::error_code ec;
  return fs::exists(p, ec) && !fs::is_directory(p, ec);
}

// The csv path as written if it exists from the working directory, else relative to
// the config file's directory; fails when neither exists.
std::string resolve_path(const Field& f, const std::string& base_dir) {
  const std::string written = f.string();
  if (written.empty()) f.fail("must not be empty");
  const fs::path p(written);
  if (is_file(p)) return written;
  if (p.is_relative() && !base_dir.empty() && is_file(fs::path(base_dir) / p))
    return (fs::path(base_dir) / p).lexically_normal().string();
  std::string looked = "the working directory";
  if (!base_dir.empty()) looked += " and '" + base_dir + "'";
  f.fail("file not found: '" + written + "'" +
         (p.is_relative() ? "; looked in " + looked : std::string()));
}

void read_csv(const Field& f, SourceConfig& s, const std::string& base_dir) {
  s.path = resolve_path(f.required("path"), base_dir);
  const Field target = f.required("target");
  s.target = target.string();
  if (s.target.empty()) target.fail("must not be empty");
  if (Field features = f["features"]; features.present()) {
    s.features = features.strings();
    for (const std::string& name : s.features)
      if (name == s.target)
        features.fail("contains the target column '" + name + "'; features are the inputs only");
  }
}

void read_source(const Field& f, SourceConfig& s, const std::string& base_dir) {
  const std::vector<std::string> types = {"spirals", "csv"};
  if (f.is_map()) {
    if (Field t = f["type"]; t.present()) s.type = types[t.choose(types)];
    const std::vector<std::string> spirals = {"spirals"}, csv = {"csv"};
    f.check_keys({"type", {"n", spirals}, {"noise", spirals}, {"rotations", spirals},
                  {"seed", spirals}, {"path", csv}, {"features", csv}, {"target", csv}},
                 "type", s.type);
  } else {
    s.type = types[f.choose(types)];
  }
  if (s.type == "csv") return read_csv(f, s, base_dir);
  f.get("n", s.n, 2);
  f.get("noise", s.noise, Range::at_least(0));
  f.get("rotations", s.rotations, Range::above(0));
  f.get("seed", s.seed);
}

void read_split(const Field& f, SplitConfig& s) {
  if (!f.present() || f.node().IsNull()) return;
  f.check_keys({"train", "val", "test", "seed"});
  f.get("train", s.train, Range::between(0, 1, true, false));
  f.get("val", s.val, Range::between(0, 1));
  f.get("test", s.test, Range::between(0, 1));
  f.get("seed", s.seed);
  const double sum = s.train + s.val + s.test;
  if (std::abs(sum - 1.0) > 1e-6)
    f.fail("train + val + test must sum to 1, got " + fmt(sum) + " (" + fmt(s.train) + " + " +
           fmt(s.val) + " + " + fmt(s.test) + ")");
}

}  // namespace

void read_data(const Field& f, DataConfig& d, const std::string& base_dir) {
  f.check_keys({"source", "split", "per_member", "normalize"});
  read_source(f.required("source"), d.source, base_dir);
  read_split(f["split"], d.split);
  f.get("per_member", d.per_member, {PerMember::Shared, PerMember::Bootstrap});
  f.get("normalize", d.normalize, {Normalize::None, Normalize::Standard});
}

}  // namespace tn::cfg
