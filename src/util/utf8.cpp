// UTF-8 validation (util/utf8.h).
#include "util/utf8.h"

#include <cstdio>

namespace tn {

std::size_t invalid_utf8(std::string_view s) {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(s[i]); };
  for (std::size_t i = 0; i < s.size();) {
    const unsigned char c = byte(i);
    if (c < 0x80) {
      ++i;
      continue;
    }
    // The sequence's length and the allowed range of its second byte (RFC 3629, table 3-7 of
    // the Unicode standard): E0 and F0 exclude overlong forms, ED surrogates, F4 > U+10FFFF.
    std::size_t n = 0;
    unsigned char lo = 0x80, hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) n = 2;
    else if (c >= 0xE0 && c <= 0xEF) n = 3, lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
    else if (c >= 0xF0 && c <= 0xF4) n = 4, lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
    else return i;
    if (i + n > s.size() || byte(i + 1) < lo || byte(i + 1) > hi) return i;
    for (std::size_t k = 2; k < n; ++k)
      if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return i;
    i += n;
  }
  return std::string_view::npos;
}

std::string invalid_utf8_where(std::string_view s, std::size_t at) {
  char where[64];
  std::snprintf(where, sizeof where, "byte 0x%02x at offset %zu", static_cast<unsigned>(static_cast<unsigned char>(s[at])), at);
  return where;
}

std::string utf8_problem(std::string_view s, std::size_t at) {
  char hex[8];
  std::snprintf(hex, sizeof hex, "0x%02X", at < s.size() ? static_cast<unsigned char>(s[at]) : 0u);
  return std::string("byte ") + hex + " is not valid UTF-8; text must be UTF-8 (a Latin-1 file converts with iconv -f latin1 -t utf-8)";
}

TextPosition text_position(std::string_view text, std::size_t at) {
  TextPosition p;
  for (std::size_t i = 0; i < at && i < text.size(); ++i) {
    if (text[i] == '\n') ++p.line, p.column = 1;
    else ++p.column;
  }
  return p;
}

}  // namespace tn
