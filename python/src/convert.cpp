// Python values to YAML text and numeric arrays, and float vectors to numpy (see convert.h).
#include "convert.h"

#include <yaml-cpp/yaml.h>

#include "config/config.h"

namespace tn::py {
namespace {

YAML::Node to_node(nb::handle v, const std::string& where) {
  if (v.is_none()) return YAML::Node(YAML::NodeType::Null);
  if (nb::isinstance<nb::bool_>(v)) return YAML::Node(nb::cast<bool>(v));
  if (nb::isinstance<nb::int_>(v)) return YAML::Node(nb::cast<long long>(v));
  if (nb::isinstance<nb::float_>(v)) return YAML::Node(nb::cast<double>(v));
  if (nb::isinstance<nb::str>(v)) return YAML::Node(nb::cast<std::string>(v));
  if (nb::isinstance<nb::dict>(v)) {
    YAML::Node n(YAML::NodeType::Map);
    for (auto [key, value] : nb::borrow<nb::dict>(v)) {
      if (!nb::isinstance<nb::str>(key))
        throw ConfigError(where + ": keys must be strings, not " + nb::cast<std::string>(nb::repr(key)));
      const std::string k = nb::cast<std::string>(key);
      n[k] = to_node(value, where.empty() ? k : where + "." + k);
    }
    return n;
  }
  if (nb::isinstance<nb::list>(v) || nb::isinstance<nb::tuple>(v)) {
    YAML::Node n(YAML::NodeType::Sequence);
    std::size_t i = 0;
    for (nb::handle item : v) n.push_back(to_node(item, where + "." + std::to_string(i++)));
    return n;
  }
  // numpy scalars and the like: as the number or text they convert to
  if (nb::hasattr(v, "item") && !nb::hasattr(v, "__len__")) return to_node(v.attr("item")(), where);
  throw ConfigError((where.empty() ? std::string("config") : where) + ": " +
                    nb::cast<std::string>(nb::repr(v)) + " is not a YAML value (use dict, list, str, number, bool or None)");
}

}  // namespace

std::string yaml_text(nb::handle value, const std::string& where, bool flow) {
  YAML::Emitter e;
  if (flow) e << YAML::Flow;
  e << to_node(value, where);
  return e.c_str();
}

NumericArray numeric_array(const FloatArray& a, const std::string& key) {
  NumericArray r;
  r.origin = key;
  r.key = "train's " + key + " argument";
  for (std::size_t d = 0; d < a.ndim(); ++d) r.shape.push_back(a.shape(d));
  r.values.assign(a.data(), a.data() + a.size());
  return r;
}

NumpyArray to_numpy(std::vector<float>&& values, std::vector<std::size_t> shape) {
  auto* owned = new std::vector<float>(std::move(values));
  nb::capsule owner(owned, [](void* p) noexcept { delete static_cast<std::vector<float>*>(p); });
  return NumpyArray(owned->data(), shape.size(), shape.data(), owner);
}

NumpyArray to_numpy(const Array& a) {
  std::vector<std::size_t> shape(a.shape.begin(), a.shape.end());
  return to_numpy(std::vector<float>(a.data), std::move(shape));
}

}  // namespace tn::py
