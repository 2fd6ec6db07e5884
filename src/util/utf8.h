// UTF-8 validation of text that comes from files, before it reaches JSON or a terminal.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>

namespace tn {

// The offset of the first byte of `text` that does not begin a complete, well-formed UTF-8
// sequence (RFC 3629: no overlong forms, no surrogates, nothing above U+10FFFF), or
// std::string_view::npos when all of `text` is valid UTF-8.
std::size_t invalid_utf8_at(std::string_view text);

// "byte 0xff at offset 12": where invalid_utf8_at found the bad byte, for messages.
std::string invalid_utf8_where(std::string_view text, std::size_t at);

}  // namespace tn
