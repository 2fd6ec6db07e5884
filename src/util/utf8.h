// UTF-8 validation of text that came from a file or the command line, before it reaches JSON,
// an HDF5 string, a message on the terminal or another program (nlohmann::json, h5py and the
// ONNX and NumPy writers refuse or mangle malformed UTF-8 long after the file was read).
#pragma once
#include <cstddef>
#include <string>
#include <string_view>

namespace tn {

// The offset of the first byte of `s` that is not part of a well-formed UTF-8 sequence
// (RFC 3629: no overlong forms, no surrogates, nothing above U+10FFFF), or npos when `s` is
// valid. A sequence cut off by the end of `s` is invalid at its first byte.
std::size_t invalid_utf8(std::string_view s);

// "byte 0xff at offset 12": where invalid_utf8 found the bad byte, for messages about text
// without lines (an HDF5 string or attribute).
std::string invalid_utf8_where(std::string_view s, std::size_t at);

// "byte 0xFF is not valid UTF-8; text must be UTF-8 (...iconv...)": the problem with the byte
// of `s` at `at` (from invalid_utf8), and how to fix it.
std::string utf8_problem(std::string_view s, std::size_t at);

// 1-based line and column (in bytes) of offset `at` in `text`, for "file:line:column".
struct TextPosition {
  std::size_t line = 1, column = 1;
};
TextPosition text_position(std::string_view text, std::size_t at);

}  // namespace tn
