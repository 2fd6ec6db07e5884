// Sweep files in HDF5.
#include "io/sweep_file.h"

#include "io/h5.h"
#include "io/h5_file.h"
#include "io/run_file_error.h"

namespace tn {

void write_sweep_file(const std::string& path, const SweepTable& t, bool replace) {
  io::write_h5_atomically(path, "sweep file", [&](hid_t file) {
    h5::Handle g = h5::create_group(file, "/sweep");
    h5::set_string_attr(g.get(), "/sweep", "version", t.version);
    h5::set_double_attr(g.get(), "/sweep", "peak_gflops", t.peak_gflops);
    h5::set_int_attr(g.get(), "/sweep", "peak_gemm_n", t.peak_n, H5T_STD_I32LE);
    g.close("group /sweep");
    for (std::size_t c = 0; c < t.columns.size(); ++c) {
      if (!t.text[c].empty()) h5::write_strings(file, "/sweep/" + t.columns[c], t.text[c]);
      else h5::write_doubles(file, "/sweep/" + t.columns[c], t.num[c]);
    }
  }, replace ? io::Replace::Yes : io::Replace::No);
}

SweepTable read_sweep_file(const std::string& path) {
  return io::read_h5_checked<SweepTable>(path, "sweep file", [&](hid_t file) {
    if (!h5::exists(file, "/sweep"))
      throw RunFileError("'" + path + "' has no /sweep group: it is not a file turbanet sweep --out FILE.h5 wrote");
    SweepTable t;
    h5::Handle g = h5::open_group(file, "/sweep");
    if (h5::has_attr(g.get(), "/sweep", "version")) t.version = h5::get_string_attr(g.get(), "/sweep", "version");
    if (h5::has_attr(g.get(), "/sweep", "peak_gflops")) t.peak_gflops = h5::get_double_attr(g.get(), "/sweep", "peak_gflops");
    if (h5::has_attr(g.get(), "/sweep", "peak_gemm_n"))
      t.peak_n = static_cast<int>(h5::get_int_attr(g.get(), "/sweep", "peak_gemm_n"));
    for (const std::string& c : h5::list_group(file, "/sweep")) {
      const std::string name = "/sweep/" + c;
      t.columns.push_back(c);
      const bool text = h5::is_string_dataset(file, name);
      t.text.push_back(text ? h5::read_strings(file, name) : std::vector<std::string>{});
      t.num.push_back(text ? std::vector<double>{} : h5::read_doubles(file, name));
    }
    return t;
  });
}

bool is_sweep_file(const std::string& path) {
  try {
    return io::read_h5_checked<bool>(path, "sweep file", [](hid_t file) { return h5::exists(file, "/sweep"); });
  } catch (const RunFileError&) {
    return false;
  }
}

}  // namespace tn
