// File seals: "turbanet-seal v1\ncrc32 <8 hex>\nbytes <n>\n" in the user block, zero padded.
#include "io/file_seal.h"

#include <libdeflate.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>

#include "io/run_file_error.h"

namespace tn::io {
namespace {

constexpr char kMagic[] = "turbanet-seal v1\n";

std::uint32_t crc_of(const unsigned char* p, std::size_t n) { return libdeflate_crc32(0, p, n); }

}  // namespace

void seal_image(std::vector<unsigned char>& image) {
  // HDF5's file image leaves out the user block: the seal goes in front of it.
  const std::size_t body = image.size();
  char header[kSealBytes] = {};
  std::snprintf(header, sizeof header, "%scrc32 %08" PRIx32 "\nbytes %zu\n", kMagic, crc_of(image.data(), body), body);
  image.insert(image.begin(), header, header + kSealBytes);
}

Seal verify_seal(std::span<const unsigned char> bytes, const std::string& named) {
  char header[kSealBytes] = {};
  const std::size_t got_header = std::min(bytes.size(), kSealBytes);
  std::memcpy(header, bytes.data(), got_header);
  if (got_header < sizeof kMagic - 1 || std::memcmp(header, kMagic, sizeof kMagic - 1) != 0) {
    static const char kHdf5Signature[8] = {'\x89', 'H', 'D', 'F', '\r', '\n', '\x1a', '\n'};
    if (got_header >= 8 && std::memcmp(header, kHdf5Signature, 8) == 0) return Seal::Absent;
    if (got_header == kSealBytes && std::all_of(header, header + kSealBytes, [](char c) { return c == 0; }))
      return Seal::Absent;
    return Seal::Foreign;
  }
  if (header[kSealBytes - 1] != '\0')
    throw RunFileError(named + " is damaged: its seal (the first 512 bytes) was changed; restore the file from "
                       "a copy or train again");
  unsigned crc = 0;
  unsigned long long written = 0;
  if (std::sscanf(header + sizeof kMagic - 1, "crc32 %8x\nbytes %llu\n", &crc, &written) != 2)
    throw RunFileError(named + " is damaged: its seal (the first 512 bytes) is unreadable; restore the file from "
                       "a copy or train again");
  if (got_header < kSealBytes) throw RunFileError(named + " is damaged: it ends inside its seal");
  // The seal's text, then zeros: nothing else may differ in the first 512 bytes.
  const std::size_t text = std::strlen(header);
  char expected[kSealBytes] = {};
  std::snprintf(expected, sizeof expected, "%scrc32 %08x\nbytes %llu\n", kMagic, crc, written);
  if (std::memcmp(header, expected, text + 1) != 0 || std::strlen(expected) != text ||
      !std::all_of(header + text, header + kSealBytes - 1, [](char c) { return c == 0; }))
    throw RunFileError(named + " is damaged: its seal (the first 512 bytes) was changed; restore the file from "
                       "a copy or train again");
  // The rest of the file against the recorded length and checksum.
  const unsigned long long seen = bytes.size() - kSealBytes;
  if (seen != written)
    throw RunFileError(named + " is damaged: it holds " + std::to_string(bytes.size()) + " bytes, but was written with " +
                       std::to_string(written + kSealBytes) + (seen < written ? " (truncated)" : "") +
                       "; restore it from a copy or train again");
  const std::uint32_t got = crc_of(bytes.data() + kSealBytes, bytes.size() - kSealBytes);
  if (got != crc) {
    char detail[64];
    std::snprintf(detail, sizeof detail, "checksum %08" PRIx32 ", written %08x", got, crc);
    throw RunFileError(named + " is damaged or was changed by another program since turbanet wrote it (" + detail +
                       "); restore it from a copy or train again");
  }
  return Seal::Verified;
}

}  // namespace tn::io
