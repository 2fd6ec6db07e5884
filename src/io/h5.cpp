// Thin RAII and error-checking layer over the HDF5 C API (see io/h5.h).
#include "io/h5.h"

#include "io/h5_deflate.h"
#include "util/utf8.h"

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <utility>
#include <vector>

namespace tn::h5 {

namespace {

constexpr std::uint64_t kChunkThresholdBytes = 64 * 1024;  // larger datasets may be compressed
// At most 256 KiB per chunk: fits HDF5's default chunk cache, and a curve of 128 members x 1024
// epochs (512 KiB) is two chunks, deflated on two cores.
constexpr std::uint64_t kChunkTargetBytes = 256 * 1024;
// Compression (shuffle + deflate, io/h5_deflate.h) is kept where a sample of the data (its first
// kTrialBytes) deflates to at most kWorthRatio of its size. Trained weights are close
// to incompressible (~90%) and deflating them took most of a large run file's writing time
// (2->256->256->2, 128 members: 59 MB in 1.7 s); loss and accuracy curves and predictions
// shrink to 4-80%.
constexpr std::uint64_t kTrialBytes = 64 * 1024;
constexpr double kWorthRatio = 0.85;
constexpr std::size_t kCoreIncrement = 1024 * 1024;  // growth step of in-memory files
constexpr hsize_t kUserBlockBytes = 512;             // io/file_seal.h kSealBytes

herr_t innermost_error(unsigned n, const H5E_error2_t* err, void* out) {
  if (n == 0 && err->desc) *static_cast<std::string*>(out) = err->desc;
  return 0;
}

// The sec2 driver reports OS errors as "... errno = 28, error message = 'No space ...', ...".
std::string os_reason(const std::string& desc) {
  const std::string key = "error message = '";
  const auto begin = desc.find(key);
  if (begin == std::string::npos) return desc;
  const auto end = desc.find('\'', begin + key.size());
  return desc.substr(begin + key.size(), end == std::string::npos ? end : end - begin - key.size());
}

std::vector<hsize_t> to_dims(const std::vector<std::uint64_t>& shape) {
  return std::vector<hsize_t>(shape.begin(), shape.end());
}

std::uint64_t product(const std::vector<hsize_t>& dims) {
  std::uint64_t n = 1;
  for (hsize_t d : dims) n *= d;
  return n;
}

// Elements of a dataset about to be read into memory, checked against what its file can hold:
// the product of its dimensions without overflow, and its bytes at most what deflate can expand
// the whole file to (about 1032 : 1) plus 1 MiB. A damaged shape fails here, not in the allocator.
std::uint64_t checked_elements(hid_t dset, const std::vector<hsize_t>& dims, std::uint64_t elem_size,
                               const std::string& name) {
  std::uint64_t n = 1;
  for (hsize_t d : dims)
    if (d != 0 && n > std::numeric_limits<std::uint64_t>::max() / d) throw Error("dataset " + name + " has an impossible shape");
    else n *= d;
  hsize_t file_bytes = 0;
  const hid_t f = H5Iget_file_id(dset);
  if (f >= 0) {
    H5Fget_filesize(f, &file_bytes);
    H5Fclose(f);
  }
  const std::uint64_t limit = 1100 * static_cast<std::uint64_t>(file_bytes) + (1u << 20);
  if (elem_size != 0 && n > limit / elem_size)
    throw Error("dataset " + name + " claims " + std::to_string(n) + " values, more than its file of " +
                std::to_string(file_bytes) + " bytes can hold");
  // HDF5 allocates a whole chunk to read any of it: a damaged chunk shape must fail here too.
  Handle dcpl = own(H5Dget_create_plist(dset), H5Pclose, "getting the properties of " + name);
  if (check(H5Pget_layout(dcpl.get()), "getting the layout of " + name) == H5D_CHUNKED) {
    hsize_t chunk[H5S_MAX_RANK];
    const int rank = static_cast<int>(check(H5Pget_chunk(dcpl.get(), H5S_MAX_RANK, chunk), "getting the chunk shape of " + name));
    Handle type = own(H5Dget_type(dset), H5Tclose, "getting the type of " + name);
    std::uint64_t bytes = H5Tget_size(type.get());
    for (int i = 0; i < rank; ++i)
      if (chunk[i] != 0 && bytes > limit / chunk[i]) throw Error("dataset " + name + " has an impossible chunk shape");
      else bytes *= chunk[i];
    if (bytes > limit) throw Error("dataset " + name + " has an impossible chunk shape");
  }
  return n;
}

// Owns every variable-length string HDF5 allocates while reading one dataset (its transfer
// property list routes HDF5's allocations here). HDF5 1.10 does not free the strings it had
// already converted when a later one fails (a damaged global heap): with the arena, a failed
// read leaks nothing. HDF5's own frees are deferred to the arena's end.
class VlenArena {
 public:
  explicit VlenArena(const std::string& what)
      : dxpl_(own(H5Pcreate(H5P_DATASET_XFER), H5Pclose, "creating transfer properties for " + what)) {
    check(H5Pset_vlen_mem_manager(dxpl_.get(), &VlenArena::allocate, this, &VlenArena::release, this),
          "setting the string allocator for " + what);
  }
  VlenArena(const VlenArena&) = delete;
  VlenArena& operator=(const VlenArena&) = delete;
  ~VlenArena() {
    for (void* block : blocks_) std::free(block);
  }
  hid_t dxpl() const { return dxpl_.get(); }

 private:
  static void* allocate(std::size_t bytes, void* self) {
    void* block = std::malloc(bytes);
    if (!block) return nullptr;
    try {
      static_cast<VlenArena*>(self)->blocks_.push_back(block);
    } catch (...) {
      std::free(block);
      return nullptr;
    }
    return block;
  }
  static void release(void*, void*) {}  // freed with the arena

  Handle dxpl_;
  std::vector<void*> blocks_;
};

Handle string_type(const std::string& what) {
  Handle type = own(H5Tcopy(H5T_C_S1), H5Tclose, "creating the string type for " + what);
  check(H5Tset_size(type.get(), H5T_VARIABLE), "sizing the string type for " + what);
  check(H5Tset_cset(type.get(), H5T_CSET_UTF8), "setting UTF-8 for " + what);
  return type;
}

Handle scalar_space(const std::string& what) {
  return own(H5Screate(H5S_SCALAR), H5Sclose, "creating the dataspace of " + what);
}

// Link creation properties that create missing intermediate groups.
Handle link_props(const std::string& what) {
  Handle lcpl = own(H5Pcreate(H5P_LINK_CREATE), H5Pclose, "creating link properties for " + what);
  check(H5Pset_create_intermediate_group(lcpl.get(), 1), "setting link properties for " + what);
  return lcpl;
}

// Halves leading dimensions first so a chunk holds whole trailing rows (e.g. some members).
std::vector<hsize_t> chunk_dims(const std::vector<hsize_t>& dims, std::uint64_t elem_size) {
  std::vector<hsize_t> chunk = dims;
  for (std::size_t i = 0; i < chunk.size(); ++i) {
    while (product(chunk) * elem_size > kChunkTargetBytes && chunk[i] > 1) {
      chunk[i] = (chunk[i] + 1) / 2;
    }
  }
  return chunk;
}

// Chunk shape of a dataset worth compressing: large, and a sample of it deflates to at most
// kWorthRatio of its size. Empty: store it contiguously.
std::vector<hsize_t> compressed_chunk(const std::vector<hsize_t>& dims, std::uint64_t elem_size, const void* data) {
  const std::uint64_t bytes = product(dims) * elem_size;
  if (bytes <= kChunkThresholdBytes || deflate_ratio(data, bytes, elem_size, kTrialBytes) > kWorthRatio) return {};
  return chunk_dims(dims, elem_size);
}

Handle dataset_props(const std::vector<hsize_t>& chunk, const std::string& name) {
  Handle dcpl = own(H5Pcreate(H5P_DATASET_CREATE), H5Pclose, "creating properties of " + name);
  if (chunk.empty()) return dcpl;
  check(H5Pset_chunk(dcpl.get(), static_cast<int>(chunk.size()), chunk.data()),
        "setting the chunk shape of " + name);
  check(H5Pset_shuffle(dcpl.get()), "setting the shuffle filter of " + name);
  check(H5Pset_deflate(dcpl.get(), kDeflateLevel), "setting the deflate filter of " + name);
  return dcpl;
}

void write_dataset(hid_t file, const std::string& name, const std::vector<hsize_t>& dims,
                   hid_t file_type, hid_t mem_type, const void* data) {
  const std::uint64_t elem_size = H5Tget_size(file_type);
  // The chunks are filtered here when memory holds the file's representation already (no
  // type conversion, which H5Dwrite_chunk would skip); otherwise HDF5's pipeline does it.
  // Variable-length strings never: their memory form is an array of pointers, and the file
  // holds heap references that only HDF5's own write path makes (filtering the pointers stored
  // the writer's addresses: unreadable files).
  const bool same_bytes = check(H5Tequal(file_type, mem_type), "comparing types of " + name) > 0 &&
                          check(H5Tis_variable_str(file_type), "inspecting the type of " + name) == 0;
  const std::vector<hsize_t> chunk = same_bytes ? compressed_chunk(dims, elem_size, data) : std::vector<hsize_t>{};
  Handle space = own(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr),
                     H5Sclose, "creating the dataspace of " + name);
  Handle dcpl = dataset_props(chunk, name);
  Handle lcpl = link_props(name);
  Handle dset = own(
      H5Dcreate2(file, name.c_str(), file_type, space.get(), lcpl.get(), dcpl.get(), H5P_DEFAULT),
      H5Dclose, "creating dataset " + name);
  if (!chunk.empty()) {
    for (const FilteredChunk& c : shuffle_deflate_chunks(data, dims, chunk, elem_size))
      check(H5Dwrite_chunk(dset.get(), H5P_DEFAULT, 0, c.offset.data(), c.bytes.size(), c.bytes.data()),
            "writing a chunk of dataset " + name);
  } else if (product(dims) > 0) {
    check(H5Dwrite(dset.get(), mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data),
          "writing dataset " + name);
  }
  dset.close("dataset " + name);
}

Handle open_dataset(hid_t file, const std::string& name) {
  return own(H5Dopen2(file, name.c_str(), H5P_DEFAULT), H5Dclose, "opening dataset " + name);
}

std::vector<hsize_t> dataset_dims(hid_t dset, const std::string& name) {
  Handle space = own(H5Dget_space(dset), H5Sclose, "getting the dataspace of " + name);
  const int rank = static_cast<int>(
      check(H5Sget_simple_extent_ndims(space.get()), "getting the rank of " + name));
  std::vector<hsize_t> dims(rank);
  check(H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr),
        "getting the shape of " + name);
  return dims;
}

void expect_class(hid_t type, H5T_class_t want, const char* want_name, const std::string& what) {
  const H5T_class_t got = H5Tget_class(type);
  check(got, "getting the type class of " + what);
  if (got != want) throw Error(what + " is not of " + want_name + " type");
}

// The length of dataset `dset`, which must be one-dimensional.
std::size_t one_dimensional(hid_t dset, const std::string& name) {
  const std::vector<hsize_t> dims = dataset_dims(dset, name);
  if (dims.size() != 1) throw Error("dataset " + name + " is not one-dimensional");
  return dims[0];
}

// A one-dimensional numeric dataset of class `want`, converted to `mem_type` (T); with
// `rows`, a two-dimensional one (row-major) and its row count.
template <typename T>
std::vector<T> read_vector(hid_t file, const std::string& name, H5T_class_t want,
                           const char* want_name, hid_t mem_type, std::uint64_t* rows = nullptr) {
  Handle dset = open_dataset(file, name);
  Handle type = own(H5Dget_type(dset.get()), H5Tclose, "getting the type of " + name);
  expect_class(type.get(), want, want_name, "dataset " + name);
  std::vector<hsize_t> dims;
  if (rows) {
    dims = dataset_dims(dset.get(), name);
    if (dims.size() != 2) throw Error("dataset " + name + " is not two-dimensional");
    *rows = dims[0];
  } else {
    dims = {one_dimensional(dset.get(), name)};
  }
  std::vector<T> values(checked_elements(dset.get(), dims, sizeof(T), name));
  if (values.empty()) return values;
  check(H5Dread(dset.get(), mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()),
        "reading dataset " + name);
  return values;
}

// `text` as read from `what`, checked to be UTF-8 (what turbanet writes): other bytes never
// reach JSON output or a terminal.
std::string utf8_text(std::string text, const std::string& what) {
  const std::size_t bad = invalid_utf8(text);
  if (bad != std::string::npos)
    throw Error(what + " holds text that is not valid UTF-8 (" + invalid_utf8_where(text, bad) +
                "); turbanet reads and writes UTF-8 only: train again from data saved as UTF-8, or restore the "
                "file from a copy");
  return text;
}

// Reads one string whose HDF5 type is `type` (variable or fixed length) via `read(mem_type, buf)`.
// `owned`: a variable-length string belongs to a VlenArena, not to the caller.
template <typename ReadFn>
std::string read_string(hid_t type, const std::string& what, ReadFn read, bool owned = false) {
  expect_class(type, H5T_STRING, "string", what);
  const htri_t is_var = H5Tis_variable_str(type);
  check(is_var, "inspecting the string type of " + what);
  if (is_var > 0) {
    char* ptr = nullptr;
    check(read(type, static_cast<void*>(&ptr)), "reading " + what);
    std::string value = ptr ? ptr : "";
    if (!owned) H5free_memory(ptr);
    return utf8_text(std::move(value), what);
  }
  const std::size_t size = H5Tget_size(type);
  if (size == 0) throw Error("getting the string size of " + what + " failed");
  std::string buf(size + 1, '\0');
  check(read(type, static_cast<void*>(buf.data())), "reading " + what);
  return utf8_text(buf.substr(0, buf.find('\0')), what);
}

void expect_scalar(hid_t space, const std::string& what) {
  const hssize_t n = H5Sget_simple_extent_npoints(space);
  check(n, "getting the size of " + what);
  if (n != 1) throw Error(what + " holds " + std::to_string(n) + " values, expected one");
}

Handle open_attr(hid_t obj, const std::string& what, const char* attr) {
  return own(H5Aopen(obj, attr, H5P_DEFAULT), H5Aclose, "opening " + what);
}

std::string attr_name(const std::string& obj_name, const char* attr) {
  return "attribute '" + std::string(attr) + "' of " + obj_name;
}

// Opens a one-value attribute and reads it as `mem_type` into `out`.
void read_scalar_attr(hid_t obj, const std::string& obj_name, const char* attr, hid_t mem_type,
                      void* out) {
  const std::string what = attr_name(obj_name, attr);
  Handle a = open_attr(obj, what, attr);
  Handle space = own(H5Aget_space(a.get()), H5Sclose, "getting the dataspace of " + what);
  expect_scalar(space.get(), what);
  check(H5Aread(a.get(), mem_type, out), "reading " + what);
}

Handle create_attr(hid_t obj, const std::string& what, const char* attr, hid_t type) {
  Handle space = scalar_space(what);
  return own(H5Acreate2(obj, attr, type, space.get(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose,
             "creating " + what);
}

}  // namespace

Handle::Handle(Handle&& other) noexcept
    : id_(std::exchange(other.id_, H5I_INVALID_HID)), closer_(other.closer_) {}

Handle& Handle::operator=(Handle&& other) noexcept {
  if (this != &other) {
    if (id_ >= 0) closer_(id_);
    id_ = std::exchange(other.id_, H5I_INVALID_HID);
    closer_ = other.closer_;
  }
  return *this;
}

Handle::~Handle() {
  if (id_ >= 0) closer_(id_);
}

void Handle::close(const std::string& what) {
  if (id_ < 0) return;
  // Never retried: after a failed H5Fclose HDF5 may already have released the object.
  const herr_t status = closer_(std::exchange(id_, H5I_INVALID_HID));
  check(status, "closing " + what);
}

static std::mutex library_mutex;  // guards all HDF5 use in this process

Session::Session() : lock_(library_mutex) {
  H5Eget_auto2(H5E_DEFAULT, &func_, &data_);
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
}

Session::~Session() { H5Eset_auto2(H5E_DEFAULT, func_, data_); }

std::string last_error() {
  std::string desc;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, innermost_error, &desc);
  H5Eclear2(H5E_DEFAULT);
  return desc.empty() ? "unknown HDF5 error" : os_reason(desc);
}

std::int64_t check(std::int64_t status, const std::string& what) {
  if (status < 0) throw Error(what + " failed: " + last_error());
  return status;
}

Handle own(hid_t id, Handle::Closer closer, const std::string& what) {
  check(id, what);
  return Handle(id, closer);
}

Handle create_memory_file(const std::string& name) {
  Handle fapl = own(H5Pcreate(H5P_FILE_ACCESS), H5Pclose, "creating file access properties");
  check(H5Pset_fapl_core(fapl.get(), kCoreIncrement, 0), "selecting the in-memory driver");
  // The user block holds the file's seal (io/file_seal.h).
  Handle fcpl = own(H5Pcreate(H5P_FILE_CREATE), H5Pclose, "creating file creation properties");
  check(H5Pset_userblock(fcpl.get(), kUserBlockBytes), "reserving the user block");
  return own(H5Fcreate(name.c_str(), H5F_ACC_TRUNC, fcpl.get(), fapl.get()), H5Fclose,
             "creating the in-memory HDF5 file");
}

std::vector<unsigned char> file_image(hid_t file) {
  check(H5Fflush(file, H5F_SCOPE_GLOBAL), "flushing the in-memory file");
  const ssize_t size = check(H5Fget_file_image(file, nullptr, 0), "sizing the file image");
  std::vector<unsigned char> image(size);
  check(H5Fget_file_image(file, image.data(), image.size()), "copying the file image");
  return image;
}

Handle create_group(hid_t file, const std::string& name) {
  Handle lcpl = link_props(name);
  return own(H5Gcreate2(file, name.c_str(), lcpl.get(), H5P_DEFAULT, H5P_DEFAULT), H5Gclose,
             "creating group " + name);
}

void write_floats(hid_t file, const std::string& name, const std::vector<std::uint64_t>& shape,
                  const float* data) {
  write_dataset(file, name, to_dims(shape), H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, data);
}

void write_ints(hid_t file, const std::string& name, const std::vector<int>& values) {
  write_dataset(file, name, {values.size()}, H5T_STD_I32LE, H5T_NATIVE_INT, values.data());
}

void write_doubles(hid_t file, const std::string& name, const std::vector<double>& values) {
  write_dataset(file, name, {values.size()}, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, values.data());
}

void write_int_rows(hid_t file, const std::string& name, std::uint64_t rows, const std::vector<int>& values) {
  write_dataset(file, name, {rows, rows ? values.size() / rows : 0}, H5T_STD_I32LE, H5T_NATIVE_INT, values.data());
}

void write_double_rows(hid_t file, const std::string& name, std::uint64_t rows, const std::vector<double>& values) {
  write_dataset(file, name, {rows, rows ? values.size() / rows : 0}, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, values.data());
}

void write_strings(hid_t file, const std::string& name, const std::vector<std::string>& values) {
  std::vector<const char*> ptrs;
  for (const std::string& v : values) ptrs.push_back(v.c_str());
  Handle type = string_type(name);
  write_dataset(file, name, {values.size()}, type.get(), type.get(), ptrs.data());
}

void write_string_dataset(hid_t file, const std::string& name, const std::string& value) {
  Handle type = string_type(name);
  Handle space = scalar_space(name);
  Handle lcpl = link_props(name);
  Handle dset = own(
      H5Dcreate2(file, name.c_str(), type.get(), space.get(), lcpl.get(), H5P_DEFAULT, H5P_DEFAULT),
      H5Dclose, "creating dataset " + name);
  const char* ptr = value.c_str();
  check(H5Dwrite(dset.get(), type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, &ptr),
        "writing dataset " + name);
  dset.close("dataset " + name);
}

void set_string_attr(hid_t obj, const std::string& obj_name, const char* attr,
                     const std::string& value) {
  const std::string what = attr_name(obj_name, attr);
  Handle type = string_type(what);
  Handle a = create_attr(obj, what, attr, type.get());
  const char* ptr = value.c_str();
  check(H5Awrite(a.get(), type.get(), &ptr), "writing " + what);
  a.close(what);
}

void set_int_attr(hid_t obj, const std::string& obj_name, const char* attr, std::int64_t value,
                  hid_t file_type) {
  const std::string what = attr_name(obj_name, attr);
  Handle a = create_attr(obj, what, attr, file_type);
  check(H5Awrite(a.get(), H5T_NATIVE_INT64, &value), "writing " + what);
  a.close(what);
}

void set_double_attr(hid_t obj, const std::string& obj_name, const char* attr, double value) {
  const std::string what = attr_name(obj_name, attr);
  Handle a = create_attr(obj, what, attr, H5T_IEEE_F64LE);
  check(H5Awrite(a.get(), H5T_NATIVE_DOUBLE, &value), "writing " + what);
  a.close(what);
}

bool exists(hid_t file, const std::string& name) {
  std::string prefix;
  std::size_t start = 1;  // `name` is absolute
  while (start <= name.size()) {
    const std::size_t end = std::min(name.find('/', start), name.size());
    prefix = name.substr(0, end);
    if (check(H5Lexists(file, prefix.c_str(), H5P_DEFAULT), "looking up " + prefix) == 0) {
      return false;
    }
    start = end + 1;
  }
  return true;
}

Handle open_group(hid_t file, const std::string& name) {
  return own(H5Gopen2(file, name.c_str(), H5P_DEFAULT), H5Gclose, "opening group " + name);
}

void read_floats(hid_t file, const std::string& name, std::vector<std::uint64_t>& shape,
                 std::vector<float>& data) {
  Handle dset = open_dataset(file, name);
  Handle type = own(H5Dget_type(dset.get()), H5Tclose, "getting the type of " + name);
  expect_class(type.get(), H5T_FLOAT, "floating-point", "dataset " + name);
  const std::vector<hsize_t> dims = dataset_dims(dset.get(), name);
  shape.assign(dims.begin(), dims.end());
  data.assign(checked_elements(dset.get(), dims, sizeof(float), name), 0.0f);
  if (data.empty()) return;
  check(H5Dread(dset.get(), H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, data.data()),
        "reading dataset " + name);
}

std::vector<int> read_ints(hid_t file, const std::string& name) {
  return read_vector<int>(file, name, H5T_INTEGER, "integer", H5T_NATIVE_INT);
}

std::vector<double> read_doubles(hid_t file, const std::string& name) {
  return read_vector<double>(file, name, H5T_FLOAT, "floating-point", H5T_NATIVE_DOUBLE);
}

std::vector<int> read_int_rows(hid_t file, const std::string& name, std::uint64_t& rows) {
  return read_vector<int>(file, name, H5T_INTEGER, "integer", H5T_NATIVE_INT, &rows);
}

std::vector<double> read_double_rows(hid_t file, const std::string& name, std::uint64_t& rows) {
  return read_vector<double>(file, name, H5T_FLOAT, "floating-point", H5T_NATIVE_DOUBLE, &rows);
}

bool is_string_dataset(hid_t file, const std::string& name) {
  Handle dset = open_dataset(file, name);
  Handle type = own(H5Dget_type(dset.get()), H5Tclose, "getting the type of " + name);
  return H5Tget_class(type.get()) == H5T_STRING;
}

std::vector<std::string> read_strings(hid_t file, const std::string& name) {
  Handle dset = open_dataset(file, name);
  Handle type = own(H5Dget_type(dset.get()), H5Tclose, "getting the type of " + name);
  expect_class(type.get(), H5T_STRING, "string", "dataset " + name);
  if (check(H5Tis_variable_str(type.get()), "inspecting the string type of " + name) == 0)
    throw Error("dataset " + name + " holds fixed-length strings, expected variable-length");
  std::vector<char*> ptrs(checked_elements(dset.get(), {one_dimensional(dset.get(), name)}, sizeof(char*), name), nullptr);
  if (ptrs.empty()) return {};
  Handle mem = string_type(name);
  VlenArena arena(name);
  check(H5Dread(dset.get(), mem.get(), H5S_ALL, H5S_ALL, arena.dxpl(), ptrs.data()),
        "reading dataset " + name);
  std::vector<std::string> values;
  values.reserve(ptrs.size());
  for (const char* p : ptrs)
    values.push_back(utf8_text(p ? p : "", "string " + std::to_string(values.size()) + " of dataset " + name));
  return values;
}

std::string read_string_dataset(hid_t file, const std::string& name) {
  Handle dset = open_dataset(file, name);
  Handle space = own(H5Dget_space(dset.get()), H5Sclose, "getting the dataspace of " + name);
  expect_scalar(space.get(), "dataset " + name);
  Handle type = own(H5Dget_type(dset.get()), H5Tclose, "getting the type of " + name);
  VlenArena arena(name);
  return read_string(type.get(), "dataset " + name, [&](hid_t mem, void* buf) {
    return H5Dread(dset.get(), mem, H5S_ALL, H5S_ALL, arena.dxpl(), buf);
  }, /*owned=*/true);
}

bool has_attr(hid_t obj, const std::string& obj_name, const char* attr) {
  return check(H5Aexists(obj, attr), "looking up " + attr_name(obj_name, attr)) > 0;
}

std::string get_string_attr(hid_t obj, const std::string& obj_name, const char* attr) {
  const std::string what = attr_name(obj_name, attr);
  Handle a = open_attr(obj, what, attr);
  Handle space = own(H5Aget_space(a.get()), H5Sclose, "getting the dataspace of " + what);
  expect_scalar(space.get(), what);
  Handle type = own(H5Aget_type(a.get()), H5Tclose, "getting the type of " + what);
  return read_string(type.get(), what,
                     [&](hid_t mem, void* buf) { return H5Aread(a.get(), mem, buf); });
}

std::int64_t get_int_attr(hid_t obj, const std::string& obj_name, const char* attr) {
  std::int64_t value = 0;
  read_scalar_attr(obj, obj_name, attr, H5T_NATIVE_INT64, &value);
  return value;
}

double get_double_attr(hid_t obj, const std::string& obj_name, const char* attr) {
  double value = 0;
  read_scalar_attr(obj, obj_name, attr, H5T_NATIVE_DOUBLE, &value);
  return value;
}

std::vector<std::string> list_group(hid_t file, const std::string& name) {
  Handle group = open_group(file, name);
  H5G_info_t info;
  check(H5Gget_info(group.get(), &info), "listing group " + name);
  std::vector<std::string> names;
  for (hsize_t i = 0; i < info.nlinks; ++i) {
    const ssize_t len = check(H5Lget_name_by_idx(group.get(), ".", H5_INDEX_NAME, H5_ITER_INC, i,
                                                 nullptr, 0, H5P_DEFAULT),
                              "listing group " + name);
    // Our names are short; a longer one is a damaged length, not a name to allocate.
    if (len > (1 << 16)) throw Error("group " + name + " holds a link name of " + std::to_string(len) + " bytes");
    std::string link(len + 1, '\0');
    check(H5Lget_name_by_idx(group.get(), ".", H5_INDEX_NAME, H5_ITER_INC, i, link.data(),
                             link.size(), H5P_DEFAULT),
          "listing group " + name);
    link.resize(len);
    names.push_back(utf8_text(std::move(link), "a link name in group " + name));
  }
  return names;
}

}  // namespace tn::h5
