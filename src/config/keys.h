// The keys a configuration may hold, written once: the reader checks every map of a config
// against its section here (Field::check_keys), and shell completion offers the same key
// paths for --set (turbanet completion), so the two cannot disagree.
#pragma once
#include <string>
#include <utility>
#include <vector>

namespace tn::cfg {

// A map key and the selector values (e.g. optimizer types) it applies to; empty = all.
struct KeyRule {
  KeyRule(const char* k) : key(k) {}  // NOLINT: implicit, so {"a", "b"} lists keys
  KeyRule(const char* k, std::vector<std::string> types) : key(k), applies_to(std::move(types)) {}
  std::string key;
  std::vector<std::string> applies_to;
  bool applies(const std::string& selected) const;
};

// One kind of map in a configuration: its name, the key path of the map ("optimizer",
// "model.layers.N": every layer; a name in parentheses for a form a value may take wherever
// it is allowed, e.g. "(per-member values)"), and the keys allowed in it.
struct KeySection {
  std::string name;
  std::vector<KeyRule> keys;
};

// Every section, root ("") first.
const std::vector<KeySection>& key_sections();
// The keys of the section named `name` (std::logic_error for a name not in key_sections()).
const std::vector<KeyRule>& section_keys(const std::string& name);

// Every key path --set can name, dotted: "optimizer", "optimizer.lr", "model.layers.0.units"
// (the first layer standing for each), sorted; forms in parentheses are left out.
std::vector<std::string> key_paths();

}  // namespace tn::cfg
