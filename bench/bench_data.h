// Deterministic benchmark inputs, generated once per process.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace xet::bench {

// 1 GiB unless XETSTORE_BENCH_BYTES overrides it (CI runs a short mode).
size_t BenchBytes();
// Random bytes (incompressible), BenchBytes() long, cached; or the contents of the file
// named by XETSTORE_BENCH_RANDOM_FILE (so scripts can time other tools on the same bytes).
const std::vector<uint8_t>& RandomData();
// `n` text-like bytes (compressible, CSV/log-like words and numbers); deterministic.
std::vector<uint8_t> MakeText(size_t n);
// Text-like bytes as MakeText, BenchBytes() long, cached.
const std::vector<uint8_t>& TextData();

}  // namespace xet::bench
