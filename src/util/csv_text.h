// Writing CSV text: every CSV file turbanet writes (data generate, predict, sweep) quotes its
// fields here, so a column name or category holding a comma, a quote or a line break reads
// back as written, with our reader, Python's csv module or a spreadsheet.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace tn {

// One field as RFC 4180 writes it: unchanged, or in double quotes with each double quote
// doubled when it holds a comma, a double quote, CR or LF ('a,"b"' -> '"a,""b"""').
std::string csv_field(std::string_view s);

// Appends `cells` to `out` as one CSV line: each csv_field, separated by commas, then "\n".
void append_csv_line(std::string& out, const std::vector<std::string>& cells);

}  // namespace tn
