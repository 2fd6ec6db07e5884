// A POSIX file descriptor closed when it leaves scope, and whether one is the file at a path
// (used inside src/io/).
#pragma once
#include <sys/stat.h>
#include <unistd.h>

#include <utility>

namespace tn::io {

struct Fd {
  int fd = -1;
  Fd() = default;
  explicit Fd(int f) : fd(f) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { close(); }
  // Closes it now, unless already closed: close(2)'s result, 0 when there was nothing to close.
  int close() { return fd >= 0 ? ::close(std::exchange(fd, -1)) : 0; }
  // Closes it and holds `f` instead.
  void reset(int f) {
    close();
    fd = f;
  }
};

// Whether `fd` is the file at `path` now (not followed if a link): the same device and inode.
inline bool same_file(int fd, const char* path) {
  struct stat a {}, b {};
  return ::fstat(fd, &a) == 0 && ::lstat(path, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

}  // namespace tn::io
