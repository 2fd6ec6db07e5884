// Thin RAII and error-checking layer over the HDF5 C API; only src/io/ may include this file.
#pragma once
#include <hdf5.h>

#include <cstdint>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

namespace tn::h5 {

// An HDF5 call failed; what() names the object and HDF5's innermost reason. Callers in
// io/run_file.cpp turn it into RunFileError with the file's path.
struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Owns one hid_t and closes it with the matching H5?close function.
class Handle {
 public:
  using Closer = herr_t (*)(hid_t);
  Handle() = default;
  Handle(hid_t id, Closer closer) : id_(id), closer_(closer) {}
  Handle(Handle&& other) noexcept;
  Handle& operator=(Handle&& other) noexcept;
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  ~Handle();

  hid_t get() const { return id_; }
  // Closes now and throws Error("closing <what> failed: ...") when HDF5 reports a failure
  // (e.g. the final flush of a file on a full disk).
  void close(const std::string& what);

 private:
  hid_t id_ = H5I_INVALID_HID;
  Closer closer_ = nullptr;
};

// Scope of HDF5 use: holds a process-wide lock (the serial HDF5 library is not thread-safe)
// and turns off HDF5's automatic printing of its error stack, restoring it after.
class Session {
 public:
  Session();
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

 private:
  std::lock_guard<std::mutex> lock_;
  H5E_auto2_t func_ = nullptr;
  void* data_ = nullptr;
};

// The innermost description on HDF5's error stack (e.g. "No space left on device").
std::string last_error();
// Throws Error("<what> failed: <last_error()>") when `status` is negative; returns it.
std::int64_t check(std::int64_t status, const std::string& what);
// Wraps a freshly returned id, throwing when it is invalid.
Handle own(hid_t id, Handle::Closer closer, const std::string& what);

// --- writing ---
// An HDF5 file that lives only in memory (core driver, no backing store): HDF5 never writes
// to disk, so a full disk cannot hit its fragile failure paths (a failed H5Dclose/H5Fclose
// leaves dangling IDs that crash at exit in 1.10). `name` only identifies it.
Handle create_memory_file(const std::string& name);
// Flushes `file` and returns its bytes: a complete HDF5 file.
std::vector<unsigned char> file_image(hid_t file);
// A group at absolute `name` (intermediate groups are created as needed).
Handle create_group(hid_t file, const std::string& name);
// Float32 dataset; chunked + shuffle + deflate(1) when larger than 64 KiB and compressible
// (io/h5_deflate.h), else contiguous.
void write_floats(hid_t file, const std::string& name, const std::vector<std::uint64_t>& shape,
                  const float* data);
void write_ints(hid_t file, const std::string& name, const std::vector<int>& values);
// Float64 dataset of shape [values.size()].
void write_doubles(hid_t file, const std::string& name, const std::vector<double>& values);
// Int32 and float64 datasets of shape [rows, values.size() / rows] (row-major).
void write_int_rows(hid_t file, const std::string& name, std::uint64_t rows, const std::vector<int>& values);
void write_double_rows(hid_t file, const std::string& name, std::uint64_t rows, const std::vector<double>& values);
// One-dimensional dataset of variable-length UTF-8 strings.
void write_strings(hid_t file, const std::string& name, const std::vector<std::string>& values);
void write_string_dataset(hid_t file, const std::string& name, const std::string& value);
void set_string_attr(hid_t obj, const std::string& obj_name, const char* attr,
                     const std::string& value);
void set_int_attr(hid_t obj, const std::string& obj_name, const char* attr, std::int64_t value,
                  hid_t file_type);
void set_double_attr(hid_t obj, const std::string& obj_name, const char* attr, double value);

// --- reading ---
// Whether every component of absolute `name` exists (H5Lexists needs each step checked).
bool exists(hid_t file, const std::string& name);
bool is_string_dataset(hid_t file, const std::string& name);  // an existing dataset of strings
Handle open_group(hid_t file, const std::string& name);
// Reads a float dataset (converted to float32) and its shape.
void read_floats(hid_t file, const std::string& name, std::vector<std::uint64_t>& shape,
                 std::vector<float>& data);
std::vector<int> read_ints(hid_t file, const std::string& name);
std::vector<double> read_doubles(hid_t file, const std::string& name);  // one-dimensional
// A two-dimensional dataset, row-major, and its row count.
std::vector<int> read_int_rows(hid_t file, const std::string& name, std::uint64_t& rows);
std::vector<double> read_double_rows(hid_t file, const std::string& name, std::uint64_t& rows);
// Every string read (datasets, attributes, the link names of list_group) must be valid UTF-8:
// other bytes throw Error naming the dataset or attribute, before they can reach JSON or a terminal.
std::vector<std::string> read_strings(hid_t file, const std::string& name);
std::string read_string_dataset(hid_t file, const std::string& name);
bool has_attr(hid_t obj, const std::string& obj_name, const char* attr);
std::string get_string_attr(hid_t obj, const std::string& obj_name, const char* attr);
std::int64_t get_int_attr(hid_t obj, const std::string& obj_name, const char* attr);
double get_double_attr(hid_t obj, const std::string& obj_name, const char* attr);
// Names of the links directly inside group `name`, in name order.
std::vector<std::string> list_group(hid_t file, const std::string& name);

}  // namespace tn::h5
