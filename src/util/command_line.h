// The command line of this process as a shell would re-run it (main records it once at start):
// the run file stores it (/meta@command) so a report can say which command made a run.
#pragma once
#include <string>

namespace tn {

// Records argv (the program name first) quoted for a POSIX shell; called once by main.
void record_command_line(int argc, const char* const* argv);
// The recorded line, or "" when nothing was recorded (the commands called as functions, e.g.
// by the tests).
const std::string& command_line();
// `word` quoted for a POSIX shell where it needs it: abc stays abc, a b becomes 'a b'.
std::string shell_quoted(const std::string& word);

}  // namespace tn
