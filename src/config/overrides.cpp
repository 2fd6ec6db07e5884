// `--set key.path=value` overrides: parsing the argument and applying it to the YAML
// tree before validation (numeric components index lists, missing maps are created); the old
// defaults a stored /config is read with, as overrides.
#include <algorithm>
#include <cctype>

#include "config/config.h"
#include "config/yaml_util.h"
#include "util/utf8.h"

namespace tn {
namespace {

const char* const kSetHint = "; --set expects key.path=value, e.g. --set optimizer.lr=3e-4";

std::string trim(const std::string& s) {
  const auto first = s.find_first_not_of(" \t");
  if (first == std::string::npos) return "";
  return s.substr(first, s.find_last_not_of(" \t") - first + 1);
}

bool is_index(const std::string& part) {
  return !part.empty() &&
         std::all_of(part.begin(), part.end(), [](unsigned char c) { return std::isdigit(c); });
}

// A problem with one override; `syntax` adds the --set usage hint.
[[noreturn]] void set_error(const std::string& arg, const std::string& problem,
                            bool syntax = false) {
  throw ConfigError("--set " + arg + ": " + problem + (syntax ? kSetHint : ""));
}

// Splits "a.b.0.c" into its components; `arg` is the whole --set argument, for messages.
std::vector<std::string> split_key(const std::string& key, const std::string& arg) {
  if (key.empty()) set_error(arg, "empty key", true);
  if (key.find_first_of(" \t") != std::string::npos)
    set_error(arg, "the key contains a space", true);
  std::vector<std::string> parts(1);
  for (char ch : key) {
    if (ch == '.') parts.emplace_back();
    else parts.back() += ch;
  }
  for (const auto& p : parts)
    if (p.empty()) set_error(arg, "empty component in key '" + key + "'", true);
  return parts;
}

// The value of an override, parsed as YAML, with marks cleared.
YAML::Node parse_value(const std::string& text, const std::string& arg) {
  try {
    return cfg::without_marks(cfg::load_yaml(text));
  } catch (const cfg::YamlInputError& e) {
    set_error(arg, "character " + std::to_string(e.mark.pos + 1) + " of the value: " + e.msg);
  } catch (const YAML::Exception& e) {
    set_error(arg, "invalid YAML value: " + e.msg);
  }
}

// "a.b" for the first n components, for messages.
std::string prefix(const std::vector<std::string>& parts, std::size_t n) {
  std::string out;
  for (std::size_t i = 0; i < n; ++i) out += (i ? "." : "") + parts[i];
  return out.empty() ? "the top level" : "'" + out + "'";
}

// The child `parts[i]` of `node`, for setting or descending; creates a missing key.
YAML::Node child(YAML::Node node, const std::vector<std::string>& parts, std::size_t i,
                 const std::string& arg) {
  const std::string& part = parts[i];
  if (node.IsSequence()) {
    if (!is_index(part))
      set_error(arg, prefix(parts, i) + " is a list; expected a numeric index, not '" + part + "'");
    const std::size_t index = part.size() > 9 ? node.size() : std::stoul(part);
    if (index >= node.size())
      set_error(arg, "index " + part + " is out of range; " + prefix(parts, i) + " has " +
                         std::to_string(node.size()) + " elements");
    return node[index];
  }
  if (node.IsScalar()) {  // a section given by name, `optimizer: sgd`, becomes {type: sgd}
    YAML::Node section(YAML::NodeType::Map);
    section["type"] = cfg::without_marks(node);
    node = section;
  }
  if (!node.IsMap()) node = YAML::Node(YAML::NodeType::Map);  // null: becomes a map in place
  return node[part];
}

void apply_one(YAML::Node& root, const Override& o) {
  const std::string arg = o.key + "=" + o.value;
  const std::vector<std::string> parts = split_key(o.key, arg);
  const YAML::Node value = parse_value(o.value, arg);
  YAML::Node node = root;
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    YAML::Node next = child(node, parts, i, arg);
    if (!next.IsDefined()) next = YAML::Node(YAML::NodeType::Map);
    node.reset(next);
  }
  child(node, parts, parts.size() - 1, arg) = value;
}

}  // namespace

Override parse_override(const std::string& arg) {
  if (const std::size_t bad = invalid_utf8(arg); bad != std::string::npos)  // (not echoed: the valid part only)
    throw ConfigError("--set " + arg.substr(0, bad) + "...: character " + std::to_string(bad + 1) + ": " +
                      utf8_problem(arg, bad));
  const auto eq = arg.find('=');
  if (eq == std::string::npos) set_error(arg, "missing '='", true);
  Override o{trim(arg.substr(0, eq)), arg.substr(eq + 1)};
  split_key(o.key, arg);
  return o;
}

namespace cfg {

void apply_overrides(YAML::Node& root, const std::vector<Override>& overrides) {
  for (const Override& o : overrides) apply_one(root, o);
}

YAML::Node without_marks(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Scalar: {
      YAML::Node out(node.Scalar());
      out.SetTag(node.Tag());
      return out;
    }
    case YAML::NodeType::Sequence: {
      YAML::Node out(YAML::NodeType::Sequence);
      for (const auto& item : node) out.push_back(without_marks(item));
      return out;
    }
    case YAML::NodeType::Map: {
      YAML::Node out(YAML::NodeType::Map);
      for (const auto& kv : node)
        out.force_insert(without_marks(kv.first), without_marks(kv.second));
      return out;
    }
    default: return YAML::Node(YAML::NodeType::Null);
  }
}

}  // namespace cfg

// A key whose default changed since and that the stored text does not name gets its old
// default as a first override: data.normalize_target none (the default became standard for
// regression), so an old run is rebuilt and evaluated as it trained.
Config parse_stored_config(const std::string& yaml_text, const std::string& origin,
                           const std::vector<Override>& overrides,
                           const std::optional<std::vector<std::string>>& data_dirs) {
  std::vector<Override> all;
  try {
    const YAML::Node root = YAML::Load(yaml_text);
    if (root.IsMap() && root["data"].IsMap() && !root["data"]["normalize_target"])
      all.push_back({"data.normalize_target", "none"});
  } catch (const YAML::Exception&) {  // parse_config says what is wrong with the text
  }
  all.insert(all.end(), overrides.begin(), overrides.end());
  return parse_config(yaml_text, origin, all, data_dirs);
}

}  // namespace tn
