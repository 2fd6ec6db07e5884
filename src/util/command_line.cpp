// The recorded command line (util/command_line.h).
#include "util/command_line.h"

namespace tn {

namespace {
std::string& recorded() {
  static std::string line;
  return line;
}
}  // namespace

std::string shell_quoted(const std::string& word) {
  bool plain = !word.empty();
  for (const char ch : word) {
    const bool safe = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
                      std::string("@%+=:,./_-").find(ch) != std::string::npos;
    plain = plain && safe;
  }
  if (plain) return word;
  std::string q = "'";
  for (const char ch : word) {
    if (ch == '\'') q += "'\\''";
    else q += ch;
  }
  q += '\'';
  return q;
}

void record_command_line(int argc, const char* const* argv) {
  std::string line;
  for (int i = 0; i < argc; ++i) {
    if (i > 0) line += ' ';
    line += shell_quoted(argv[i]);
  }
  recorded() = line;
}

const std::string& command_line() { return recorded(); }

}  // namespace tn
