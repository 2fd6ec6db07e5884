// Atomic text files.
#include "io/text_file.h"

#include "io/atomic_file.h"

namespace tn {

void write_text_atomically(const std::string& path, const std::string& text, bool replace) {
  io::write_file_atomically(path, "file", text, replace ? io::Replace::Yes : io::Replace::No);
}

}  // namespace tn
