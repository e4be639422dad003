// Byte counts for people: the sizes the CLI prints and the ones error messages name (a
// download's "the files need ... but ... has ... free").
#pragma once

#include <cstdint>
#include <string>

namespace xet {

// Binary units with three significant digits: 1023 -> "1023 B", 1536 -> "1.50 KiB",
// 10752 -> "10.5 KiB", 1 << 30 -> "1.00 GiB"; values below 1 KiB print as "N B".
std::string HumanBytes(uint64_t bytes);

}  // namespace xet
