// read_h5_arrays: numeric datasets of a user's HDF5 file as float32 arrays (see h5_source.h).
#include "io/h5_source.h"

#include <filesystem>

#include "io/h5.h"
#include "io/h5_file.h"

namespace tn::io {
namespace {

constexpr std::size_t kMaxListed = 30;
constexpr std::uint64_t kMaxElements = std::uint64_t{1} << 34;

[[noreturn]] void fail(const std::string& path, const std::string& key, const std::string& problem) {
  throw SourceError(path + " (" + key + "): " + problem);
}

// H5Lvisit callback: appends the absolute path of every dataset.
herr_t collect_dataset(hid_t group, const char* name, const H5L_info_t* info, void* out) {
  if (info->type != H5L_TYPE_HARD) return 0;
  const hid_t obj = H5Oopen(group, name, H5P_DEFAULT);
  if (obj < 0) return 0;
  if (H5Iget_type(obj) == H5I_DATASET)
    static_cast<std::vector<std::string>*>(out)->push_back(std::string("/").append(name));
  H5Oclose(obj);
  return 0;
}

// "the file has: /X, /y" (at most kMaxListed names) or "the file has no datasets".
std::string dataset_list(hid_t file) {
  std::vector<std::string> names;
  h5::check(H5Lvisit(file, H5_INDEX_NAME, H5_ITER_INC, collect_dataset, &names),
            "listing the datasets of the file");
  if (names.empty()) return "the file has no datasets";
  std::string out = "the file has: ";
  for (std::size_t i = 0; i < names.size() && i < kMaxListed; ++i) out += (i ? ", " : "") + names[i];
  if (names.size() > kMaxListed) out += ", ... (" + std::to_string(names.size() - kMaxListed) + " more)";
  return out;
}

std::string class_name(H5T_class_t c) {
  switch (c) {
    case H5T_STRING: return "strings";
    case H5T_COMPOUND: return "compound records";
    case H5T_ENUM: return "enum values";
    case H5T_BITFIELD: return "bit fields";
    case H5T_REFERENCE: return "references";
    case H5T_ARRAY: return "array elements";
    case H5T_VLEN: return "variable-length sequences";
    default: return "non-numeric values";
  }
}

NumericArray read_one(hid_t file, const std::string& path, const H5Request& r) {
  const std::string name = r.dataset.starts_with('/') ? r.dataset : "/" + r.dataset;
  if (!h5::exists(file, name))
    fail(path, r.key, "no dataset '" + r.dataset + "'; " + dataset_list(file));
  h5::Handle obj = h5::own(H5Oopen(file, name.c_str(), H5P_DEFAULT), H5Oclose, "opening " + name);
  if (H5Iget_type(obj.get()) != H5I_DATASET)
    fail(path, r.key, "'" + name + "' is a group, not a dataset; " + dataset_list(file));
  const std::string where = path + ":" + name;
  h5::Handle type = h5::own(H5Dget_type(obj.get()), H5Tclose, "getting the type of " + name);
  const H5T_class_t cls = H5Tget_class(type.get());
  if (cls != H5T_INTEGER && cls != H5T_FLOAT)
    fail(where, r.key, "the dataset holds " + class_name(cls) + ", not numbers; store the data as "
                       "integers or floats");
  h5::Handle space = h5::own(H5Dget_space(obj.get()), H5Sclose, "getting the shape of " + name);
  const int rank = static_cast<int>(h5::check(H5Sget_simple_extent_ndims(space.get()),
                                              "getting the rank of " + name));
  std::vector<hsize_t> dims(rank);
  h5::check(H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr),
            "getting the shape of " + name);
  std::uint64_t count = 1;
  for (hsize_t d : dims) {
    if (d != 0 && count > kMaxElements / d) fail(where, r.key, "the dataset is too large");
    count *= d;
  }
  NumericArray a{where, r.key, std::vector<std::uint64_t>(dims.begin(), dims.end()),
                 std::vector<float>(count)};
  if (count > 0)
    h5::check(H5Dread(obj.get(), H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, a.values.data()),
              "reading dataset " + name);
  return a;
}

}  // namespace

std::vector<NumericArray> read_h5_arrays(const std::string& path,
                                         const std::vector<H5Request>& requests) {
  const std::string key = "data.source.path";
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) fail(path, key, "the file does not exist");
  if (std::filesystem::is_directory(path, ec)) fail(path, key, "this is a directory, not a file");
  if (!std::filesystem::is_regular_file(path, ec))  // a FIFO would block HDF5's open for ever
    fail(path, key, "not a regular file (a device, FIFO or socket); name the file itself");
  {
    h5::Session session;
    const htri_t is_hdf5 = H5Fis_hdf5(path.c_str());
    if (is_hdf5 < 0) fail(path, key, "cannot open the file: " + h5::last_error());
    if (is_hdf5 == 0) fail(path, key, "not an HDF5 file (or a damaged one)");
  }
  // Parsed as run files are (io/h5_file.h): from one in-memory copy, first in a child process,
  // so that a crafted or damaged file that crashes or hangs HDF5 ends the child, not training.
  std::vector<NumericArray> arrays;
  try {
    arrays = read_h5_checked<std::vector<NumericArray>>(path, "HDF5 data file", [&](hid_t file) {
      std::vector<NumericArray> read;
      for (const H5Request& r : requests) read.push_back(read_one(file, path, r));
      return read;
    });
  } catch (const RunFileError& e) {
    fail(path, key, e.what());
  }
  return arrays;
}

}  // namespace tn::io
