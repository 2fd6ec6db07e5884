// Atomic writes of in-memory HDF5 images, and guarded reads of whole files from memory (see io/h5_file.h).
#include "io/h5_file.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string_view>
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

// What is known of the image's bytes, for the message of a crash or a hang.
std::string provenance(const Image& image) {
  return image.sealed ? "its seal matches its bytes, so they were made or edited by another program and sealed "
                        "again after turbanet wrote them"
                      : "it has no seal (written by an older turbanet or another program), so its bytes could not "
                        "be checked first";
}

// Whether HDF5 finds its signature: at byte 0, 512, 1024, 2048, ... (where a user block ends).
bool has_hdf5_signature(const std::vector<unsigned char>& bytes) {
  static const unsigned char kSignature[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
  for (std::size_t at = 0; at + sizeof kSignature <= bytes.size(); at = at ? at * 2 : 512)
    if (std::memcmp(bytes.data() + at, kSignature, sizeof kSignature) == 0) return true;
  return false;
}

// HDF5's file-image callbacks that hand it the image's own bytes wherever it would copy them
// (into the access properties, their copies and the open file), as H5LTopen_file_image does
// with H5LT_FILE_IMAGE_DONT_COPY: a read-only file is never written, and a large run file is
// held once in memory, not three times. The Image owns the bytes; HDF5 frees nothing.
void* image_malloc(std::size_t size, H5FD_file_image_op_t, void* view) {
  const auto* v = static_cast<const std::vector<unsigned char>*>(view);
  return size == v->size() ? const_cast<unsigned char*>(v->data()) : nullptr;
}
void* image_memcpy(void* dest, const void* src, std::size_t, H5FD_file_image_op_t, void*) {
  return dest == src ? dest : nullptr;
}
void* image_realloc(void*, std::size_t, H5FD_file_image_op_t, void*) { return nullptr; }
herr_t image_free(void*, H5FD_file_image_op_t, void*) { return 0; }
void* image_udata_copy(void* view) { return view; }
herr_t image_udata_free(void*) { return 0; }

// A name for an opened image that no file has: HDF5's in-memory driver refuses to open an
// image under the name of an existing file, and treats two open files of one name as one.
std::string image_name() {
  static std::atomic<unsigned long> count{0};
  return "/dev/null/turbanet-image-" + std::to_string(count++);  // a path under a non-directory
}

}  // namespace

Image load_image(const std::string& path, const std::string& kind) {
  Image image{kind + " '" + path + "'", {}, false};
  const std::string& named = image.named;
  // O_NONBLOCK: opening a FIFO must not wait for a writer (it is refused below).
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  if (fd.fd < 0) {
    if (errno == ENOENT) throw RunFileError(named + " does not exist");
    throw RunFileError("cannot open " + named + ": " + std::strerror(errno));
  }
  struct stat st {};
  if (::fstat(fd.fd, &st) != 0) throw RunFileError("cannot open " + named + ": " + std::strerror(errno));
  if (S_ISDIR(st.st_mode)) throw RunFileError(named + " is a directory");
  if (!S_ISREG(st.st_mode))
    throw RunFileError(named + " is not a regular file (a device, FIFO or socket); name the file itself");
  std::vector<unsigned char>& bytes = image.bytes;
  bytes.resize(static_cast<std::size_t>(st.st_size));
  std::size_t got = 0;
  for (;;) {
    if (got == bytes.size()) bytes.resize(got + (1u << 20));  // the file grew since fstat
    const ssize_t n = ::read(fd.fd, bytes.data() + got, bytes.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw RunFileError("cannot read " + named + ": " + std::strerror(errno));
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
  }
  bytes.resize(got);
  const Seal seal = verify_seal(bytes, named);
  image.sealed = seal == Seal::Verified;
  if (!has_hdf5_signature(bytes))
    throw RunFileError(named + " is not an HDF5 file: it was not written by turbanet or is damaged");
  if (seal == Seal::Foreign)
    throw RunFileError(named + " is damaged: its first 512 bytes are neither turbanet's seal nor empty; restore "
                       "it from a copy or train again");
  return image;
}

// A signal or the time limit means the HDF5 library crashed or looped on the image's bytes. A
// RunFileError of the child's read is thrown here with its message, so that this process never
// opens bytes that HDF5 failed on: HDF5 1.10 keeps some of a file it failed to open (or to read
// back) until the process ends, and then reports "infinite loop closing library".
void read_in_child(const Image& image, const std::function<void()>& read_all) {
  const std::string& named = image.named;
  // Five seconds, plus one for every 20 MB: far beyond what reading takes (milliseconds for
  // small files, ~0.3 s for 70 MB), so only a reader caught in a loop hits it.
  const std::chrono::seconds limit(5 + image.bytes.size() / (20u << 20));
  int ends[2] = {-1, -1};
  const bool piped = ::pipe2(ends, O_CLOEXEC) == 0;
  Fd from_child(ends[0]), to_parent(ends[1]);
  if (piped) ::fcntl(from_child.fd, F_SETFL, O_NONBLOCK);
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) return;  // no child to spare (a resource limit): read in this process only
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
                         " s; " + provenance(image) + "; restore it from a copy or train again");
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
                       "); " + provenance(image) + "; restore it from a copy or train again");
}

h5::Handle open_image(const Image& image) {
  const auto view = const_cast<std::vector<unsigned char>*>(&image.bytes);
  try {
    h5::Handle fapl = h5::own(H5Pcreate(H5P_FILE_ACCESS), H5Pclose, "creating file access properties");
    h5::check(H5Pset_fapl_core(fapl.get(), 1 << 20, 0), "selecting the in-memory driver");
    H5FD_file_image_callbacks_t callbacks = {image_malloc,     image_memcpy,     image_realloc, image_free,
                                             image_udata_copy, image_udata_free, view};
    h5::check(H5Pset_file_image_callbacks(fapl.get(), &callbacks), "setting the file image callbacks");
    h5::check(H5Pset_file_image(fapl.get(), view->data(), view->size()), "setting the file image");
    return h5::own(H5Fopen(image_name().c_str(), H5F_ACC_RDONLY, fapl.get()), H5Fclose, "opening the file");
  } catch (const h5::Error& e) {
    throw RunFileError("cannot open " + image.named + ": " + e.what());
  }
}

}  // namespace detail

}  // namespace tn::io
