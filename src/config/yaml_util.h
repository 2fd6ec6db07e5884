// Typed, located reads from a yaml-cpp tree: every failure becomes one ConfigError
// "file:line:col: key.path: problem; ...". Internal to src/config/.
#pragma once
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "config/config.h"
#include "config/keys.h"

namespace tn::cfg {

// What Field::fail throws: a ConfigError that also says where (for sorting kept errors).
struct FieldError : ConfigError {
  FieldError(const std::string& message, YAML::Mark at, std::string key_path)
      : ConfigError(message), mark(at), path(std::move(key_path)) {}
  YAML::Mark mark;
  std::string path;
};

// An error kept while reading went on (Field::keep): its position, key path and message, and
// the exception itself, rethrown unchanged when it is the only one.
struct KeptError {
  bool located = false;  // false: from a --set override or without a position (sorted last)
  int line = 0, column = 0;
  std::size_t order = 0;
  std::string path, message;
  std::exception_ptr error;
};

// Where a tree came from: the file (or origin name) and the --set overrides applied.
struct Origin {
  std::string file;
  std::vector<Override> overrides;
  // Whether Field::keep keeps errors and lets reading go on (parse_config turns it on, so
  // that every independent error of a file is reported in one run), or lets them through.
  bool keep_going = false;
  mutable std::vector<KeptError> kept;
  // "file:line:col", or "--set key=value" for a node built by an override.
  std::string where(const YAML::Mark& mark, const std::string& path) const;
  // Throws what was kept, if anything: one error as it was thrown; several as one ConfigError
  // with one line per error, sorted by position (the file's lines first, then --set
  // overrides in order), and a last line "N errors in FILE".
  void throw_kept() const;
};

// "model.layers.0.units" -> "model.layers[0].units", the form used in messages.
std::string message_path(const std::string& dotted_key);
// "a, b, c"
std::string join(const std::vector<std::string>& items);
// The shortest text that reads back as exactly `v` (float or double), written so that YAML
// 1.1 readers (PyYAML) also see a number: "1e-08" becomes "1.0e-08".
std::string exact_text(double v);
std::string exact_text(float v);
// Limits on what a YAML text may make its reader visit (load_yaml): the nodes that aliases
// repeat, in all, and the levels of nesting, counting what aliases repeat. A configuration has
// a few hundred nodes and fewer than ten levels.
inline constexpr std::size_t kMaxYamlAliasNodes = 10000;
inline constexpr std::size_t kMaxYamlDepth = 64;

// YAML text refused for what reading it would do, not for its syntax: an alias inside the node
// it repeats (a loop), aliases that repeat more than kMaxYamlAliasNodes nodes ("billion
// laughs"), nesting deeper than kMaxYamlDepth, or bytes that are not UTF-8. `mark` is where.
struct YamlInputError : YAML::Exception {
  YamlInputError(const YAML::Mark& mark, const std::string& msg) : YAML::Exception(mark, msg) {}
};

// The first document of `text`, as YAML::Load reads it, after checking it within the limits
// above (throws YamlInputError). Every YAML text (config files, --set values, stored
// configurations) is read through it. Throws yaml-cpp's exceptions on a syntax error.
YAML::Node load_yaml(const std::string& text);

// The configuration document of `text` (load_yaml; an empty one is an empty map); a syntax
// error or a refused input is a ConfigError at its location ("file:line:col: ...").
YAML::Node parse_document(const std::string& text, const Origin& origin);

// Applies the overrides to `root` (a map), in order. Throws ConfigError.
void apply_overrides(YAML::Node& root, const std::vector<Override>& overrides);
// A copy of `node` with null marks, so that messages name the override it came from.
YAML::Node without_marks(const YAML::Node& node);

// Allowed interval of a number: lo/hi with open or closed ends (absent = unbounded).
struct Range {
  double lo = -1e308, hi = 1e308;
  bool lo_open = false, hi_open = false, has_lo = false, has_hi = false;
  static Range any() { return {}; }
  static Range at_least(double lo) { return {lo, 1e308, false, false, true, false}; }
  static Range above(double lo) { return {lo, 1e308, true, false, true, false}; }
  static Range between(double lo, double hi, bool lo_open = false, bool hi_open = false) {
    return {lo, hi, lo_open, hi_open, true, true};
  }
  bool contains(double v) const;
  std::string describe() const;  // "> 0", ">= 1", "in [0, 1)"
};

// YAML name of a layer initializer ("auto", "he", "glorot").
const char* to_string(LayerConfig::Init init);

// One node of the tree and its key path; a missing key keeps its parent's location.
class Field {
 public:
  Field(const Origin& origin, YAML::Node node, std::string path, YAML::Mark parent_mark);

  bool present() const { return present_; }
  const std::string& path() const { return path_; }
  const YAML::Node& node() const { return node_; }
  const Origin& origin() const { return *origin_; }
  bool is_map() const { return present_ && node_.IsMap(); }
  bool is_scalar() const { return present_ && node_.IsScalar(); }
  [[noreturn]] void fail(const std::string& problem) const;
  std::string message(const std::string& problem) const;  // what fail() throws: "file:line:col: key: problem"
  [[noreturn]] void fail_type(const std::string& expected) const;  // "expected X, got Y"
  // Runs `read`; when the origin keeps going, a ConfigError it throws is kept (Origin::kept)
  // and false returned, so that the caller goes on with what it has (the default). A read
  // whose failure makes later reads meaningless is not wrapped.
  bool keep(const std::function<void()>& read) const;
  // Whether an error was kept at this key or under it (a check that reads its value skips).
  bool has_errors() const;

  Field operator[](const std::string& key) const;  // child of a map, maybe missing
  Field required(const std::string& key) const;    // fails "missing required key"
  std::vector<Field> items() const;                // elements of a list
  // Fails on a key not in `rules` (suggesting the nearest), on a key that does not
  // apply to `selected` (the value of `selector`, e.g. type), and on duplicate keys; each
  // such key is kept (keep) and the others still checked.
  void check_keys(const std::vector<KeyRule>& rules, const std::string& selector = "",
                  const std::string& selected = "") const;

  double number(Range r = Range::any()) const;
  long long integer(long long lo, long long hi) const;
  std::uint64_t uint64() const;
  bool boolean() const;
  std::string string() const;
  std::vector<std::string> strings() const;
  std::size_t choose(const std::vector<std::string>& names) const;  // index of the value
  template <class E>  // one of `values`, named by to_string(E)
  E choice(std::initializer_list<E> values) const {
    std::vector<std::string> names;
    for (E v : values) names.push_back(to_string(v));
    return values.begin()[choose(names)];
  }

  // Reads child `key` into `out` when present; leaves the default otherwise (also when the
  // value is refused and the error kept: keep).
  void get(const char* key, double& out, Range r = Range::any()) const;
  void get(const char* key, float& out, Range r = Range::any()) const;
  void get(const char* key, int& out, long long lo, long long hi = 2147483647) const;
  void get(const char* key, std::uint64_t& out) const;
  void get(const char* key, bool& out) const;
  void get(const char* key, std::string& out) const;
  template <class E>
  void get(const char* key, E& out, std::initializer_list<E> values) const {
    if (Field f = (*this)[key]; f.present()) f.keep([&] { out = f.choice(values); });
  }

 private:
  std::string describe_value() const;  // "'abc'", "a map", "a list", "nothing"
  std::string scalar_text(const std::string& expected) const;  // fails unless a scalar

  const Origin* origin_;
  YAML::Node node_;
  std::string path_;
  YAML::Mark mark_;
  bool present_;
};

}  // namespace tn::cfg
