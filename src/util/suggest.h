// "did you mean 'x'?": the nearest name to a mistyped one, written once for config keys and
// values, CSV column names and subcommands.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace tn {

// Optimal string alignment distance, ignoring ASCII case: the fewest insertions, deletions,
// substitutions and swaps of two adjacent characters that turn a into b ("sdg" -> "sgd": 1).
std::size_t edit_distance(std::string_view a, std::string_view b);

// The most edits a suggestion may be from the word, for a longer name of `longer` characters:
// at most half of it (no suggestion for one letter), two for a word of up to 8 letters and one
// more for every 3 letters after ("gg" -> "g": 1 of 1; "sepal_lenght" -> 4 allowed).
std::size_t suggestion_limit(std::size_t longer);

// The nearest of `candidates` to `word` within suggestion_limit (the first on a tie), or ""
// when none is that close.
std::string nearest_name(std::string_view word, const std::vector<std::string>& candidates);

// "; did you mean 'x'?" for nearest_name, or "" when none is close.
std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace tn
