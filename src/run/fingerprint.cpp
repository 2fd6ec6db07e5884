// Data fingerprints for resumed runs (see run/fingerprint.h).
#include "run/fingerprint.h"

#include <libdeflate.h>

#include <cstdint>
#include <cstdio>
#include <vector>

namespace tn {
namespace {

// Continues CRC-32 `c` over v's bytes (libdeflate_crc32 restarts at a null buffer, which an
// empty vector may have, so empty vectors are skipped).
template <class T>
std::uint32_t crc(std::uint32_t c, const std::vector<T>& v) {
  return v.empty() ? c : libdeflate_crc32(c, v.data(), v.size() * sizeof(T));
}

}  // namespace

std::string data_fingerprint(const PreparedData& data, const MemberSets& sets) {
  std::uint32_t c = 0;
  for (const SplitData* s : {&data.train, &data.val, &data.test}) c = crc(crc(crc(c, s->X), s->y), s->rows);
  c = crc(crc(c, sets.rows), sets.offset);
  char text[160];
  std::snprintf(text, sizeof text, "train %d val %d test %d features %d crc32 %08x", data.train.n, data.val.n,
                data.test.n, data.features, static_cast<unsigned>(c));
  return text;
}

}  // namespace tn
