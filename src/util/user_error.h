// The base of every error a user can fix (a bad config, data, argument or run file; a file
// that cannot be written) and the exit code it ends the command with. The lowest layer, so
// that every layer may throw one; cli/main.cpp reports them, once.
#pragma once
#include <exception>
#include <stdexcept>
#include <string>

namespace tn {

// Exit codes of user errors: bad input (config, data, arguments, a run file read) and an I/O
// failure (an output that cannot be written).
inline constexpr int kExitBadInput = 2, kExitIoFailure = 1;

// what() is the whole message a person reads (what, where, how to fix); exit_code() is
// kExitBadInput unless the thrower says the error is an I/O failure.
class UserError : public std::runtime_error {
 public:
  explicit UserError(const std::string& what, int exit_code = kExitBadInput)
      : std::runtime_error(what), exit_code_(exit_code) {}
  int exit_code() const { return exit_code_; }

 private:
  int exit_code_;
};

// The exit code `e` ends a command with: a UserError's own, else kExitIoFailure (an internal
// error).
inline int exit_code_of(const std::exception& e) {
  const auto* user = dynamic_cast<const UserError*>(&e);
  return user ? user->exit_code() : kExitIoFailure;
}

}  // namespace tn
