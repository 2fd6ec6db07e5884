// The seal of every HDF5 file turbanet writes: its first 512 bytes (HDF5's user block, which
// HDF5 and h5py skip) hold a CRC-32 and the length of the rest of the file, so a reader
// checks every byte before HDF5 parses any of them. A flipped byte, a truncation or a change
// by another program is refused with a message that says so. It detects damage, not intent:
// a file edited on purpose and sealed again passes, so readers still guard HDF5's parsing
// (io/h5_file.h), whose 1.10 version can crash or loop on crafted metadata.
#pragma once
#include <cstddef>
#include <span>
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

// Checks the seal of a whole file's `bytes`. Throws RunFileError naming `named` ("run file
// 'x.h5'") when there is a seal and it does not match the bytes (or its own padding). A
// verified seal says the bytes are the ones written with it, not who wrote them: the CRC is
// anyone's to recompute, so a reader still parses sealed bytes as untrusted.
Seal verify_seal(std::span<const unsigned char> bytes, const std::string& named);

}  // namespace tn::io
