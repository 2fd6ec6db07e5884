// Advisory locks on output files (see io/file_lock.h).
#include "io/file_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <thread>
#include <utility>

#include "io/atomic_file.h"
#include "io/fd.h"
#include "io/run_file.h"

namespace tn::io {
namespace {

namespace fs = std::filesystem;

// The lock files of the locks held, for remove_lock_files_now (a signal handler): a slot's
// path is written before it is marked used, and marked unused before the file is removed.
// A training run holds two; a lock beyond the slots is released as usual but not by a signal.
constexpr int kSlots = 8;
char g_lock_paths[kSlots][4096];
volatile std::sig_atomic_t g_lock_used[kSlots] = {};

int publish_lock(const std::string& path) {
  if (path.size() >= sizeof g_lock_paths[0]) return -1;
  for (int i = 0; i < kSlots; ++i)
    if (!g_lock_used[i]) {
      std::memcpy(g_lock_paths[i], path.c_str(), path.size() + 1);
      g_lock_used[i] = 1;
      return i;
    }
  return -1;
}

// Printable ASCII of `text`, at most `limit` bytes, anything else as '?': the holder's text
// comes from a file anyone could have written and goes to the terminal.
std::string printable(const std::string& text, std::size_t limit) {
  std::string r;
  for (char c : text.substr(0, limit)) r += c >= 0x20 && c < 0x7f ? c : '?';
  return text.size() > limit ? r + "..." : r;
}

std::string host_name() {
  char host[256] = {};
  return ::gethostname(host, sizeof host - 1) == 0 ? printable(host, 64) : "";
}

constexpr const char* kRunHold = "run";

// "<pid> <host> <write|run>\n<command line>\n": what a waiting process learns about the holder.
std::string holder_text(Hold hold) {
  std::ifstream f("/proc/self/cmdline", std::ios::binary);
  std::string command((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  while (!command.empty() && command.back() == '\0') command.pop_back();
  for (char& c : command) c = c == '\0' ? ' ' : c;
  return std::to_string(::getpid()) + " " + host_name() + " " + (hold == Hold::Run ? kRunHold : "write") + "\n" +
         printable(command, 300) + "\n";
}

// Who holds the lock of `fd`, from holder_text: "process 1234 (turbanet train c.yaml)" or
// "process 1234 on host n7 (...)" ("another process" before it has written its text), and
// whether it holds it for a run.
struct Holder {
  std::string who = "another process";
  bool run = false;
};

Holder read_holder(int fd) {
  char buf[512];
  const ssize_t n = ::pread(fd, buf, sizeof buf, 0);
  const std::string text(buf, n > 0 ? static_cast<std::size_t>(n) : 0);
  const std::size_t line = text.find('\n');
  std::istringstream head(text.substr(0, line == std::string::npos ? 0 : line));
  std::string pid, host, hold;
  if (!(head >> pid >> host >> hold) || pid.find_first_not_of("0123456789") != std::string::npos) return {};
  const std::size_t end = text.find('\n', line + 1);
  const std::string command = printable(text.substr(line + 1, end == std::string::npos ? end : end - line - 1), 300);
  host = printable(host, 64);
  return {"process " + pid + (host == host_name() ? "" : " on host " + host) + (command.empty() ? "" : " (" + command + ")"),
          hold == kRunHold};
}

}  // namespace

FileLock::FileLock(int fd, std::string lock_path) : fd_(fd), lock_path_(std::move(lock_path)) {
  slot_ = publish_lock(lock_path_);
}

FileLock::FileLock(FileLock&& o) noexcept
    : fd_(std::exchange(o.fd_, -1)), slot_(std::exchange(o.slot_, -1)), lock_path_(std::move(o.lock_path_)) {}

FileLock& FileLock::operator=(FileLock&& o) noexcept {
  if (this != &o) {
    reset();
    fd_ = std::exchange(o.fd_, -1);
    slot_ = std::exchange(o.slot_, -1);
    lock_path_ = std::move(o.lock_path_);
  }
  return *this;
}

void FileLock::reset() {
  if (fd_ < 0) return;
  if (slot_ >= 0) g_lock_used[std::exchange(slot_, -1)] = 0;
  ::unlink(lock_path_.c_str());  // while held: a process waiting on this file sees it gone and retries
  ::close(std::exchange(fd_, -1));
}

void remove_lock_files_now() {
  for (int i = 0; i < kSlots; ++i)
    if (g_lock_used[i]) ::unlink(g_lock_paths[i]);
}

LockAttempt lock_file(const std::string& path, Hold hold) {
  const std::string lock_path = hidden_beside(write_target(path), ".lock", 5);
  const auto fail = [&](const std::string& what) {
    throw RunFileError("cannot lock '" + path + "' (" + what + " '" + lock_path + "'): " + std::strerror(errno));
  };
  std::error_code ec;
  fs::create_directories(fs::path(lock_path).parent_path(), ec);
  const auto deadline = std::chrono::steady_clock::now() + kWriteWait;
  for (auto pause = std::chrono::milliseconds(1);; pause = std::min(pause * 2, std::chrono::milliseconds(50))) {
    // Never through a symbolic link; read-only where another user's lock file allows no more
    // (flock needs no write access on a local file system).
    Fd fd(::open(lock_path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0666));
    if (fd.fd < 0 && errno == EACCES) fd.reset(::open(lock_path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
    if (fd.fd < 0) fail("creating its lock file");
    // A file system without locks (ENOLCK: NFS without its lock daemon) makes it a lock in name
    // only: writers go on as they did before there were locks, rather than not at all.
    if (::flock(fd.fd, LOCK_EX | LOCK_NB) == 0 || errno == ENOLCK || errno == EOPNOTSUPP) {
      if (!same_file(fd.fd, lock_path.c_str())) continue;  // removed by its last holder meanwhile: lock the new one
      const std::string text = holder_text(hold);  // best effort: a waiter then names "another process"
      [[maybe_unused]] const bool told = ::ftruncate(fd.fd, 0) == 0 &&
                                         ::pwrite(fd.fd, text.data(), text.size(), 0) == static_cast<ssize_t>(text.size());
      return {FileLock(std::exchange(fd.fd, -1), lock_path), ""};
    }
    if (errno == EINTR) continue;
    if (errno != EWOULDBLOCK) fail("locking");
    const Holder holder = read_holder(fd.fd);
    if (holder.run || std::chrono::steady_clock::now() >= deadline) return {FileLock(), holder.who};
    std::this_thread::sleep_for(pause);
  }
}

}  // namespace tn::io
