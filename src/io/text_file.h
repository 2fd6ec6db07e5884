// Text output files (CSV tables, JSON reports) written whole or not at all.
#pragma once
#include <string>

namespace tn {

// Writes `text` to a temporary file beside `path`, then renames it over `path`, so an
// existing file is either kept or replaced whole. Throws RunFileError (exit 1) naming the file.
void write_text_atomically(const std::string& path, const std::string& text);

}  // namespace tn
