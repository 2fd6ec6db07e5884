// Atomic whole-file writes (see io/atomic_file.h).
#include "io/atomic_file.h"

#include <fcntl.h>
#include <libdeflate.h>
#include <limits.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <optional>
#include <system_error>
#include <utility>

#include "io/fd.h"
#include "io/run_file_error.h"

namespace tn::io {
namespace {

namespace fs = std::filesystem;

// Symbolic links followed from an output path before it counts as a loop (Linux's MAXSYMLINKS).
constexpr int kMaxLinks = 40;
// Room a temporary name keeps for ".tmp-<pid>-<n>" (two numbers of up to 10 digits), so that the
// name part, and with it the prefix remove_stale_temporaries looks for, does not depend on them.
constexpr std::size_t kTempTail = 26;
// Temporary names tried before giving up (each taken one was planted or left by someone else).
constexpr int kTempTries = 1000;

// The temporary file being written, for remove_temporary_now (a signal handler): its path,
// published before the file is created and withdrawn once it is moved into place or removed.
char g_temporary[4096];
volatile std::sig_atomic_t g_has_temporary = 0;

void publish_temporary(const fs::path& p) {
  const std::string& s = p.native();
  if (s.size() >= sizeof g_temporary) return;  // not published: a signal may then leave it
  std::memcpy(g_temporary, s.c_str(), s.size() + 1);
  g_has_temporary = 1;
}

// Prefix of every write error: "cannot write run file 'x.h5': ".
struct Failure {
  std::string prefix;
  [[noreturn]] void fail(const std::string& why) const { throw RunFileError(prefix + why); }
  [[noreturn]] void io(const std::string& what, int err) const {
    fail(what + ": " + std::strerror(err));
  }
};

fs::path parent_dir(const fs::path& target) {
  return target.has_parent_path() ? target.parent_path() : fs::path(".");
}

// The longest file name `dir`'s file system takes (255 on Linux's, less on a few).
std::size_t name_limit(const fs::path& dir) {
  const long m = ::pathconf(dir.c_str(), _PC_NAME_MAX);
  return m > 0 && m < NAME_MAX ? static_cast<std::size_t>(m) : NAME_MAX;
}

// The end of the chain of symbolic links at `path` (`path` when it is none, or missing); empty
// when the links loop or are longer than the kernel would follow (a directory on the way too).
std::optional<fs::path> end_of_links(const fs::path& path) {
  fs::path p = path;
  for (int hops = 0; hops <= kMaxLinks; ++hops) {
    struct stat st {};
    if (::lstat(p.c_str(), &st) != 0) return errno == ELOOP ? std::nullopt : std::optional<fs::path>(p);
    if (!S_ISLNK(st.st_mode)) return p;
    std::error_code ec;
    const fs::path to = fs::read_symlink(p, ec);
    if (ec) return p;
    p = to.is_absolute() ? to : parent_dir(p) / to;
  }
  return std::nullopt;
}

std::string loop_message(const std::string& path) {
  return "'" + path + "' is a loop of symbolic links; point the link at a file, or write elsewhere";
}

// "" when `target`'s name fits `limit`, else why not.
std::string name_too_long(const fs::path& target, std::size_t limit) {
  const std::size_t n = target.filename().native().size();
  if (n <= limit) return "";
  return "its file name is " + std::to_string(n) + " bytes long, longer than the " + std::to_string(limit) +
         " bytes this file system allows; choose a shorter name";
}

// Room for the name part of ".<name><tail>" when the tail takes up to `tail` bytes.
std::size_t name_room(std::size_t limit, std::size_t tail) { return limit > 1 + tail ? limit - 1 - tail : 0; }

// ".<name><tail>" (appended, not "." + name: GCC 12's -Wrestrict misfires on that).
std::string hidden(const std::string& name, std::string_view tail) {
  std::string r = ".";
  r += name;
  r += tail;
  return r;
}

// ".<name>.tmp-" of `target`'s temporary files, the name fitted to leave room for the rest.
std::string temp_prefix(const fs::path& target, std::size_t limit) {
  return hidden(fitted_name(target.filename().string(), name_room(limit, kTempTail)), ".tmp-");
}

// Creates the temporary file ".<name>.tmp-<pid>-<n>" beside `target` for writing, new: never
// through a symbolic link or over an existing file (O_EXCL | O_NOFOLLOW), a taken name moving on
// to the next n. Its path is published for remove_temporary_now before it exists, and it is
// locked (flock, through `lock`, a second descriptor) until closed, so that another process's
// remove_stale_temporaries leaves it alone even where it cannot see this process (another
// machine on a shared file system). Returns the descriptor, or -1 with errno.
int create_temporary(const fs::path& target, std::size_t limit, fs::path& path, Fd& lock) {
  static std::atomic<unsigned> counter{0};
  const std::string name = temp_prefix(target, limit) + std::to_string(::getpid()) + "-";
  for (int tries = 0; tries < kTempTries; ++tries) {
    path = parent_dir(target) / (name + std::to_string(counter++));
    publish_temporary(path);
    Fd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666));
    if (fd.fd < 0) {
      const int err = errno;
      g_has_temporary = 0;
      if (err == EEXIST) continue;
      errno = err;
      return -1;
    }
    // Another's clean-up may have found it in the moment before the lock (and removed it).
    if (::flock(fd.fd, LOCK_EX) == 0 && !same_file(fd.fd, path.c_str())) continue;
    lock.reset(::dup(fd.fd));
    return std::exchange(fd.fd, -1);
  }
  g_has_temporary = 0;
  errno = EEXIST;
  return -1;
}

// The temporary file of one write (create_temporary), removed unless the write succeeded.
struct TempFile {
  fs::path path;
  Fd file, lock;
  bool keep = false;
  TempFile(const fs::path& target, std::size_t limit, const Failure& f) {
    file.fd = create_temporary(target, limit, path, lock);
    if (file.fd >= 0) return;
    if (errno == EEXIST)
      f.fail("the " + std::to_string(kTempTries) + " temporary names up to '" + path.string() +
             "' are all taken by other files; remove them");
    f.io("creating '" + path.string() + "'", errno);
  }
  ~TempFile() {
    if (!keep) ::unlink(path.c_str());  // before the lock goes: no one else removes it
    g_has_temporary = 0;
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
};

// Writes `bytes` to the temporary file and fsyncs it; a full disk fails here with ENOSPC.
void write_synced(TempFile& tmp, std::string_view bytes, const Failure& f, int mode) {
  std::string where = tmp.path.string();  // (not "'" + tmp.path.string(): GCC 12's -Wrestrict misfires)
  where = "'" + where + "'";
  const int fd = tmp.file.fd;
  if (mode >= 0 && ::fchmod(fd, static_cast<mode_t>(mode)) != 0) f.io("setting the permissions of " + where, errno);
  for (std::size_t done = 0; done < bytes.size();) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) f.io("writing " + where, errno);
    done += static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0) f.io("fsync of " + where, errno);
  if (tmp.file.close() != 0) f.io("closing " + where, errno);
}

// Best effort: makes the rename itself durable.
void fsync_dir(const fs::path& dir) {
  Fd d(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (d.fd >= 0) ::fsync(d.fd);
}

void create_parent_dirs(const fs::path& target, const Failure& f) {
  if (!target.has_parent_path()) return;
  std::error_code ec;
  fs::create_directories(target.parent_path(), ec);
  if (ec) f.fail("cannot create directory '" + target.parent_path().string() + "': " + ec.message());
}

// Removes `p` unless a writer holds its lock: a temporary file being written on another machine.
void remove_unless_locked(const fs::path& p) {
  struct stat st {};
  if (::lstat(p.c_str(), &st) != 0) return;
  Fd fd;  // held while removing: a writer that locks it meanwhile sees it gone (create_temporary)
  if (S_ISREG(st.st_mode)) {
    fd.reset(::open(p.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
    if (fd.fd >= 0 && ::flock(fd.fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK) return;
  }
  ::unlink(p.c_str());  // a link or other planted file goes too; what it points to stays
}

// Removes ".<name>.tmp-<pid>-<n>" files beside `target` whose process is gone (killed writes).
void remove_stale_temporaries(const fs::path& target, std::size_t limit) {
  const std::string prefix = temp_prefix(target, limit);
  std::error_code ec;
  for (fs::directory_iterator it(parent_dir(target), ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.rfind(prefix, 0) != 0) continue;
    const std::string rest = name.substr(prefix.size());
    const std::size_t dash = rest.find('-');
    if (dash == 0 || dash == std::string::npos || dash > 10 || rest.find_first_not_of("0123456789-") != std::string::npos)
      continue;
    const long pid = std::stol(rest.substr(0, dash));
    if (pid <= 0 || pid == ::getpid() || ::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;
    remove_unless_locked(it->path());
  }
}

// "<stem>.<pid>-<n><ext>" beside `target`, for results that must not replace it.
fs::path aside_path(const fs::path& target, unsigned n, std::size_t limit) {
  std::string stem = target.stem().string(), ext = target.extension().string();
  if (ext.size() > 32) {  // not an extension worth keeping whole
    stem += ext;
    ext.clear();
  }
  std::string tail = hidden(std::to_string(::getpid()), "-");
  tail += std::to_string(n);
  tail += ext;
  std::string name = fitted_name(stem, limit > tail.size() ? limit - tail.size() : 1);
  name += tail;
  return parent_dir(target) / name;
}

}  // namespace

std::string fitted_name(const std::string& name, std::size_t room) {
  if (name.size() <= room) return name;
  constexpr std::size_t kTag = 9;  // "~" and 8 hex digits
  if (room <= kTag) return name.substr(0, room);
  std::size_t keep = room - kTag;
  while (keep > 0 && (static_cast<unsigned char>(name[keep]) & 0xC0) == 0x80) --keep;  // inside a character
  char tag[kTag + 1];
  std::snprintf(tag, sizeof tag, "~%08x", static_cast<unsigned>(libdeflate_crc32(0, name.data(), name.size())));
  return name.substr(0, keep) + tag;
}

std::string with_suffix(const std::string& base, const std::string& suffix) {
  const fs::path b(base);
  const std::string name = b.filename().string();
  if (name.empty() || name.size() + suffix.size() <= NAME_MAX) return base + suffix;
  return (b.parent_path() / (fitted_name(name, NAME_MAX - suffix.size()) + suffix)).string();
}

std::string hidden_beside(const std::string& target, const std::string& tail, std::size_t room) {
  const fs::path t(target), dir = parent_dir(t);
  return (dir / hidden(fitted_name(t.filename().string(), name_room(name_limit(dir), room)), tail)).string();
}

std::string write_target(const std::string& path) {
  const std::optional<fs::path> end = end_of_links(path);
  if (!end) throw RunFileError(loop_message(path));
  return end->string();
}

std::string output_problem(const std::string& path) {
  const std::optional<fs::path> target = end_of_links(path);
  if (!target) return loop_message(path);
  const fs::path dir = parent_dir(*target);
  const std::size_t limit = name_limit(dir);
  if (const std::string why = name_too_long(*target, limit); !why.empty()) return "'" + path + "': " + why;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return "";  // the write creates it (or says why it cannot)
  fs::path probe;
  Fd lock;
  Fd file(create_temporary(*target, limit, probe, lock));
  if (file.fd < 0) return "cannot write to directory '" + dir.string() + "': " + std::strerror(errno);
  ::unlink(probe.c_str());
  g_has_temporary = 0;
  return "";
}

void remove_temporary_now() {
  if (g_has_temporary) ::unlink(g_temporary);
}

void write_file_atomically(const std::string& path, const std::string& kind, std::string_view bytes, Replace replace) {
  const Failure f{"cannot write " + kind + " '" + path + "': "};
  if (!fs::path(path).has_filename()) throw RunFileError(kind + " path '" + path + "' names no file");
  const std::optional<fs::path> end = end_of_links(path);
  if (!end) f.fail(loop_message(path));
  const fs::path& target = *end;
  create_parent_dirs(target, f);
  const std::size_t limit = name_limit(parent_dir(target));
  if (const std::string why = name_too_long(target, limit); !why.empty()) f.fail(why);
  remove_stale_temporaries(target, limit);
  struct stat old {};
  const int mode = ::stat(target.c_str(), &old) == 0 ? static_cast<int>(old.st_mode & 07777) : -1;
  TempFile tmp(target, limit, f);
  write_synced(tmp, bytes, f, mode);
  if (replace == Replace::Yes) {
    std::error_code ec;
    fs::rename(tmp.path, target, ec);
    if (ec) f.fail("renaming '" + tmp.path.string() + "' over it failed: " + ec.message());
  } else if (::link(tmp.path.c_str(), target.c_str()) != 0) {
    const int err = errno;
    if (err != EEXIST) f.io("linking '" + tmp.path.string() + "' into place", err);
    // Created by someone else while we worked: keep both.
    for (unsigned n = 0;; ++n) {
      const fs::path aside = aside_path(target, n, limit);
      if (::link(tmp.path.c_str(), aside.c_str()) == 0) {
        fsync_dir(parent_dir(target));
        f.fail("it was created by another process meanwhile and is left as it is; this result was written to '" +
               aside.string() + "'");
      }
      if (errno != EEXIST) f.io("linking '" + tmp.path.string() + "' beside it", errno);
    }
  }
  if (replace == Replace::No) ::unlink(tmp.path.c_str());  // the link holds the bytes
  tmp.keep = true;
  fsync_dir(parent_dir(target));
}

}  // namespace tn::io
