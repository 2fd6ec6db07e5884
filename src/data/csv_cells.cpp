// Cells of a CSV file (data/csv_cells.h).
#include "data/csv_cells.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>

#include "data/dataset.h"
#include "util/utf8.h"

namespace tn::csv {
namespace {

constexpr std::size_t kMaxListedColumns = 30;

}  // namespace

std::string quoted(std::string_view s) {
  std::string q = "'";  // (not "'" + std::string(s): GCC 12's -Wrestrict misfires)
  return q.append(s).append("'");
}

std::string_view trim(std::string_view s) {
  const char* space = " \t\r\n";
  const size_t first = s.find_first_not_of(space);
  if (first == std::string_view::npos) return {};
  return s.substr(first, s.find_last_not_of(space) - first + 1);
}

std::string plural(size_t n, const char* word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

std::string column_list(const std::vector<std::string>& header, bool all) {
  const size_t shown = all ? header.size() : std::min(header.size(), kMaxListedColumns);
  std::string out;
  for (size_t i = 0; i < shown; ++i) out += (i ? ", " : "") + quoted(header[i]);
  if (header.size() > shown)
    out += ", ... (" + std::to_string(header.size() - shown) + " more; -v lists them all)";
  return out;
}

float to_float(std::string_view raw, const std::string& at, const std::string& column) {
  const std::string_view s = trim(raw);
  const std::string where = at + "column " + quoted(column) + ": ";
  if (s.empty())
    throw DataError(where + "the value is empty; fill it in or remove the row (or set data.missing: "
                            "drop_rows, mean or median)");
  std::string_view num = s;
  if (num.size() > 1 && num[0] == '+' && num[1] != '-' && num[1] != '+') num.remove_prefix(1);
  double v = 0;
  const auto [end, ec] = std::from_chars(num.data(), num.data() + num.size(), v);
  if (ec == std::errc::result_out_of_range)
    throw DataError(where + quoted(s) + " is out of range; rescale the column");
  if (ec != std::errc() || end != num.data() + num.size())
    throw DataError(where + quoted(s) + " is not a number; write plain numbers like 1.5 or -2e3");
  if (std::isnan(v))
    throw DataError(where + "NaN is not allowed; remove or impute missing values (data.missing: "
                            "drop_rows, mean or median)");
  if (std::isinf(v))
    throw DataError(where + quoted(s) + " is infinite, which is not allowed; use a finite number");
  if (std::fabs(v) > std::numeric_limits<float>::max())
    throw DataError(where + quoted(s) + " does not fit a 32-bit float; rescale the column");
  return static_cast<float>(v);
}

char detect_delimiter(std::string_view line, char quote) {
  const std::string_view candidates = ",;\t|";
  std::vector<size_t> count(candidates.size(), 0);
  bool quoted_text = false;
  for (char c : line) {
    if (c == quote) quoted_text = !quoted_text;
    if (quoted_text) continue;
    if (const size_t k = candidates.find(c); k != std::string_view::npos) ++count[k];
  }
  const size_t best = static_cast<size_t>(std::max_element(count.begin(), count.end()) - count.begin());
  return count[best] > 0 ? candidates[best] : ',';
}

std::string char_name(char c) { return c == '\t' ? "tab" : quoted(std::string(1, c)); }

bool is_missing(std::string_view s) {
  for (std::string_view m : {"", "NA", "N/A", "NaN", "nan", "null", "NULL"})
    if (s == m) return true;
  return false;
}

bool is_number(std::string_view s) {
  if (s.size() > 1 && s[0] == '+' && s[1] != '-' && s[1] != '+') s.remove_prefix(1);
  double v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return ec == std::errc() && end == s.data() + s.size() && !s.empty();
}

bool is_text(std::string_view s) {
  return !is_number(s) && std::string_view("0123456789+-.").find(s[0]) == std::string_view::npos;
}

bool is_integer_label(std::string_view s) {
  if (s.empty() || (s.size() > 1 && s[0] == '0')) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::size_t invalid_utf8_in_field(std::string_view row, std::size_t k, char delimiter, char quote) {
  std::size_t field = 0, start = 0;
  bool quoted_text = false;
  for (std::size_t i = 0; i <= row.size(); ++i) {
    if (i < row.size() && (quoted_text || row[i] != delimiter)) {
      if (row[i] == quote) quoted_text = !quoted_text;
      continue;
    }
    if (field == k) {
      const std::size_t bad = invalid_utf8(row.substr(start, i - start));
      return bad == std::string_view::npos ? bad : start + bad;
    }
    ++field, start = i + 1;
  }
  return std::string_view::npos;
}

}  // namespace tn::csv
