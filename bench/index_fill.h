// Filling an index with synthetic records, so a benchmark can measure a request on an index
// the size of a large deployment: xorbs of one chunk and files of one term each, written
// through the Index API (the same statements an upload runs), from several threads.
#pragma once

#include <cstdint>

#include "store/index.h"

namespace xet::bench {

// Adds xorbs and files number [from, to) (each file's one term names the xorb of its number)
// to `index`, visible to scope "bench/fill", with `threads` writers. Throws on any error.
// Filling [0, a) then [a, b) gives the same index as [0, b).
void FillIndex(Index& index, uint64_t from, uint64_t to, unsigned threads);

}  // namespace xet::bench
