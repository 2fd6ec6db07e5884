// Text output files (CSV tables, JSON reports) written whole or not at all.
#pragma once
#include <string>

namespace tn {

// Writes `text` to `path` with io::write_file_atomically (io/atomic_file.h): an existing file is
// kept or replaced whole; with replace false it is never replaced. Throws RunFileError (exit 1)
// naming the file.
void write_text_atomically(const std::string& path, const std::string& text, bool replace = true);

}  // namespace tn
