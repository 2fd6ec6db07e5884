// Picking members out of whole-swarm arrays and putting them back: what the sub-swarms of
// halving's survivors (train/survivors.h) and of per-member architectures
// (train/architectures.h) use to move between their numbering and the swarm's.
#pragma once
#include <algorithm>
#include <cstddef>
#include <vector>

namespace tn {

// Rows `members` of a [S, cols] history, columns [0, keep).
inline std::vector<float> gather_rows(const std::vector<float>& h, int cols, const std::vector<int>& members, int keep) {
  std::vector<float> r;
  if (h.empty()) return r;
  for (int s : members) {
    const auto row = h.begin() + static_cast<std::ptrdiff_t>(s) * cols;
    r.insert(r.end(), row, row + keep);
  }
  return r;
}

// Entries `members` of a per-member array (empty stays empty).
template <class T>
std::vector<T> pick(const std::vector<T>& v, const std::vector<int>& members) {
  std::vector<T> r;
  if (v.empty()) return r;
  for (int s : members) r.push_back(v[static_cast<std::size_t>(s)]);
  return r;
}

// part[i] into v[members[i]] (nothing when v is empty).
template <class T>
void put(std::vector<T>& v, const std::vector<T>& part, const std::vector<int>& members) {
  if (v.empty()) return;
  for (std::size_t i = 0; i < members.size() && i < part.size(); ++i) v[static_cast<std::size_t>(members[i])] = part[i];
}

}  // namespace tn
