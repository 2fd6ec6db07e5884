// Suggestions for mistyped names (util/suggest.h).
#include "util/suggest.h"

#include <algorithm>
#include <cctype>

namespace tn {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  const auto same = [](char x, char y) {
    return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
  };
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    for (std::size_t j = 1; j <= b.size(); ++j) {
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (same(a[i - 1], b[j - 1]) ? 0 : 1)});
      if (i > 1 && j > 1 && same(a[i - 1], b[j - 2]) && same(a[i - 2], b[j - 1]))
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.size()][b.size()];
}

std::size_t suggestion_limit(std::size_t longer) {
  return std::min(longer / 2, std::max<std::size_t>(2, longer / 3));
}

std::string nearest_name(std::string_view word, const std::vector<std::string>& candidates) {
  std::string best;
  std::size_t best_d = 0;
  for (const std::string& c : candidates) {
    const std::size_t d = edit_distance(word, c);
    if (d <= suggestion_limit(std::max(word.size(), c.size())) && (best.empty() || d < best_d)) best = c, best_d = d;
  }
  return best;
}

std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates) {
  const std::string near = nearest_name(word, candidates);
  return near.empty() ? "" : "; did you mean '" + near + "'?";
}

}  // namespace tn
