// Reader of the `data` section: the source (generators and files, with path resolution),
// the train/val/test split, the per-member data mode and normalization.
#include "config/load_data.h"

#include <algorithm>
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

std::string non_empty(const Field& f) {
  std::string v = f.string();
  if (v.empty()) f.fail("must not be empty");
  return v;
}

}  // namespace

std::string find_file(const std::string& written, const std::vector<std::string>& dirs,
                      std::vector<std::string>* looked) {
  const fs::path p(written);
  if (p.is_absolute()) return is_file(p) ? written : "";
  for (std::size_t i = 0; i < dirs.size(); ++i) {
    const std::string& dir = dirs[i];
    if (std::find(dirs.begin(), dirs.begin() + static_cast<std::ptrdiff_t>(i), dir) != dirs.begin() + static_cast<std::ptrdiff_t>(i))
      continue;  // looked there already
    const fs::path candidate = dir.empty() ? p : (fs::path(dir) / p).lexically_normal();
    if (is_file(candidate)) return candidate.string();
    if (looked) looked->push_back(dir.empty() ? "the working directory" : "'" + dir + "'");
  }
  return "";
}

namespace {

// A data file path found by find_file; fails with DataFileNotFound naming every place looked in.
std::string resolve_path(const Field& f, const std::vector<std::string>& dirs) {
  const std::string written = non_empty(f);
  std::vector<std::string> looked;
  if (std::string found = find_file(written, dirs, &looked); !found.empty()) return found;
  std::string where;
  for (std::size_t i = 0; i < looked.size(); ++i)
    where += (i == 0 ? "" : i + 1 == looked.size() ? " and " : ", ") + looked[i];
  throw DataFileNotFound(f.message("file not found: '" + written + "'" + (where.empty() ? "" : "; looked in " + where)),
                         f.path(), written);
}

// An optional pair of keys naming the test set: both or neither. `read` reads one value.
template <class Read>
void read_test_pair(const Field& f, const char* a, const char* b, std::string& va,
                    std::string& vb, Read read) {
  const Field fa = f[a], fb = f[b];
  if (fa.present() != fb.present()) {
    const Field& given = fa.present() ? fa : fb;
    given.fail(std::string("is given without ") + (fa.present() ? b : a) +
               "; the test set needs both (or leave out both)");
  }
  if (!fa.present()) return;
  va = read(fa);
  vb = read(fb);
}

// `features: [a, b]` or `features: {from: a, to: d}` (a range of header columns).
void read_features(const Field& features, SourceConfig& s) {
  if (features.is_map()) {
    features.check_keys(section_keys("data.source.features"));
    s.features_from = non_empty(features.required("from"));
    s.features_to = non_empty(features.required("to"));
    return;
  }
  if (!features.node().IsSequence())
    features.fail_type("a list of column names or a range like {from: x1, to: x9}");
  s.features = features.strings();
  for (const std::string& name : s.features)
    if (name == s.target)
      features.fail("contains the target column '" + name + "'; features are the inputs only");
}

// One character: `delimiter: ";"`, `"\t"` or the name tab. `none` allowed gives '\0' for "none".
char read_char(const Field& f, bool none_allowed) {
  std::string v = f.string();
  if (v == "tab") v = "\t";
  if (none_allowed && v == "none") return '\0';
  if (v.size() != 1 || v[0] == '\n' || v[0] == '\r')
    f.fail("must be one character, like \",\", \";\", \"|\" or tab (\"\\t\"), got '" + v + "'");
  return v[0];
}

// The csv dialect: delimiter (auto when absent), quote, comment, and header-less columns.
void read_dialect(const Field& f, SourceConfig& s) {
  if (Field d = f["delimiter"]; d.present() && d.string() != "auto") s.delimiter = read_char(d, false);
  if (Field q = f["quote"]; q.present()) s.quote = read_char(q, false);
  if (Field c = f["comment"]; c.present()) s.comment = read_char(c, true);
  if (s.delimiter != '\0' && s.delimiter == s.quote)
    f["quote"].fail("is the delimiter too; give them different characters");
  if (s.comment != '\0' && (s.comment == s.quote || s.comment == s.delimiter))
    f["comment"].fail("is also the delimiter or quote character; choose another, e.g. '#'");
  if (Field c = f["columns"]; c.present()) {
    if (!c.node().IsSequence() || c.node().size() == 0)
      c.fail_type("a list of column names, one per field (the file then has no header row)");
    s.columns = c.strings();
    for (std::size_t i = 0; i < s.columns.size(); ++i) {
      if (s.columns[i].empty()) c.items()[i].fail("a column name must not be empty");
      for (std::size_t j = 0; j < i; ++j)
        if (s.columns[j] == s.columns[i]) c.items()[i].fail("column '" + s.columns[i] + "' is named twice");
    }
  }
}

// With data.sequence the columns come from the sequence section, so target and features
// are not source keys.
void read_csv(const Field& f, SourceConfig& s, const std::vector<std::string>& dirs, bool sequence) {
  s.path = resolve_path(f.required("path"), dirs);
  read_dialect(f, s);
  if (sequence) {
    for (const char* key : {"target", "features"})
      if (Field k = f[key]; k.present())
        k.fail(std::string("with data.sequence the columns are data.sequence.target and "
                           "data.sequence.features; remove data.source.") + key);
    return;
  }
  s.target = non_empty(f.required("target"));
  if (Field features = f["features"]; features.present()) read_features(features, s);
}

// `key: [lo, hi]` (or one number: lo = hi) within `r`, lo <= hi.
void read_interval(const Field& f, const char* key, double& lo, double& hi, Range r) {
  const Field k = f[key];
  if (!k.present()) return;
  if (k.is_scalar()) {
    lo = hi = k.number(r);
    return;
  }
  const std::vector<Field> items = k.node().IsSequence() ? k.items() : std::vector<Field>{};
  if (items.size() != 2) k.fail_type("a range [low, high] or one number");
  lo = items[0].number(r);
  hi = items[1].number(r);
  if (lo > hi) k.fail("the range [" + fmt(lo) + ", " + fmt(hi) + "] is reversed; write [" + fmt(hi) +
                      ", " + fmt(lo) + "]");
}

void read_random_walk(const Field& f, SourceConfig& s) {
  RandomWalkConfig& w = s.walk;
  f.get("series", w.series, 1, 1000000);
  f.get("length", w.length, 2, 100000000);
  f.get("seed", s.seed);
  read_interval(f, "drift", w.drift_lo, w.drift_hi, Range::between(-0.1, 0.1));
  read_interval(f, "volatility", w.volatility_lo, w.volatility_hi, Range::between(0, 0.5));
  f.get("season_period", w.season_period, 2);
  read_interval(f, "season_amplitude", w.season_lo, w.season_hi, Range::between(0, 1));
  read_interval(f, "start_price", w.start_lo, w.start_hi, Range::between(1e-3, 1e6));
}

void read_files(const Field& f, SourceConfig& s, const std::vector<std::string>& dirs) {
  const auto file = [&](const Field& k) { return resolve_path(k, dirs); };
  if (s.type == "idx") {
    s.images = file(f.required("images"));
    s.labels = file(f.required("labels"));
    read_test_pair(f, "test_images", "test_labels", s.test_images, s.test_labels, file);
  } else if (s.type == "npy") {
    s.x_path = file(f.required("x_path"));
    s.y_path = file(f.required("y_path"));
    read_test_pair(f, "test_x_path", "test_y_path", s.test_x_path, s.test_y_path, file);
  } else {  // hdf5
    s.path = file(f.required("path"));
    if (Field x = f["x_dataset"]; x.present()) s.x_dataset = non_empty(x);
    if (Field y = f["y_dataset"]; y.present()) s.y_dataset = non_empty(y);
    read_test_pair(f, "test_x_dataset", "test_y_dataset", s.test_x_dataset, s.test_y_dataset,
                   non_empty);
  }
}

void read_source(const Field& f, SourceConfig& s, const std::vector<std::string>& dirs, bool sequence) {
  const std::vector<std::string> types = {"spirals", "moons", "sine", "random_walk", "csv",
                                          "idx",     "hdf5",  "npy", "arrays"};
  if (f.is_map()) {
    if (Field t = f["type"]; t.present()) s.type = types[t.choose(types)];
    f.check_keys(section_keys("data.source"), "type", s.type);
  } else {
    s.type = types[f.choose(types)];
  }
  if (s.type == "csv") return read_csv(f, s, dirs, sequence);
  if (s.type == "idx" || s.type == "hdf5" || s.type == "npy") return read_files(f, s, dirs);
  if (s.type == "random_walk") return read_random_walk(f, s);
  if (s.type == "arrays") return;  // handed over in memory (data/sources.h: load_memory_arrays)
  f.get("n", s.n, 2);
  f.get("noise", s.noise, Range::at_least(0));
  f.get("rotations", s.rotations, Range::above(0));
  f.get("seed", s.seed);
}

// The keys naming a source's own test set ("" when it has none).
std::string test_keys(const SourceConfig& s) {
  if (!s.test_images.empty()) return "test_images and test_labels";
  if (!s.test_x_dataset.empty()) return "test_x_dataset and test_y_dataset";
  if (!s.test_x_path.empty()) return "test_x_path and test_y_path";
  return "";
}

void read_split(const Field& f, SplitConfig& s, const SourceConfig& source) {
  if (!f.present() || f.node().IsNull()) return;
  f.check_keys(section_keys("data.split"));
  f.get("train", s.train, Range::between(0, 1, true, false));
  f.get("val", s.val, Range::between(0, 1));
  f.get("test", s.test, Range::between(0, 1));
  f.get("seed", s.seed);
  f.get("stratify", s.stratify);
  const std::string from_files = test_keys(source);
  if (!from_files.empty() && s.test != 0)
    f["test"].fail("must be 0: the test split comes from the test files (data.source." +
                   from_files + "); split.train + split.val divide the training files");
  const double sum = s.train + s.val + s.test;
  if (std::abs(sum - 1.0) <= 1e-6) return;
  if (!from_files.empty())
    f.fail("train + val must sum to 1 (the test split comes from the test files), got " +
           fmt(sum) + " (" + fmt(s.train) + " + " + fmt(s.val) + ")");
  f.fail("train + val + test must sum to 1, got " + fmt(sum) + " (" + fmt(s.train) + " + " +
         fmt(s.val) + " + " + fmt(s.test) + ")");
}

// `{group_by: COLUMN}`: the column must be a CSV column other than the target and features.
void read_group_by(const Field& g, DataConfig& d) {
  const SourceConfig& s = d.source;
  d.per_member = PerMember::GroupBy;
  d.group_by = non_empty(g);
  if (s.type == "random_walk") {
    if (d.group_by != "ticker")
      g.fail("random_walk's columns are date, ticker and close; each series is a ticker, so "
             "write group_by: ticker");
    return;
  }
  if (s.type != "csv")
    g.fail("groups are the values of a CSV column, so group_by needs data.source.type: csv "
           "(or random_walk); the source is '" + s.type + "'");
  if (d.group_by == s.target)
    g.fail("'" + d.group_by + "' is the target column; group by another column");
  if (std::find(s.features.begin(), s.features.end(), d.group_by) != s.features.end())
    g.fail("'" + d.group_by + "' is also listed in data.source.features; a group column cannot "
           "be a feature");
}

// A mode name, or a one-key map: {bootstrap: {fraction: f}}, {subsample: {fraction: f}},
// {group_by: COLUMN}.
void read_per_member(const Field& f, DataConfig& d) {
  if (!f.present()) return;
  if (!f.is_map()) {
    if (f.node().IsSequence())
      f.fail_type("a name (shared, bootstrap, subsample, shards) or a one-key map like "
                  "{bootstrap: {fraction: 0.5}} or {group_by: COLUMN}");
    d.per_member = f.choice({PerMember::Shared, PerMember::Bootstrap, PerMember::Subsample,
                             PerMember::Shards, PerMember::GroupBy});
    if (d.per_member == PerMember::GroupBy)
      f.fail("group_by needs the column: write per_member: {group_by: COLUMN}");
    return;
  }
  if (Field t = f["type"]; t.present())  // what --set data.per_member.x=... makes of a name
    t.fail("per_member takes a name or a one-key map such as {bootstrap: {fraction: 0.5}}, not a "
           "type key; with --set, replace the whole value: --set "
           "'data.per_member={bootstrap: {fraction: 0.5}}'");
  for (const char* plain : {"shared", "shards"})
    if (Field p = f[plain]; p.present())
      p.fail(std::string("takes no options; write per_member: ") + plain);
  f.check_keys(section_keys("data.per_member"));
  if (f.node().size() != 1)
    f.fail("give exactly one mode, e.g. {bootstrap: {fraction: 0.5}}; got " +
           std::to_string(f.node().size()) + " keys");
  if (Field g = f["group_by"]; g.present()) return read_group_by(g, d);
  const bool bootstrap = f["bootstrap"].present();
  const Field m = f[bootstrap ? "bootstrap" : "subsample"];
  d.per_member = bootstrap ? PerMember::Bootstrap : PerMember::Subsample;
  if (m.node().IsNull()) return;
  if (!m.is_map()) m.fail_type("a map like {fraction: 0.5}");
  const char* mode = bootstrap ? "bootstrap" : "subsample";
  m.check_keys(section_keys(std::string("data.per_member.") + mode), "per_member", mode);
  m.get("fraction", d.member_fraction,
        bootstrap ? Range::between(0, 10, true, false) : Range::between(0, 1, true, false));
  if (bootstrap) m.get("stratify", d.bootstrap_stratify);
}

// `features: {COLUMN: {encoding: onehot}}` (or `COLUMN: onehot`): per-column settings of a csv
// source's features; which columns are features stays data.source.features.
void read_feature_settings(const Field& f, DataConfig& d) {
  if (!f.present() || f.node().IsNull()) return;
  if (d.source.type != "csv" || d.sequence.enabled())
    f.fail("sets how CSV feature columns are encoded, so it needs data.source.type: csv without "
           "data.sequence");
  if (!f.is_map())
    f.fail_type("a map from column to its settings, like {color: {encoding: onehot}}; the columns "
                "themselves are chosen by data.source.features");
  const std::initializer_list<Encoding> kinds = {Encoding::Auto, Encoding::Numeric, Encoding::OneHot,
                                                 Encoding::Ordinal};
  for (auto it = f.node().begin(); it != f.node().end(); ++it) {
    const std::string column = it->first.as<std::string>();
    const Field c = f[column];
    FeatureSetting s{column, Encoding::Auto};
    if (c.is_map()) {
      c.check_keys(section_keys("data.features.COLUMN"));
      c.get("encoding", s.encoding, kinds);
    } else {
      s.encoding = c.choice(kinds);
    }
    if (column == d.source.target)
      c.fail("'" + column + "' is the target column; encodings apply to features (class labels are "
             "mapped to classes by themselves)");
    if (column == d.group_by) c.fail("'" + column + "' is the group_by column, not a feature");
    const std::vector<std::string>& listed = d.source.features;
    if (!listed.empty() && std::find(listed.begin(), listed.end(), column) == listed.end())
      c.fail("'" + column + "' is not in data.source.features; add it there or remove it here");
    d.feature_settings.push_back(s);
  }
}

// `drop: [COLUMNS]`: CSV columns left out of the features (checked against the header when the
// file is read, where an unknown name gets a suggestion).
void read_drop(const Field& f, DataConfig& d) {
  if (!f.present() || f.node().IsNull()) return;
  if (d.source.type != "csv" || d.sequence.enabled())
    f.fail("leaves CSV columns out of the features, so it needs data.source.type: csv without data.sequence");
  d.drop = f.strings();
  for (const std::string& column : d.drop) {
    if (column == d.source.target)
      f.fail("'" + column + "' is the target column; name another target (data.source.target) instead");
    if (column == d.group_by) f.fail("'" + column + "' is the group_by column, which is not a feature");
    if (std::any_of(d.feature_settings.begin(), d.feature_settings.end(),
                    [&](const FeatureSetting& s) { return s.column == column; }))
      f.fail("'" + column + "' is also in data.features, which encodes it; keep it in one of the two");
  }
}

}  // namespace

void read_data(const Field& f, DataConfig& d, const std::vector<std::string>& dirs) {
  f.check_keys(section_keys("data"));
  const Field sequence = f["sequence"];
  read_source(f.required("source"), d.source, dirs, sequence.present());
  read_split(f["split"], d.split, d.source);
  read_per_member(f["per_member"], d);
  f.get("normalize", d.normalize, {Normalize::None, Normalize::Standard, Normalize::MinMax});
  if (Field p = f["normalize_per_member"]; p.present()) {
    d.normalize_per_member = p.boolean();  // false is allowed anywhere: it is the default
    if (d.normalize_per_member && d.per_member != PerMember::GroupBy)
      p.fail(std::string("only applies to group_by; per_member is '") + to_string(d.per_member) +
             "'");
    if (d.normalize_per_member && d.normalize == Normalize::None)
      p.fail("has no effect with normalize: none; set data.normalize to standard or minmax");
  }
  f.get("normalize_target", d.normalize_target,
        {Normalize::None, Normalize::Standard, Normalize::MinMax, Normalize::Robust, Normalize::Log1p});
  if (d.normalize_target != Normalize::None && sequence.present())
    f["normalize_target"].fail("applies to non-sequence data; a sequence run scales its target with data.normalize "
                               "(data.sequence.scale); remove data.normalize_target");
  if (Field m = f["missing"]; m.present()) {
    d.missing = m.choice({Missing::Error, Missing::DropRows, Missing::Mean, Missing::Median});
    if (d.missing != Missing::Error && (d.source.type != "csv" || sequence.present()))
      m.fail("applies to CSV features (without data.sequence); the source is '" + d.source.type + "'" +
             (sequence.present() ? " with data.sequence" : ""));
  }
  if (sequence.present()) {
    if (Field fs = f["features"]; fs.present() && !fs.node().IsNull())
      fs.fail("sets how CSV feature columns are encoded; sequence inputs are numbers (data.sequence.features)");
    return read_sequence(sequence, f, d);
  }
  read_feature_settings(f["features"], d);
  read_drop(f["drop"], d);
  if (d.source.type == "random_walk")
    f["source"].fail("random_walk makes price series for sequence models; add data.sequence, "
                     "e.g. {window: 20, target: close}");
}

}  // namespace tn::cfg
