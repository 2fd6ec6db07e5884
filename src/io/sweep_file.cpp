// Sweep files in HDF5.
#include "io/sweep_file.h"

#include "io/h5.h"
#include "io/h5_file.h"

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

}  // namespace tn
