// Shuffle + deflate of run-file chunks with libdeflate (see h5_deflate.h).
#include "io/h5_deflate.h"

#include <libdeflate.h>
#include <omp.h>

#include <algorithm>
#include <cstring>
#include <new>
#include <stdexcept>

namespace tn::h5 {

namespace {

// One compressor per thread, freed with it.
libdeflate_compressor* compressor() {
  struct Owned {
    libdeflate_compressor* c = libdeflate_alloc_compressor(kDeflateLevel);
    ~Owned() { libdeflate_free_compressor(c); }
  };
  thread_local Owned owned;
  if (!owned.c) throw std::bad_alloc();
  return owned.c;
}

// HDF5's shuffle filter: byte b of element i goes to b·n + i.
void shuffle(const unsigned char* in, std::uint64_t n, std::uint64_t elem_size, unsigned char* out) {
  for (std::uint64_t b = 0; b < elem_size; ++b) {
    unsigned char* plane = out + b * n;
    for (std::uint64_t i = 0; i < n; ++i) plane[i] = in[i * elem_size + b];
  }
}

// shuffle + zlib-format deflate of `bytes` (HDF5's deflate filter writes zlib streams).
std::vector<unsigned char> filter(const unsigned char* in, std::uint64_t bytes, std::uint64_t elem_size) {
  std::vector<unsigned char> shuffled(bytes);
  shuffle(in, bytes / elem_size, elem_size, shuffled.data());
  libdeflate_compressor* c = compressor();
  std::vector<unsigned char> out(libdeflate_zlib_compress_bound(c, bytes));
  const std::size_t n = libdeflate_zlib_compress(c, shuffled.data(), bytes, out.data(), out.size());
  out.resize(n);  // n > 0: the buffer has the worst-case bound
  return out;
}

}  // namespace

double deflate_ratio(const void* data, std::uint64_t bytes, std::uint64_t elem_size, std::uint64_t sample_bytes) {
  const std::uint64_t take = std::min(bytes, sample_bytes) / elem_size * elem_size;
  if (take == 0) return 1.0;
  return static_cast<double>(filter(static_cast<const unsigned char*>(data), take, elem_size).size()) /
         static_cast<double>(take);
}

std::vector<FilteredChunk> shuffle_deflate_chunks(const void* data, const std::vector<hsize_t>& dims,
                                                  const std::vector<hsize_t>& chunk, std::uint64_t elem_size) {
  const std::size_t rank = dims.size();
  // The split axis: the last one the chunk does not cover whole (0 when it covers all).
  std::size_t a = 0;
  for (std::size_t i = 0; i < rank; ++i)
    if (chunk[i] != dims[i]) a = i;
  for (std::size_t i = 0; i < a; ++i)
    if (chunk[i] != 1) throw std::invalid_argument("shuffle_deflate_chunks: chunk shape is not [1.., c, whole..]");
  std::uint64_t inner = elem_size;  // bytes per step along axis a
  for (std::size_t i = a + 1; i < rank; ++i) inner *= dims[i];
  std::uint64_t outer = 1;  // chunks' positions before axis a (one row each)
  for (std::size_t i = 0; i < a; ++i) outer *= dims[i];
  const std::uint64_t per_axis = (dims[a] + chunk[a] - 1) / chunk[a];
  const std::uint64_t count = outer * per_axis, chunk_bytes = chunk[a] * inner;
  std::vector<FilteredChunk> out(count);
  const auto* bytes = static_cast<const unsigned char*>(data);
  // Every core, named explicitly: the default team size of the main thread is 1 once
  // OpenBLAS's OpenMP build has been held at one thread (openblas_set_num_threads sets it).
#pragma omp parallel for schedule(dynamic, 1) num_threads(omp_get_num_procs()) if (count > 1)
  for (std::int64_t c = 0; c < static_cast<std::int64_t>(count); ++c) {
    const std::uint64_t row = static_cast<std::uint64_t>(c) / per_axis, j = static_cast<std::uint64_t>(c) % per_axis;
    FilteredChunk& fc = out[static_cast<std::size_t>(c)];
    fc.offset.assign(rank, 0);
    for (std::size_t i = a, r = row; i-- > 0; r /= dims[i]) fc.offset[i] = r % dims[i];
    fc.offset[a] = j * chunk[a];
    const std::uint64_t rows = std::min<std::uint64_t>(chunk[a], dims[a] - j * chunk[a]);
    const unsigned char* src = bytes + (row * dims[a] + j * chunk[a]) * inner;
    if (rows == chunk[a]) {
      fc.bytes = filter(src, chunk_bytes, elem_size);
    } else {  // an edge chunk, zero-padded
      std::vector<unsigned char> padded(chunk_bytes, 0);
      std::memcpy(padded.data(), src, rows * inner);
      fc.bytes = filter(padded.data(), chunk_bytes, elem_size);
    }
  }
  return out;
}

}  // namespace tn::h5
