// The 256 gearhash constants used by the content-defined chunker.
#pragma once

#include <array>
#include <cstdint>

namespace xet {

extern const std::array<uint64_t, 256> kGearTable;

}  // namespace xet
