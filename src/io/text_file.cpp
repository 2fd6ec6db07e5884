// Atomic text files: a temporary name beside the target, then a rename.
#include "io/text_file.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "io/run_file.h"

namespace tn {

void write_text_atomically(const std::string& path, const std::string& text) {
  namespace fs = std::filesystem;
  const fs::path target(path), tmp = target.string() + ".tmp";
  std::error_code ec;
  {
    std::ofstream out(tmp, std::ios::binary);
    out << text;
    out.flush();
    if (!out) {
      fs::remove(tmp, ec);
      throw RunFileError("cannot write '" + path + "': " + std::strerror(errno));
    }
  }
  fs::rename(tmp, target, ec);
  if (ec) {
    const std::string why = ec.message();
    fs::remove(tmp, ec);
    throw RunFileError("cannot write '" + path + "': " + why);
  }
}

}  // namespace tn
