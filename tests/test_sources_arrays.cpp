// Tests of the array sources: NumPy .npy files (dtypes, header versions, malformed files)
// and HDF5 datasets, and the shape/value checks shared by both (dataset_from_arrays).
#include <hdf5.h>
#include <sys/stat.h>

#include <cmath>
#include <cstring>
#include <functional>

#include "config/config.h"
#include "data/sources.h"
#include "npy_test_util.h"
#include "source_test_util.h"

using namespace tn;
using namespace tn::test;

namespace {

std::string write_npy(const std::string& name, const Bytes& bytes) { return write_bytes(name + ".npy", bytes); }

SourceConfig npy_source(const std::string& x, const std::string& y) {
  return source_of("npy", {{&SourceConfig::x_path, x}, {&SourceConfig::y_path, y}});
}

const Bytes kX = npy("<f4", "(4, 2)", raw<float>({1, 2, 3, 4, 5, 6, 7, 8}));
const Bytes kLabels = npy("<i8", "(4,)", raw<std::int64_t>({0, 2, 1, 2}));

// The error of load_npy with X and y files of these bytes.
std::string npy_error(const Bytes& x, const Bytes& y, bool classification = true) {
  return data_error([&] { load_npy(npy_source(write_npy("ex", x), write_npy("ey", y)), classification); });
}

void h5_dataset(hid_t file, const char* name, hid_t type, std::vector<hsize_t> dims, const void* data) {
  const hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
  H5Pset_create_intermediate_group(lcpl, 1);
  const hid_t space = H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr);
  const hid_t d = H5Dcreate2(file, name, type, space, lcpl, H5P_DEFAULT, H5P_DEFAULT);
  REQUIRE(d >= 0);
  REQUIRE(H5Dwrite(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) >= 0);
  H5Dclose(d);
  H5Sclose(space);
  H5Pclose(lcpl);
}

// An HDF5 file with train X/y at the root, a test pair in /grp, text and a 3-D array.
std::string write_h5() {
  const std::string path = (fixture_dir() / "d.h5").string();
  const hid_t f = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  REQUIRE(f >= 0);
  const double X[] = {1.5, 2, 3, 4, 5, 6, 7, 8};
  const std::int64_t y[] = {3, 1, 0, 3};
  const float tX[] = {0.25f, 0.5f};
  const unsigned char ty[] = {2};
  const float cube[8] = {};
  h5_dataset(f, "/X", H5T_NATIVE_DOUBLE, {4, 2}, X);
  h5_dataset(f, "/y", H5T_NATIVE_INT64, {4}, y);
  h5_dataset(f, "/grp/tX", H5T_NATIVE_FLOAT, {1, 2}, tX);
  h5_dataset(f, "/grp/ty", H5T_NATIVE_UCHAR, {1}, ty);
  h5_dataset(f, "/cube", H5T_NATIVE_FLOAT, {2, 2, 2}, cube);
  const hid_t str = H5Tcopy(H5T_C_S1);
  H5Tset_size(str, 4);
  h5_dataset(f, "/names", str, {2}, "abc\0def");
  H5Tclose(str);
  H5Fclose(f);
  return path;
}

SourceConfig h5_source(const std::string& path, const std::string& x, const std::string& y) {
  return source_of("hdf5", {{&SourceConfig::path, path}, {&SourceConfig::x_dataset, x},
                            {&SourceConfig::y_dataset, y}});
}

}  // namespace

TEST_CASE("npy: every supported dtype reads as float32") {
  const std::vector<std::pair<std::string, Bytes>> cases = {
      {"<f4", raw<float>({1.5f, -2.25f, 3, 4})},
      {"<f8", raw<double>({1.5, -2.25, 3, 4})},
      {"|i1", raw<std::int8_t>({-1, 2, 3, 4})},
      {"<i2", raw<std::int16_t>({-300, 2, 3, 4})},
      {"<i4", raw<std::int32_t>({-70000, 2, 3, 4})},
      {"<i8", raw<std::int64_t>({-5, 2, 3, 4})},
      {"|u1", raw<std::uint8_t>({255, 0, 3, 4})},
      {"<u2", raw<std::uint16_t>({65535, 0, 3, 4})},
      {"<u4", raw<std::uint32_t>({70000, 0, 3, 4})},
      {"<u8", raw<std::uint64_t>({9, 0, 3, 4})},
      {"|b1", raw<std::uint8_t>({1, 0, 1, 1})},
  };
  const std::vector<std::vector<float>> want = {
      {1.5f, -2.25f, 3, 4}, {1.5f, -2.25f, 3, 4}, {-1, 2, 3, 4}, {-300, 2, 3, 4},
      {-70000, 2, 3, 4},    {-5, 2, 3, 4},        {255, 0, 3, 4}, {65535, 0, 3, 4},
      {70000, 0, 3, 4},     {9, 0, 3, 4},         {1, 0, 1, 1}};
  for (std::size_t i = 0; i < cases.size(); ++i) {
    CAPTURE(cases[i].first);
    const NumericArray a = read_npy(write_npy("dtype", npy(cases[i].first, "(2, 2)", cases[i].second)), "k");
    CHECK(a.shape == std::vector<std::uint64_t>{2, 2});
    CHECK(a.values == want[i]);
  }
  // Format versions 2 and 3 (4-byte header length), Python 2 longs, 1-D and empty shapes.
  for (int major : {2, 3})
    CHECK(read_npy(write_npy("v", npy("<f4", "(2L, 1L)", raw<float>({7, 8}), false, major)), "k").values ==
          std::vector<float>{7, 8});
  CHECK(read_npy(write_npy("c", npy("<u1", "(3,)", {1, 2, 3})), "k").shape == std::vector<std::uint64_t>{3});
  // Fortran order is harmless for 1-D arrays.
  CHECK(read_npy(write_npy("f1", npy("<f4", "(2,)", raw<float>({1, 2}), true)), "k").values.size() == 2);
}

TEST_CASE("npy: load_npy builds classification and regression datasets") {
  SourceConfig s = npy_source(write_npy("x", kX), write_npy("y", kLabels));
  Dataset d = load_npy(s, true);
  CHECK(d.n == 4);
  CHECK(d.features == 2);
  CHECK(d.X == std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8});
  CHECK(d.y == std::vector<float>{0, 2, 1, 2});
  CHECK(d.num_classes == 3);
  CHECK(d.class_names == std::vector<std::string>{"0", "1", "2"});
  CHECK(d.feature_names == std::vector<std::string>{"x0", "x1"});
  CHECK(d.origin == s.x_path);
  // Negative labels: distinct values numbered in increasing order.
  s.y_path = write_npy("yneg", npy("<f8", "(4,)", raw<double>({1, -1, -1, 1})));
  d = load_npy(s, true);
  CHECK(d.y == std::vector<float>{1, 0, 0, 1});
  CHECK(d.class_names == std::vector<std::string>{"-1", "1"});
  // Regression with two targets, a 1-D X, and a test pair after the training rows.
  s.x_path = write_npy("x1d", npy("<f4", "(4,)", raw<float>({1, 2, 3, 4})));
  s.y_path = write_npy("y2", npy("<f4", "(4, 2)", raw<float>({.5f, 1, 1.5f, 2, 2.5f, 3, 3.5f, 4})));
  s.test_x_path = write_npy("tx", npy("<f8", "(1, 1)", raw<double>({9})));
  s.test_y_path = write_npy("ty", npy("<f4", "(1, 2)", raw<float>({-1, -2})));
  d = load_npy(s, false);
  CHECK(d.n == 5);
  CHECK(d.features == 1);
  CHECK(d.targets == 2);
  CHECK(d.num_classes == 0);
  CHECK(d.predefined_test == 1);
  CHECK(d.X == std::vector<float>{1, 2, 3, 4, 9});
  CHECK(d.y.back() == -2.0f);
}

TEST_CASE("npy: malformed files and unsupported arrays are rejected with the fix") {
  const std::string ex = (fixture_dir() / "ex.npy").string();
  CHECK(npy_error(npy(">f4", "(4, 2)", Bytes(32)), kLabels) ==
        ex + " (data.source.x_path): is big-endian (dtype '>f4'); convert it, e.g. "
             "numpy.save(path, arr.astype('<f4')) (readable: little-endian float32/64, "
             "int8/16/32/64, uint8/16/32/64, bool)");
  CHECK_HAS(npy_error(npy("<f2", "(4, 2)", Bytes(16)), kLabels),
            "has dtype '<f2', which turbanet does not read; convert it");
  CHECK_HAS(npy_error(npy("<U3", "(4, 2)", Bytes(96)), kLabels), "has dtype '<U3'");
  CHECK_HAS(npy_error(npy("[('a', '<f4')]", "(4,)", Bytes(16)), kLabels),
            "the array has a structured dtype");
  CHECK_HAS(npy_error(npy("<f4", "(4, 2)", Bytes(32), true), kLabels),
            ex + " (data.source.x_path): the array is in Fortran (column-major) order; save a "
                 "C-order copy: numpy.save(path, numpy.ascontiguousarray(arr))");
  CHECK_HAS(npy_error(npy("<f4", "(4, 2)", Bytes(30)), kLabels),
            ex + " (data.source.x_path): truncated: the header declares shape (4, 2) of <f4 "
                 "(32 bytes of data) but 30 bytes follow the header");
  CHECK_HAS(npy_error(npy("<f4", "(4, 2)", Bytes(33)), kLabels), "damaged: the header declares");
  CHECK_HAS(npy_error({'x', ',', 'y', '\n'}, kLabels),
            "not a .npy file (it does not start with \\x93NUMPY); write it with numpy.save");
  CHECK_HAS(npy_error(npy("<f4", "(4, 2)", Bytes(32), false, 4), kLabels),
            "unsupported .npy format version 4.0");
  CHECK_HAS(npy_error(npy("<f4", "(4; 2)", Bytes(32)), kLabels),
            "the .npy header is malformed: expected ',' or ')' in the shape");
  // Values and shapes.
  CHECK_HAS(npy_error(npy("<f4", "(4, 2)", raw<float>({1, 2, NAN, 4, 5, 6, 7, 8})), kLabels),
            ex + " (data.source.x_path): X[1, 0] is NaN; remove or impute missing values");
  CHECK_HAS(npy_error(kX, npy("<f8", "(4,)", raw<double>({0, 1, 1e300, 0})), false),
            "y[2] is infinite or too large for a 32-bit float");
  CHECK_HAS(npy_error(kX, npy("<f4", "(4,)", raw<float>({0, 1, 0.5f, 0}))),
            "y[2] = 0.5 is not a whole number; class labels must be integers (for real-valued "
            "targets use a regression loss such as mse)");
  CHECK_HAS(npy_error(kX, npy("<i4", "(3,)", raw<std::int32_t>({0, 1, 1}))),
            "y has 3 rows but X (" + ex + ") has 4; they need one row per sample");
  CHECK_HAS(npy_error(npy("<f4", "(2, 2, 2)", Bytes(32)), kLabels),
            "X must be 2-D [samples, features] (or 1-D for one feature), got shape (2, 2, 2)");
  CHECK_HAS(npy_error(npy("<f4", "(4, 0)", {}), kLabels), "X has no features (shape (4, 0))");
  CHECK_HAS(npy_error(kX, npy("<f4", "(4, 3)", Bytes(48))),
            "y must be 1-D [samples] of class labels, got shape (4, 3); for one-hot labels save "
            "arr.argmax(axis=1)");
  CHECK_HAS(npy_error(kX, npy("<i4", "(4,)", raw<std::int32_t>({0, 70000, 1, 1}))),
            "y[1] = 70000 is too large");
  CHECK_HAS(npy_error(kX, npy("<i4", "(4,)", raw<std::int32_t>({3, 3, 3, 3}))),
            "y has only one class (3)");
  CHECK_HAS(npy_error(npy("<f4", "(1, 2)", raw<float>({1, 2})), npy("|u1", "(1,)", {1})),
            "X has 1 sample; at least 2 are needed");
  SourceConfig s = npy_source(write_npy("x", kX), write_npy("y", kLabels));
  s.test_x_path = write_npy("tx3", npy("<f4", "(1, 3)", raw<float>({1, 2, 3})));
  s.test_y_path = write_npy("ty3", npy("<f4", "(1,)", raw<float>({1})));
  CHECK_HAS(data_error([&] { load_npy(s, true); }),
            "tx3.npy (data.source.test_x_path): the test X has 3 features per sample, the "
            "training X (" + s.x_path + ") 2");
  CHECK_HAS(data_error([&] { load_npy(npy_source("/nonexistent.npy", "y"), true); }),
            "/nonexistent.npy (data.source.x_path): cannot open the file: No such file or directory");
}

TEST_CASE("hdf5: named datasets of any numeric type, with a test pair") {
  SourceConfig s = h5_source(write_h5(), "X", "/y");
  s.test_x_dataset = "grp/tX";
  s.test_y_dataset = "/grp/ty";
  const Dataset d = load_hdf5(s, true);
  CHECK(d.n == 5);
  CHECK(d.features == 2);
  CHECK(d.predefined_test == 1);
  CHECK(d.X == std::vector<float>{1.5f, 2, 3, 4, 5, 6, 7, 8, 0.25f, 0.5f});
  CHECK(d.y == std::vector<float>{3, 1, 0, 3, 2});
  CHECK(d.num_classes == 4);
  CHECK(d.origin == s.path);
  // The same file for regression, through load_dataset.
  DataConfig dc;
  dc.source = h5_source(s.path, "X", "y");
  CHECK(load_dataset(dc, false).targets == 1);
}

TEST_CASE("hdf5: missing files and datasets, groups, text and wrong ranks") {
  const std::string path = write_h5();
  const auto error = [&](const std::string& x, const std::string& y) {
    return data_error([&] { load_hdf5(h5_source(path, x, y), true); });
  };
  CHECK(error("features", "y") ==
        path + " (data.source.x_dataset): no dataset 'features'; the file has: /X, /cube, "
               "/grp/tX, /grp/ty, /names, /y");
  CHECK_HAS(error("X", "labels"), "(data.source.y_dataset): no dataset 'labels'; the file has: /X");
  CHECK_HAS(error("grp", "y"), "(data.source.x_dataset): '/grp' is a group, not a dataset; the file has: /X");
  CHECK_HAS(error("X", "names"),
            path + ":/names (data.source.y_dataset): the dataset holds strings, not numbers; store "
                   "the data as integers or floats");
  CHECK_HAS(error("cube", "y"),
            path + ":/cube (data.source.x_dataset): X must be 2-D [samples, features] (or 1-D for "
                   "one feature), got shape (2, 2, 2)");
  CHECK_HAS(error("X", "grp/ty"), "y has 1 row but X (" + path + ":/X) has 4");
  CHECK(data_error([&] { load_hdf5(h5_source("/nonexistent.h5", "X", "y"), true); }) ==
        "/nonexistent.h5 (data.source.path): the file does not exist");
  const std::string text = write_text("not.h5", "just text\n");
  CHECK(data_error([&] { load_hdf5(h5_source(text, "X", "y"), true); }) ==
        text + " (data.source.path): not an HDF5 file (or a damaged one)");
  // A FIFO blocked HDF5's open for ever; HDF5 data files are parsed like run files (from
  // memory, in a child first: io/h5_file.h), so they must be regular files.
  const std::string fifo = (std::filesystem::path(text).parent_path() / "data.fifo").string();
  std::filesystem::remove(fifo);
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  CHECK(data_error([&] { load_hdf5(h5_source(fifo, "X", "y"), true); }) ==
        fifo + " (data.source.path): not a regular file (a device, FIFO or socket); name the file itself");
  std::filesystem::remove(fifo);
}

TEST_CASE("arrays: arrays handed over in memory become the dataset, checked as a file source's") {
  const auto config = [](const std::string& source) {
    return parse_config("model: {layers: [{type: dense, units: 2}]}\nloss: cross_entropy\ndata: {source: " + source + "}\n",
                        "arrays.yaml");
  };
  const Config c = config("{type: arrays}");
  CHECK(c.data.source.type == "arrays");
  CHECK(to_yaml(c).find("type: arrays") != std::string::npos);
  SourceArrays a{{"X", "X", {3, 2}, {1, 2, 3, 4, 5, 6}}, {"y", "y", {3}, {0, 1, 1}}, std::nullopt, std::nullopt};
  const Dataset d = load_memory_arrays(c.data, true, &a);
  CHECK(d.n == 3);
  CHECK(d.features == 2);
  CHECK(d.X == std::vector<float>{1, 2, 3, 4, 5, 6});
  CHECK(d.origin.find("(3, 2)") != std::string::npos);
  SourceArrays bad{{"X", "X", {2, 1}, {1, NAN}}, {"y", "y", {2}, {0, 1}}, std::nullopt, std::nullopt};
  CHECK(data_error([&] { load_memory_arrays(c.data, true, &bad); }).find("X[1") != std::string::npos);
  // From the command line (no arrays in memory) the source says how to give the data there.
  CHECK(data_error([&] { load_dataset(c.data, true); }).find("type: npy") != std::string::npos);
  CHECK_THROWS_AS(config("{type: arrays, path: x.csv}"), ConfigError);
}
