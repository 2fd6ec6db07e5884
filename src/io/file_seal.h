// The seal of every HDF5 file turbanet writes: its first 512 bytes (HDF5's user block, which
// HDF5 and h5py skip) hold a CRC-32 and the length of the rest of the file, so a reader
// checks every byte before HDF5 parses any of them. A flipped byte, a truncation or a change
// by another program is refused with a message instead of reaching HDF5, whose 1.10 reader
// can crash or loop on damaged metadata.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

namespace tn::io {

inline constexpr std::size_t kSealBytes = 512;  // the user block (HDF5 needs a power of two >= 512)

// Puts the seal in front of a file image made with a user block of kSealBytes
// (h5::create_memory_file does; HDF5's image leaves the user block itself out).
void seal_image(std::vector<unsigned char>& image);

// Verified: sealed, and every byte matches. Absent: no seal, and the file starts with HDF5's
// signature or an empty (all-zero) user block, as files written before files were sealed do;
// nothing is known about its bytes. Foreign: the first 512 bytes are neither (a damaged seal,
// or not an HDF5 file at all: the caller tells which).
enum class Seal { Verified, Absent, Foreign };

// Reads the file at `path` and checks its seal. Throws RunFileError naming `named` ("run file
// 'x.h5'") when there is a seal and it does not match the bytes (or its own padding).
Seal verify_seal(const std::string& path, const std::string& named);

}  // namespace tn::io
