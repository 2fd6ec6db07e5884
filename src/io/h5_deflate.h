// Compression of run-file datasets outside HDF5's filter pipeline: the bytes HDF5's shuffle
// and deflate filters would produce, made by libdeflate (about twice zlib's speed at level 1,
// same zlib stream format) on all cores, then handed to H5Dwrite_chunk. Readers decode them
// with the standard filters (h5py, h5dump: nothing to install).
#pragma once
#include <hdf5.h>

#include <cstdint>
#include <vector>

namespace tn::h5 {

// Deflate level of every compressed dataset (1: fastest; the shuffle does most of the work).
inline constexpr int kDeflateLevel = 1;

// Compressed size / size of the first `sample_bytes` of `data` (whole elements of
// `elem_size` bytes) after shuffle + deflate.
double deflate_ratio(const void* data, std::uint64_t bytes, std::uint64_t elem_size, std::uint64_t sample_bytes);

// One chunk as stored: its first element's coordinates and its filtered bytes.
struct FilteredChunk {
  std::vector<hsize_t> offset;
  std::vector<unsigned char> bytes;
};

// Every chunk of a row-major array of shape `dims` split into chunks of shape `chunk`, where
// chunk is [1, ..., 1, c, dims...] (one leading axis partly split, the axes before it split
// into single rows: each chunk is contiguous in memory). Edge chunks are zero-padded to the
// full chunk shape, as HDF5 stores them. Chunks are compressed in parallel. Throws
// std::invalid_argument for any other chunk shape.
std::vector<FilteredChunk> shuffle_deflate_chunks(const void* data, const std::vector<hsize_t>& dims,
                                                  const std::vector<hsize_t>& chunk, std::uint64_t elem_size);

}  // namespace tn::h5
