// Chunking alone and chunking + hashing, on random and text-like data.
#include <benchmark/benchmark.h>

#include "bench_data.h"
#include "format/chunker.h"
#include "format/keyed_hash.h"
#include "format/merkle.h"

namespace xet::bench {
namespace {

const std::vector<uint8_t>& Data(int which) { return which == 0 ? RandomData() : TextData(); }
const char* DataName(int which) { return which == 0 ? "random" : "text"; }

void BM_Chunk(benchmark::State& state) {
  const auto& data = Data(static_cast<int>(state.range(0)));
  state.SetLabel(DataName(static_cast<int>(state.range(0))));
  for (auto _ : state) {
    auto ends = ChunkBoundaries(data);
    benchmark::DoNotOptimize(ends.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * data.size()));
}
BENCHMARK(BM_Chunk)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime();

// The gear scan over every byte (no min-size skip-ahead), for comparison with BM_Chunk.
void BM_GearScanNoSkip(benchmark::State& state) {
  const auto& data = RandomData();
  for (auto _ : state) {
    uint64_t h = 0;
    size_t pos = 0, hits = 0;
    while ((pos = internal::FindGearHit(data.data(), pos, data.size(), &h)) < data.size()) {
      ++pos;
      ++hits;
    }
    benchmark::DoNotOptimize(hits);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * data.size()));
}
BENCHMARK(BM_GearScanNoSkip)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_ChunkAndHash(benchmark::State& state) {
  const auto& data = Data(static_cast<int>(state.range(0)));
  state.SetLabel(DataName(static_cast<int>(state.range(0))));
  for (auto _ : state) {
    Chunker chunker;
    std::vector<ChunkInfo> chunks;
    std::span<const uint8_t> rest(data);
    while (!rest.empty()) {
      size_t n = chunker.NextBoundary(rest);
      if (n == 0) n = rest.size();
      chunks.push_back({ChunkHash(rest.first(n)), n});
      rest = rest.subspan(n);
    }
    benchmark::DoNotOptimize(FileHash(chunks));
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * data.size()));
}
BENCHMARK(BM_ChunkAndHash)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace xet::bench
