// Atomic whole-file writes (see io/atomic_file.h).
#include "io/atomic_file.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <utility>

#include "io/run_file.h"

namespace tn::io {
namespace {

namespace fs = std::filesystem;

// The temporary file being written, for remove_temporary_now (a signal handler): its path,
// published before the file is created and withdrawn once it is moved into place or removed.
char g_temporary[4096];
volatile std::sig_atomic_t g_has_temporary = 0;

// Removes the temporary file unless the write succeeded.
struct TempFile {
  fs::path path;
  bool keep = false;
  explicit TempFile(fs::path p) : path(std::move(p)) {
    const std::string& s = path.native();
    if (s.size() >= sizeof g_temporary) return;  // not published: a signal may then leave it
    std::memcpy(g_temporary, s.c_str(), s.size() + 1);
    g_has_temporary = 1;
  }
  ~TempFile() {
    std::error_code ec;
    if (!keep) fs::remove(path, ec);
    g_has_temporary = 0;
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
};

// Closes a POSIX file descriptor when leaving scope (unless already closed).
struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

// Prefix of every write error: "cannot write run file 'x.h5': ".
struct Failure {
  std::string prefix;
  [[noreturn]] void fail(const std::string& why) const { throw RunFileError(prefix + why); }
  [[noreturn]] void io(const std::string& what, int err) const {
    fail(what + ": " + std::strerror(err));
  }
};

// Writes `bytes` to `tmp` and fsyncs it; a full disk fails here with ENOSPC.
void write_synced(const fs::path& tmp, std::string_view bytes, const Failure& f, int mode) {
  std::string where = tmp.string();  // (not "'" + tmp.string(): GCC 12's -Wrestrict misfires)
  where = "'" + where + "'";
  Fd file{::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666)};
  if (file.fd < 0) f.io("creating " + where, errno);
  if (mode >= 0 && ::fchmod(file.fd, static_cast<mode_t>(mode)) != 0) f.io("setting the permissions of " + where, errno);
  for (std::size_t done = 0; done < bytes.size();) {
    const ssize_t n = ::write(file.fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) f.io("writing " + where, errno);
    done += static_cast<std::size_t>(n);
  }
  if (::fsync(file.fd) != 0) f.io("fsync of " + where, errno);
  if (::close(std::exchange(file.fd, -1)) != 0) f.io("closing " + where, errno);
}

// Best effort: makes the rename itself durable.
void fsync_dir(const fs::path& dir) {
  Fd d{::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)};
  if (d.fd >= 0) ::fsync(d.fd);
}

fs::path parent_dir(const fs::path& target) {
  return target.has_parent_path() ? target.parent_path() : fs::path(".");
}

void create_parent_dirs(const fs::path& target, const Failure& f) {
  if (!target.has_parent_path()) return;
  std::error_code ec;
  fs::create_directories(target.parent_path(), ec);
  if (ec) f.fail("cannot create directory '" + target.parent_path().string() + "': " + ec.message());
}

// ".<name>.tmp-<pid>-<n>" beside `target`: unique per process and call.
fs::path temp_path_for(const fs::path& target) {
  static std::atomic<unsigned> counter{0};
  std::string name = target.filename().string();
  name = "." + name + ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
  return parent_dir(target) / name;
}

// Removes ".<name>.tmp-<pid>-<n>" files beside `target` whose process is gone (killed writes).
void remove_stale_temporaries(const fs::path& target) {
  const std::string prefix = "." + target.filename().string() + ".tmp-";
  std::error_code ec;
  for (fs::directory_iterator it(parent_dir(target), ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.rfind(prefix, 0) != 0) continue;
    const std::string rest = name.substr(prefix.size());
    const std::size_t dash = rest.find('-');
    if (dash == 0 || dash == std::string::npos || rest.find_first_not_of("0123456789-") != std::string::npos) continue;
    const long pid = std::stol(rest.substr(0, dash));
    if (pid <= 0 || pid == ::getpid() || ::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;
    std::error_code rm;
    fs::remove(it->path(), rm);
  }
}

// The file a write to `path` replaces: a symbolic link's target (the link stays), else `path`.
fs::path resolve_target(const fs::path& path) {
  std::error_code ec;
  if (!fs::is_symlink(fs::symlink_status(path, ec))) return path;
  const fs::path to = fs::read_symlink(path, ec);
  if (ec) return path;
  return to.is_absolute() ? to : parent_dir(path) / to;
}

// "<stem>.<pid>-<n><ext>" beside `target`, for results that must not replace it.
fs::path aside_path(const fs::path& target, unsigned n) {
  return parent_dir(target) / (target.stem().string() + "." + std::to_string(::getpid()) + "-" + std::to_string(n) +
                               target.extension().string());
}

}  // namespace

void remove_temporary_now() {
  if (g_has_temporary) ::unlink(g_temporary);
}

void write_file_atomically(const std::string& path, const std::string& kind, std::string_view bytes, Replace replace) {
  const Failure f{"cannot write " + kind + " '" + path + "': "};
  if (!fs::path(path).has_filename()) throw RunFileError(kind + " path '" + path + "' names no file");
  const fs::path target = resolve_target(fs::path(path));
  create_parent_dirs(target, f);
  remove_stale_temporaries(target);
  struct stat old {};
  const int mode = ::stat(target.c_str(), &old) == 0 ? static_cast<int>(old.st_mode & 07777) : -1;
  TempFile tmp{temp_path_for(target)};
  write_synced(tmp.path, bytes, f, mode);
  if (replace == Replace::Yes) {
    std::error_code ec;
    fs::rename(tmp.path, target, ec);
    if (ec) f.fail("renaming '" + tmp.path.string() + "' over it failed: " + ec.message());
  } else if (::link(tmp.path.c_str(), target.c_str()) != 0) {
    const int err = errno;
    if (err != EEXIST) f.io("linking '" + tmp.path.string() + "' into place", err);
    // Created by someone else while we worked: keep both.
    for (unsigned n = 0;; ++n) {
      const fs::path aside = aside_path(target, n);
      if (::link(tmp.path.c_str(), aside.c_str()) == 0) {
        fsync_dir(parent_dir(target));
        f.fail("it was created by another process meanwhile and is left as it is; this result was written to '" +
               aside.string() + "'");
      }
      if (errno != EEXIST) f.io("linking '" + tmp.path.string() + "' beside it", errno);
    }
  }
  if (replace == Replace::No) {
    std::error_code ec;
    fs::remove(tmp.path, ec);  // the link holds the bytes
  }
  tmp.keep = true;
  fsync_dir(parent_dir(target));
}

}  // namespace tn::io
