// A fingerprint of what a run trains on: every split's inputs, targets and rows and the
// members' sets, so that a resumed run can tell whether its data are those of the checkpoint.
#pragma once
#include <string>

#include "data/member_sets.h"
#include "data/prepare.h"

namespace tn {

// "train N val N test N features F crc32 XXXXXXXX": the split sizes and one CRC-32 over the
// bytes of every split's X, y and rows and of the member sets' rows and offsets.
std::string data_fingerprint(const PreparedData& data, const MemberSets& sets);

}  // namespace tn
