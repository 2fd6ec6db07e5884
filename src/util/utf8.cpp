// UTF-8 validation (see util/utf8.h).
#include "util/utf8.h"

#include <cstdio>

namespace tn {

std::size_t invalid_utf8_at(std::string_view text) {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
  for (std::size_t i = 0; i < text.size();) {
    const unsigned char b = byte(i);
    if (b < 0x80) {
      ++i;
      continue;
    }
    // The length of the sequence and the range of its second byte (which excludes overlong
    // forms, surrogates and code points above U+10FFFF); the others are 0x80..0xBF.
    std::size_t n = 0;
    unsigned char lo = 0x80, hi = 0xBF;
    if (b >= 0xC2 && b <= 0xDF) n = 2;
    else if (b == 0xE0) n = 3, lo = 0xA0;
    else if (b == 0xED) n = 3, hi = 0x9F;
    else if (b >= 0xE1 && b <= 0xEF) n = 3;
    else if (b == 0xF0) n = 4, lo = 0x90;
    else if (b >= 0xF1 && b <= 0xF3) n = 4;
    else if (b == 0xF4) n = 4, hi = 0x8F;
    else return i;
    if (i + n > text.size() || byte(i + 1) < lo || byte(i + 1) > hi) return i;
    for (std::size_t k = 2; k < n; ++k)
      if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return i;
    i += n;
  }
  return std::string_view::npos;
}

std::string invalid_utf8_where(std::string_view text, std::size_t at) {
  char where[64];
  std::snprintf(where, sizeof where, "byte 0x%02x at offset %zu", static_cast<unsigned>(static_cast<unsigned char>(text[at])), at);
  return where;
}

}  // namespace tn
