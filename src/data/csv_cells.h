// Cells of a CSV file, one at a time: numbers, the spellings of a missing value, text
// (categories) against numbers, the delimiter of a first line, UTF-8 positions, and the
// header names in messages. Internal to the CSV reader (data/csv.cpp).
#pragma once
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace tn::csv {

// 'text', for messages.
std::string quoted(std::string_view s);
// Without leading and trailing spaces, tabs and line ends.
std::string_view trim(std::string_view s);
// "1 row", "3 rows"
std::string plural(std::size_t n, const char* word);
// The first 30 header names, quoted ("... (12 more; -v lists them all)"), or all of them.
std::string column_list(const std::vector<std::string>& header, bool all = false);
// Parses a whole (trimmed) cell as a finite float; throws DataError naming `at` and `column`.
float to_float(std::string_view raw, const std::string& at, const std::string& column);
// The delimiter of a file whose first line is `line`: the most frequent of , ; tab | outside
// `quote`d text (the first listed on a tie), else ','.
char detect_delimiter(std::string_view line, char quote);
// "tab" or "';'"
std::string char_name(char c);
// The spellings of a missing value (data.missing), as pandas reads them by default.
bool is_missing(std::string_view s);
// Whether `s` (trimmed) reads as a number, as to_float would take it.
bool is_number(std::string_view s);
// An auto column is categorical when its first value is text: not a number and not starting
// like one (a digit, sign or point), so "1,5" or "12kg" stay errors in a numeric column.
bool is_text(std::string_view s);
// "0", "7", "12" (no sign, no leading zeros): labels that are kept as class indices.
bool is_integer_label(std::string_view s);
// The offset in `row` (the raw text of one row, perhaps over several lines) of the first byte
// of field `k` that is not valid UTF-8, or npos: fields split at `delimiter` outside `quote`d
// text, as libcsv splits them.
std::size_t invalid_utf8_in_field(std::string_view row, std::size_t k, char delimiter, char quote);

}  // namespace tn::csv
