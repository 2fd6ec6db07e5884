// Atomic whole-file writes of in-memory HDF5 images, and checked opening (see io/h5_file.h).
#include "io/h5_file.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string_view>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "io/fd.h"
#include "io/file_seal.h"

namespace tn::io {
namespace {

namespace fs = std::filesystem;

// Builds the whole file in memory (see h5::create_memory_file) and returns its bytes.
std::vector<unsigned char> build_image(const fs::path& name, const std::function<void(hid_t)>& build) {
  h5::Handle file = h5::create_memory_file(name.string());
  build(file.get());
  std::vector<unsigned char> image = h5::file_image(file.get());
  file.close("the in-memory file");
  seal_image(image);
  return image;
}

}  // namespace

void write_h5_atomically(const std::string& path, const std::string& kind, const std::function<void(hid_t)>& build,
                         Replace replace) {
  std::vector<unsigned char> image;
  try {
    h5::Session session;
    image = build_image(fs::path(path).filename(), build);
  } catch (const h5::Error& e) {
    throw RunFileError("cannot write " + kind + " '" + path + "': " + e.what());
  }
  write_file_atomically(path, kind, std::string_view(reinterpret_cast<const char*>(image.data()), image.size()), replace);
}

namespace detail {

namespace {

// Exit codes of the reading child besides 0: its read failed with a RunFileError, whose
// message it wrote to the pipe; or it failed otherwise (or could not report), and the parent's
// own read reports the error.
constexpr int kChildFailed = 3, kChildReported = 4;

// Writes all of `text` to `fd`; false when it could not.
bool write_all(int fd, std::string_view text) {
  while (!text.empty()) {
    const ssize_t n = ::write(fd, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    text.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

// Appends what the non-blocking `fd` holds now to `out`.
void drain(int fd, std::string& out) {
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n > 0) out.append(buf, static_cast<std::size_t>(n));
    else if (n < 0 && errno == EINTR) continue;
    else return;
  }
}

// Runs read_all() in a child process and waits for it (at most `limit`). A signal or the
// limit means the HDF5 library crashed or looped on the file's bytes. A RunFileError of the
// child's read is thrown here with its message, so that this process never opens a file
// that HDF5 failed on: HDF5 1.10 keeps some of a file it failed to open (or to read back)
// until the process ends, and then reports "infinite loop closing library".
void read_in_child(const std::string& named, const std::function<void()>& read_all, std::chrono::seconds limit) {
  int ends[2] = {-1, -1};
  const bool piped = ::pipe2(ends, O_CLOEXEC) == 0;
  Fd from_child(ends[0]), to_parent(ends[1]);
  if (piped) ::fcntl(from_child.fd, F_SETFL, O_NONBLOCK);
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) return;  // no child to spare: read in this process, as before files were sealed
  if (pid == 0) {
    // A crash must end the child with its signal, whatever handlers the process installed.
    for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) ::signal(sig, SIG_DFL);
    int code = 0;
    try {
      read_all();
    } catch (const RunFileError& e) {
      code = piped && write_all(to_parent.fd, e.what()) ? kChildReported : kChildFailed;
    } catch (...) {
      code = kChildFailed;
    }
    ::_exit(code);
  }
  to_parent.close();
  std::string message;
  int status = 0;
  const auto deadline = std::chrono::steady_clock::now() + limit;
  for (auto pause = std::chrono::microseconds(200);; pause = std::min(pause * 2, std::chrono::microseconds(20000))) {
    if (piped) drain(from_child.fd, message);  // a long message must not block the child
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid || (done < 0 && errno != EINTR)) break;
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      throw RunFileError(named + " is damaged: reading it did not finish within " + std::to_string(limit.count()) +
                         " s; it has no seal (written by an older turbanet or another program), so its bytes could "
                         "not be checked first; restore it from a copy or train again");
    }
    std::this_thread::sleep_for(pause);
  }
  if (piped) drain(from_child.fd, message);
  const bool exited = WIFEXITED(status), crashed = WIFSIGNALED(status);
  if (exited && WEXITSTATUS(status) == kChildReported) throw RunFileError(message);
  const bool failed = exited && WEXITSTATUS(status) != 0 && WEXITSTATUS(status) != kChildFailed;
  if (crashed || failed)
    throw RunFileError(named + " is damaged: the HDF5 library crashed reading it (" +
                       (crashed ? "signal " + std::to_string(WTERMSIG(status)) : "exit " + std::to_string(WEXITSTATUS(status))) +
                       "); it has no seal (written by an older turbanet or another program), so its bytes could not "
                       "be checked first; restore it from a copy or train again");
}

}  // namespace

void check_before_reading(const std::string& path, const std::string& kind, const std::function<void()>& read_all) {
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  const std::string named = kind + " '" + path + "'";
  if (!fs::exists(st)) throw RunFileError(named + " does not exist");
  if (fs::is_directory(st)) throw RunFileError(named + " is a directory");
  const Seal seal = verify_seal(path, named);
  if (seal == Seal::Verified) return;
  {
    h5::Session session;
    const htri_t is_hdf5 = H5Fis_hdf5(path.c_str());
    if (is_hdf5 < 0) throw RunFileError("cannot open " + named + ": " + h5::last_error());
    if (is_hdf5 == 0)
      throw RunFileError(named + " is not an HDF5 file: it was not written by turbanet or is damaged");
  }
  if (seal == Seal::Foreign)
    throw RunFileError(named + " is damaged: its first 512 bytes are neither turbanet's seal nor empty; restore "
                       "it from a copy or train again");
  // Five seconds, plus one for every 20 MB: far beyond what reading takes (milliseconds for
  // small files, ~0.3 s for 70 MB), so only a reader caught in a loop hits it.
  const auto size = fs::file_size(path, ec);
  read_in_child(named, read_all, std::chrono::seconds(5 + (ec ? 0 : size / (20u << 20))));
}

h5::Handle open_for_reading(const std::string& path, const std::string& kind) {
  const std::string named = kind + " '" + path + "'";
  const htri_t is_hdf5 = H5Fis_hdf5(path.c_str());
  if (is_hdf5 < 0) throw RunFileError("cannot open " + named + ": " + h5::last_error());
  if (is_hdf5 == 0)
    throw RunFileError(named + " is not an HDF5 file: it was not written by turbanet or is damaged");
  const hid_t id = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (id < 0) throw RunFileError("cannot open " + named + ": " + h5::last_error());
  return h5::Handle(id, H5Fclose);
}

}  // namespace detail

}  // namespace tn::io
