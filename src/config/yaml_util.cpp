// Typed, located reads from a yaml-cpp tree (see yaml_util.h): parsing of scalars,
// key checks with suggestions, and the "file:line:col: key.path: problem" messages.
#include "config/yaml_util.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <optional>
#include <set>

#include "util/suggest.h"

namespace tn::cfg {
namespace {

std::string fmt_number(double v) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

bool path_related(const std::string& a, const std::string& b) {
  auto under = [](const std::string& child, const std::string& parent) {
    return child.size() > parent.size() && child.compare(0, parent.size(), parent) == 0 &&
           (child[parent.size()] == '.' || child[parent.size()] == '[');
  };
  return !a.empty() && !b.empty() && (a == b || under(a, b) || under(b, a));
}

bool all_digits(const std::string& s) {
  return !s.empty() &&
         std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c) != 0; });
}

std::optional<double> parse_double(std::string s) {
  if (!s.empty() && s[0] == '+') s.erase(0, 1);
  double v = 0.0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size() || !std::isfinite(v))
    return std::nullopt;
  return v;
}

// Parses an integer; *overflow is set when the digits are valid but too large.
template <class T>
std::optional<T> parse_integer(std::string s, bool* overflow) {
  if (!s.empty() && s[0] == '+') s.erase(0, 1);
  T v{};
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || end != s.data() + s.size()) return std::nullopt;
  *overflow = ec == std::errc::result_out_of_range;
  if (ec != std::errc() && !*overflow) return std::nullopt;
  return v;
}


}  // namespace

std::string Origin::where(const YAML::Mark& mark, const std::string& path) const {
  if (!mark.is_null())
    return file + ":" + std::to_string(mark.line + 1) + ":" + std::to_string(mark.column + 1);
  for (auto it = overrides.rbegin(); it != overrides.rend(); ++it)
    if (path_related(message_path(it->key), path)) return "--set " + it->key + "=" + it->value;
  return file;
}

std::string message_path(const std::string& dotted_key) {
  std::string out, part;
  auto flush = [&] {
    if (all_digits(part)) out += "[" + part + "]";
    else out += (out.empty() ? "" : ".") + part;
    part.clear();
  };
  for (char ch : dotted_key) {
    if (ch == '.') flush();
    else part += ch;
  }
  flush();
  return out;
}

namespace {
template <class T>
std::string exact_text_of(T v) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  std::string s(buf, r.ptr);
  const std::size_t e = s.find('e');
  if (e != std::string::npos && s.find('.') == std::string::npos) s.insert(e, ".0");
  return s;
}
}  // namespace

std::string exact_text(double v) { return exact_text_of(v); }
std::string exact_text(float v) { return exact_text_of(v); }

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& s : items) out += (out.empty() ? "" : ", ") + s;
  return out;
}

bool Range::contains(double v) const {
  if (has_lo && (lo_open ? !(v > lo) : !(v >= lo))) return false;
  if (has_hi && (hi_open ? !(v < hi) : !(v <= hi))) return false;
  return true;
}

std::string Range::describe() const {
  if (has_lo && has_hi)
    return std::string("in ") + (lo_open ? "(" : "[") + fmt_number(lo) + ", " + fmt_number(hi) +
           (hi_open ? ")" : "]");
  if (has_lo) return (lo_open ? "> " : ">= ") + fmt_number(lo);
  return "of any value";
}

Field::Field(const Origin& origin, YAML::Node node, std::string path, YAML::Mark parent_mark)
    : origin_(&origin), node_(node), path_(std::move(path)), mark_(parent_mark),
      present_(node.IsDefined()) {
  if (present_) mark_ = node_.Mark();
}

std::string Field::message(const std::string& problem) const {
  return origin_->where(mark_, path_) + ": " + (path_.empty() ? "" : path_ + ": ") + problem;
}

void Field::fail(const std::string& problem) const { throw FieldError(message(problem), mark_, path_); }

bool Field::keep(const std::function<void()>& read) const {
  if (!origin_->keep_going) {
    read();
    return true;
  }
  KeptError k;
  try {
    read();
    return true;
  } catch (const FieldError& e) {
    k = {!e.mark.is_null(), e.mark.line, e.mark.column, 0, e.path, e.what(), std::current_exception()};
  } catch (const ConfigError& e) {
    k = {false, 0, 0, 0, path_, e.what(), std::current_exception()};
  } catch (const YAML::Exception& e) {  // a yaml-cpp surprise still names the file
    const std::string msg = origin_->where(e.mark, path_) + ": " + e.msg;
    k = {!e.mark.is_null(), e.mark.line, e.mark.column, 0, path_, msg,
         std::make_exception_ptr(ConfigError(msg))};
  }
  for (const KeptError& seen : origin_->kept)
    if (seen.message == k.message) return false;  // the same error reached twice
  k.order = origin_->kept.size();
  origin_->kept.push_back(std::move(k));
  return false;
}

bool Field::has_errors() const {
  return std::any_of(origin_->kept.begin(), origin_->kept.end(),
                     [&](const KeptError& k) { return path_related(k.path, path_); });
}

void Origin::throw_kept() const {
  if (kept.empty()) return;
  if (kept.size() == 1) std::rethrow_exception(kept.front().error);
  std::vector<KeptError> sorted = kept;
  std::stable_sort(sorted.begin(), sorted.end(), [](const KeptError& a, const KeptError& b) {
    if (a.located != b.located) return a.located;
    if (a.line != b.line) return a.line < b.line;
    if (a.column != b.column) return a.column < b.column;
    return a.order < b.order;
  });
  std::string out;
  for (const KeptError& k : sorted) out += k.message + "\n";
  throw ConfigError(out + std::to_string(sorted.size()) + " errors in " + file);
}

void Field::fail_type(const std::string& expected) const {
  fail("expected " + expected + ", got " + describe_value());
}

std::string Field::describe_value() const {
  if (!present_ || node_.IsNull()) return "an empty value";
  if (node_.IsMap()) return "a map";
  if (node_.IsSequence()) return "a list";
  return "'" + node_.Scalar() + "'";
}

std::string Field::scalar_text(const std::string& expected) const {
  if (!present_ || !node_.IsScalar()) fail_type(expected);
  return node_.Scalar();
}

Field Field::operator[](const std::string& key) const {
  const std::string child = path_.empty() ? key : path_ + "." + key;
  if (!is_map()) return Field(*origin_, YAML::Node(YAML::NodeType::Undefined), child, mark_);
  const YAML::Node& map = node_;
  return Field(*origin_, map[key], child, mark_);
}

Field Field::required(const std::string& key) const {
  Field f = (*this)[key];
  if (!f.present()) f.fail("missing required key");
  return f;
}

std::vector<Field> Field::items() const {
  if (!present_ || !node_.IsSequence()) fail_type("a list");
  std::vector<Field> out;
  for (std::size_t i = 0; i < node_.size(); ++i)
    out.emplace_back(*origin_, node_[i], path_ + "[" + std::to_string(i) + "]", mark_);
  return out;
}

void Field::check_keys(const std::vector<KeyRule>& rules, const std::string& selector,
                       const std::string& selected) const {
  if (!is_map()) fail_type("a map");
  std::vector<std::string> allowed;
  for (const auto& r : rules)
    if (r.applies(selected)) allowed.push_back(r.key);
  std::set<std::string> seen;
  for (auto it = node_.begin(); it != node_.end(); ++it) {
    const std::string name = it->first.IsScalar() ? it->first.Scalar() : "?";
    const Field key(*origin_, it->first, path_.empty() ? name : path_ + "." + name, mark_);
    if (!it->first.IsScalar()) key.fail("keys must be plain names; allowed: " + join(allowed));
    key.keep([&] {
      if (!seen.insert(name).second) key.fail("duplicate key");
      auto rule = std::find_if(rules.begin(), rules.end(), [&](auto& r) { return r.key == name; });
      if (rule == rules.end())
        key.fail("unknown key; allowed: " + join(allowed) + did_you_mean(name, allowed));
      if (!rule->applies(selected)) {
        std::string types;
        for (const auto& t : rule->applies_to) types += (types.empty() ? "" : " and ") + t;
        key.fail("only applies to " + types + "; " + selector + " is '" + selected + "'");
      }
    });
  }
}

double Field::number(Range r) const {
  const std::string t = scalar_text("a number");
  const auto v = parse_double(t);
  if (!v) fail_type("a number");
  if (!r.contains(*v)) fail("value " + t + " is out of range; expected a number " + r.describe());
  return *v;
}

long long Field::integer(long long lo, long long hi) const {
  const std::string t = scalar_text("an integer");
  bool overflow = false;
  const auto v = parse_integer<long long>(t, &overflow);
  if (!v) fail_type("an integer");
  if (overflow || *v < lo || *v > hi) {
    // Keys bounded only by what an int holds say ">= lo", unless the value is above that bound.
    const bool too_big = overflow ? t.find('-') == std::string::npos : *v > hi;
    const bool open_top = hi == 2147483647 && !too_big;
    const std::string range =
        open_top ? ">= " + std::to_string(lo)
                 : "in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
    fail("value " + t + " is out of range; expected an integer " + range);
  }
  return *v;
}

std::uint64_t Field::uint64() const {
  const std::string t = scalar_text("a non-negative integer");
  bool overflow = false;
  if (!t.empty() && t[0] == '-' && parse_integer<long long>(t, &overflow))
    fail("value " + t + " is out of range; expected an integer >= 0");
  const auto v = parse_integer<std::uint64_t>(t, &overflow);
  if (!v) fail_type("a non-negative integer");
  if (overflow) fail("value " + t + " is out of range; expected an integer < 2^64");
  return *v;
}

bool Field::boolean() const {
  const std::string t = scalar_text("true or false");
  if (t == "true" || t == "True" || t == "TRUE") return true;
  if (t == "false" || t == "False" || t == "FALSE") return false;
  fail_type("true or false");
}

std::string Field::string() const { return scalar_text("a string"); }

std::vector<std::string> Field::strings() const {
  std::vector<std::string> out;
  for (const Field& item : items()) out.push_back(item.string());
  return out;
}

std::size_t Field::choose(const std::vector<std::string>& names) const {
  if (!present_ || !node_.IsScalar())
    fail("expected a name, got " + describe_value() + "; allowed: " + join(names));
  const std::string t = node_.Scalar();
  const auto it = std::find(names.begin(), names.end(), t);
  if (it == names.end())
    fail("unknown value '" + t + "'; allowed: " + join(names) + did_you_mean(t, names));
  return static_cast<std::size_t>(it - names.begin());
}

void Field::get(const char* key, double& out, Range r) const {
  if (Field f = (*this)[key]; f.present()) f.keep([&] { out = f.number(r); });
}
void Field::get(const char* key, float& out, Range r) const {
  if (Field f = (*this)[key]; f.present()) f.keep([&] { out = static_cast<float>(f.number(r)); });
}
void Field::get(const char* key, int& out, long long lo, long long hi) const {
  if (Field f = (*this)[key]; f.present()) f.keep([&] { out = static_cast<int>(f.integer(lo, hi)); });
}
void Field::get(const char* key, std::uint64_t& out) const {
  if (Field f = (*this)[key]; f.present()) f.keep([&] { out = f.uint64(); });
}
void Field::get(const char* key, bool& out) const {
  if (Field f = (*this)[key]; f.present()) f.keep([&] { out = f.boolean(); });
}
void Field::get(const char* key, std::string& out) const {
  if (Field f = (*this)[key]; f.present()) f.keep([&] { out = f.string(); });
}

}  // namespace tn::cfg
