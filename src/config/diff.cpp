// Which keys of two resolved configurations differ: both are emitted (to_yaml, every key with
// its default) and the two YAML trees compared leaf by leaf.
#include "config/yaml_util.h"

namespace tn {
namespace {

std::string join(const std::string& prefix, const std::string& key) { return prefix.empty() ? key : prefix + "." + key; }

void compare(const YAML::Node& a, const YAML::Node& b, const std::string& path, std::vector<std::string>& out) {
  if (a.Type() != b.Type()) {
    out.push_back(path);
    return;
  }
  if (a.IsMap()) {
    for (const auto& kv : a) {
      const std::string key = kv.first.as<std::string>();
      if (!b[key]) out.push_back(join(path, key));
      else compare(kv.second, b[key], join(path, key), out);
    }
    for (const auto& kv : b)
      if (!a[kv.first.as<std::string>()]) out.push_back(join(path, kv.first.as<std::string>()));
  } else if (a.IsSequence()) {
    if (a.size() != b.size()) {
      out.push_back(path);
      return;
    }
    for (std::size_t i = 0; i < a.size(); ++i) compare(a[i], b[i], join(path, std::to_string(i)), out);
  } else if (a.IsScalar() && a.Scalar() != b.Scalar()) {
    out.push_back(path);
  }
}

}  // namespace

std::vector<std::string> config_differences(const Config& a, const Config& b) {
  std::vector<std::string> out;
  compare(cfg::load_yaml(to_yaml(a)), cfg::load_yaml(to_yaml(b)), "", out);
  return out;
}

std::vector<std::string> config_text_differences(const std::string& a, const std::string& b) {
  std::vector<std::string> out;
  try {
    compare(cfg::load_yaml(a), cfg::load_yaml(b), "", out);
  } catch (const YAML::Exception& e) {
    throw ConfigError(std::string("a stored configuration cannot be read: ") + e.what());
  }
  return out;
}

}  // namespace tn
