// The names each enumerated config key takes, for shell completion of `--set key=` (turbanet
// completion). Written from the reader's own enums and lists; tests/test_install.cpp checks each
// against the reader's "allowed: ..." message for the key, so the two cannot silently differ.
#pragma once
#include <string>
#include <utility>
#include <vector>

namespace tn::cfg {

// (key path as in key_paths(), its names in the reader's order), sorted by key path.
std::vector<std::pair<std::string, std::vector<std::string>>> key_values();

}  // namespace tn::cfg
