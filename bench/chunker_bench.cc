// Chunking alone and chunking + hashing, on random and text-like data; and the uploader's
// block-wise chunk + hash (BlockChunker) with and without a helper thread.
#include <benchmark/benchmark.h>

#include <cstring>
#include <memory>

#include "bench_data.h"
#include "client/upload/block_chunker.h"
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

// As the uploader streams a file: 8 MiB blocks copied into a read buffer (the copy a read()
// from the page cache makes), chunked and hashed by BlockChunker with state.range(0) helper
// threads, the open chunk moved to the buffer's front. Random data.
void BM_BlockChunkAndHash(benchmark::State& state) {
  constexpr size_t kBlock = 8 << 20;
  const auto& data = RandomData();
  const auto buffer = std::make_unique<uint8_t[]>(kBlock + kMaxChunkSize);
  BlockChunker chunker(static_cast<size_t>(state.range(0)));
  std::vector<BlockChunk> chunks;
  for (auto _ : state) {
    size_t len = 0, offset = 0, count = 0;
    while (true) {
      const size_t n = std::min(kBlock, data.size() - offset);
      std::memcpy(buffer.get() + len, data.data() + offset, n);
      offset += n;
      len += n;
      const bool end = offset == data.size();
      chunker.Chunk({buffer.get(), len}, end, &chunks);
      const size_t consumed = chunks.empty() ? 0 : chunks.back().offset + chunks.back().size;
      count += chunks.size();
      std::memmove(buffer.get(), buffer.get() + consumed, len - consumed);
      len -= consumed;
      if (end) break;
    }
    benchmark::DoNotOptimize(count);
  }
  state.SetLabel(std::to_string(state.range(0)) + " helper(s)");
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * data.size()));
}
BENCHMARK(BM_BlockChunkAndHash)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace xet::bench
