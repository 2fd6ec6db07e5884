// Advisory locks on output files (flock), so that the writers of one file take turns and a
// training run owns its files while it works. The lock is on ".<name>.lock" beside the file
// (after its symbolic links), not on the file: every write replaces the file by rename, so a
// lock on its inode would guard a file about to be unlinked. Rather than the directory (which
// leaves nothing behind), a file of its own, because a lock on the directory would make every
// file in it wait for one writer, and NFS takes flock only on a descriptor open for writing,
// which a directory cannot be. The holder removes the lock file on release; a killed process
// leaves it, but the kernel has released its lock, and the next holder takes it and removes it.
#pragma once
#include <chrono>
#include <string>
#include <utility>

namespace tn::io {

// A held lock (or none); released, its lock file removed, when destroyed or reset.
class FileLock {
 public:
  FileLock() = default;
  FileLock(int fd, std::string lock_path);  // holds the lock on `fd`, of the lock file `lock_path`
  FileLock(FileLock&& o) noexcept;
  FileLock& operator=(FileLock&& o) noexcept;
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  ~FileLock() { reset(); }
  bool held() const { return fd_ >= 0; }
  void reset();

 private:
  int fd_ = -1;
  int slot_ = -1;  // where remove_lock_files_now finds it
  std::string lock_path_;
};

// How long a lock is held: for one read-modify-write of the file (eval --save; well under a
// second), or for a whole run (a training run's files, from its start-up checks to its end).
enum class Hold { Write, Run };

struct LockAttempt {
  FileLock lock;       // held, unless another process holds it
  std::string holder;  // then who: "process 1234 (turbanet train c.yaml --out s.h5)"
};

// How long lock_file waits for a holder that holds the lock for one write.
constexpr std::chrono::seconds kWriteWait{10};

// Takes the lock of `path` (a file that need not exist yet) to hold it as `hold` says. While
// another process holds it for a write it waits, up to kWriteWait; one that holds it for a run
// is not waited for. The holder's process id, host, hold and command line are written into the
// lock file for whoever waits next. On a file system without locks (ENOLCK) it returns a lock
// held in name only. Throws RunFileError when the lock file cannot be created or locked (e.g. a
// directory that cannot be written) or `path` is a loop of symbolic links. Locks of one file in
// one process also exclude each other.
LockAttempt lock_file(const std::string& path, Hold hold);

// Async-signal-safe: removes the lock files of the locks this process holds, for a process
// ending at once (a second Ctrl-C), which leaves them otherwise (its locks go with it).
void remove_lock_files_now();

}  // namespace tn::io
