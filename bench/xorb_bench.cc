// Chunk compression (LZ4 frame, BG4+LZ4) on 64 KiB chunks, xorb building, and xorb
// parse + full verification, on random and text-like data.
#include <benchmark/benchmark.h>

#include "bench_data.h"
#include "format/compression.h"
#include "format/xorb.h"

namespace xet::bench {
namespace {

constexpr size_t kChunk = 64 * 1024;

const std::vector<uint8_t>& Data(int which) { return which == 0 ? RandomData() : TextData(); }
const char* DataName(int which) { return which == 0 ? "random" : "text"; }

CompressionScheme SchemeArg(int64_t a) {
  return a == 1 ? CompressionScheme::kLz4 : CompressionScheme::kBg4Lz4;
}

// Compresses every 64 KiB chunk of the data set with exactly one scheme.
void BM_Compress(benchmark::State& state) {
  const auto& data = Data(static_cast<int>(state.range(1)));
  const CompressionScheme scheme = SchemeArg(state.range(0));
  state.SetLabel(std::string(CompressionSchemeName(scheme)) + " " +
                 DataName(static_cast<int>(state.range(1))));
  ChunkCodec codec;
  std::vector<uint8_t> dst(ChunkCodec::MaxCompressedSize(kChunk));
  size_t out_bytes = 0;
  for (auto _ : state) {
    out_bytes = 0;
    for (size_t off = 0; off + kChunk <= data.size(); off += kChunk) {
      auto n = codec.CompressWith(scheme, {data.data() + off, kChunk}, dst);
      if (!n.ok()) {
        state.SkipWithError(n.status().ToString().c_str());
        return;
      }
      out_bytes += *n;
    }
    benchmark::DoNotOptimize(out_bytes);
  }
  state.counters["ratio"] = static_cast<double>(out_bytes) / static_cast<double>(data.size());
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * data.size()));
}
BENCHMARK(BM_Compress)->ArgsProduct({{1, 2}, {0, 1}})->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_Decompress(benchmark::State& state) {
  const auto& data = Data(static_cast<int>(state.range(1)));
  const CompressionScheme scheme = SchemeArg(state.range(0));
  state.SetLabel(std::string(CompressionSchemeName(scheme)) + " " +
                 DataName(static_cast<int>(state.range(1))));
  ChunkCodec codec;
  // Compress once up front; time only decompression.
  std::vector<std::vector<uint8_t>> payloads;
  std::vector<uint8_t> dst(ChunkCodec::MaxCompressedSize(kChunk));
  for (size_t off = 0; off + kChunk <= data.size(); off += kChunk) {
    auto n = codec.CompressWith(scheme, {data.data() + off, kChunk}, dst);
    if (!n.ok()) {
      state.SkipWithError(n.status().ToString().c_str());
      return;
    }
    payloads.emplace_back(dst.begin(), dst.begin() + static_cast<ptrdiff_t>(*n));
  }
  std::vector<uint8_t> out(kChunk);
  for (auto _ : state) {
    for (const auto& p : payloads) {
      if (!codec.Decompress(scheme, p, out).ok()) state.SkipWithError("decompress failed");
    }
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * payloads.size() * kChunk));
}
BENCHMARK(BM_Decompress)
    ->ArgsProduct({{1, 2}, {0, 1}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// Builds 64 MiB xorbs (compression by the default predictor policy) from 64 KiB chunks.
void BM_XorbBuild(benchmark::State& state) {
  const auto& data = Data(static_cast<int>(state.range(0)));
  state.SetLabel(DataName(static_cast<int>(state.range(0))));
  XorbBuilder builder;
  for (auto _ : state) {
    for (size_t off = 0; off + kChunk <= data.size(); off += kChunk) {
      if (!builder.CanAdd(kChunk)) benchmark::DoNotOptimize(builder.Finish());
      if (!builder.Add({data.data() + off, kChunk}).ok()) state.SkipWithError("add failed");
    }
    benchmark::DoNotOptimize(builder.Finish());
  }
  state.SetBytesProcessed(
      static_cast<int64_t>(state.iterations() * (data.size() / kChunk) * kChunk));
}
BENCHMARK(BM_XorbBuild)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime();

// A 64 MiB raw xorb of 1,024 LZ4-compressed 64 KiB chunks: parse, decompress and hash each
// chunk once, compute the xorb hash and compare (what the server does on upload).
void BM_XorbParseVerify(benchmark::State& state) {
  const auto& data = Data(static_cast<int>(state.range(0)));
  state.SetLabel(DataName(static_cast<int>(state.range(0))));
  // Up to 1,024 chunks; incompressible data is stored raw, so one chunk fewer fits in the
  // 64 MiB limit once the 8-byte headers are counted.
  XorbBuilder builder(CompressionPolicy::kLz4);
  size_t chunks = 0;
  while (chunks < 1024 && (chunks + 1) * kChunk <= data.size() && builder.CanAdd(kChunk)) {
    if (!builder.Add({data.data() + chunks * kChunk, kChunk}).ok()) {
      state.SkipWithError("add failed");
      return;
    }
    ++chunks;
  }
  const SerializedXorb xorb = builder.Finish();
  ChunkCodec codec;
  for (auto _ : state) {
    auto v = ParseAndVerifyXorb(xorb.bytes, xorb.hash, XorbTrailingBytes::kReject, &codec);
    if (!v.ok()) state.SkipWithError(v.status().ToString().c_str());
    benchmark::DoNotOptimize(v);
  }
  state.counters["xorb_MiB"] = static_cast<double>(xorb.bytes.size()) / (1 << 20);
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * chunks * kChunk));
}
BENCHMARK(BM_XorbParseVerify)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace xet::bench
