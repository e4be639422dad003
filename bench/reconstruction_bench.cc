// Reconstruction planning + JSON: a 100,000-term file over 1,000 xorbs of 1,024 chunks.
// Shapes: "unmerged" (consecutive terms name different xorbs; each xorb's 100 terms are
// disjoint chunk runs, so every xorb keeps 100 fetch ranges) and "merged" (each xorb's 100
// terms are adjacent in the file and in the xorb, so they merge into one fetch range).
// Each iteration plans and serializes (v1 also signs one URL per range).
#include <benchmark/benchmark.h>

#include <cstring>
#include <memory>
#include <random>
#include <unordered_map>

#include "server/cas/reconstruction.h"

namespace xet::bench {
namespace {

constexpr uint32_t kXorbs = 1000;
constexpr uint32_t kChunks = 1024;
constexpr uint32_t kTerms = 100000;
constexpr uint32_t kTermsPerXorb = kTerms / kXorbs;

struct Corpus {
  std::vector<XorbRecord> xorbs;
  std::unordered_map<Hash, const XorbRecord*, HashHasher> by_hash;
  FileRecord unmerged;
  FileRecord merged;
};

// splitmix64-derived hash values (fast to make; the plan only compares them).
Hash BenchHash(uint64_t seed) {
  std::array<uint8_t, 32> raw;
  uint64_t state = seed * 4;
  for (size_t i = 0; i < 32; i += 8) {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    std::memcpy(raw.data() + i, &z, 8);
  }
  return Hash::FromArray(raw);
}

const Corpus& GetCorpus() {
  static const Corpus* corpus = [] {
    auto* c = new Corpus;
    std::mt19937 rng(42);
    std::uniform_int_distribution<uint32_t> raw_size(8 * 1024, 64 * 1024);
    c->xorbs.resize(kXorbs);
    for (uint32_t x = 0; x < kXorbs; ++x) {
      XorbRecord& r = c->xorbs[x];
      r.hash = BenchHash(x);
      uint32_t u = 0, z = 0;
      for (uint32_t i = 0; i < kChunks; ++i) {
        uint32_t n = raw_size(rng);
        u += n;
        z += n / 2 + 8;
        r.chunks.push_back(XorbChunkRow{BenchHash(1000000 + x * kChunks + i), z, u});
      }
      r.object_size = z;
      c->by_hash[r.hash] = &r;
    }
    auto add_term = [&](FileRecord& f, uint32_t x, uint32_t start, uint32_t end) {
      const XorbRecord& r = c->xorbs[x];
      uint32_t base = start == 0 ? 0 : r.chunks[start - 1].uncompressed_end;
      uint32_t bytes = r.chunks[end - 1].uncompressed_end - base;
      f.terms.push_back(FileTerm{r.hash, start, end, bytes});
      f.size += bytes;
    };
    for (uint32_t t = 0; t < kTerms; ++t) {
      uint32_t k = t / kXorbs;  // disjoint runs [10k, 10k+8)
      add_term(c->unmerged, t % kXorbs, 10 * k, 10 * k + 8);
    }
    for (uint32_t t = 0; t < kTerms; ++t) {
      uint32_t k = t % kTermsPerXorb;  // adjacent runs [10k, 10k+10)
      add_term(c->merged, t / kTermsPerXorb, 10 * k, 10 * k + 10);
    }
    return c;
  }();
  return *corpus;
}

const FileRecord& FileFor(const benchmark::State& state) {
  return state.range(0) == 0 ? GetCorpus().unmerged : GetCorpus().merged;
}

XorbLookup Lookup() {
  const Corpus& c = GetCorpus();
  return [&c](const Hash& h) -> const XorbRecord* {
    auto it = c.by_hash.find(h);
    return it == c.by_hash.end() ? nullptr : it->second;
  };
}

const TransferSigner& Signer() {
  static const TransferSigner* s =
      new TransferSigner(TransferSigner::Create(std::string(32, 'k')).value());
  return *s;
}

enum class Format { kV2, kV1 };

void Run(benchmark::State& state, Format format, bool random_range) {
  const FileRecord& file = FileFor(state);
  state.SetLabel(state.range(0) == 0 ? "unmerged" : "merged");
  XorbLookup lookup = Lookup();
  std::mt19937_64 rng(7);
  size_t bytes = 0, terms = 0;
  for (auto _ : state) {
    std::optional<ByteRange> range;
    if (random_range) {
      uint64_t a = rng() % file.size, b = rng() % file.size;
      range = ByteRange{std::min(a, b), std::max(a, b)};
    }
    auto plan = PlanReconstruction(file, lookup, range);
    if (!plan.ok()) {
      state.SkipWithError(plan.status().ToString().c_str());
      return;
    }
    auto signer = Signer().NewUrlSigner("http://127.0.0.1:8080", 1900000000);
    std::string body = format == Format::kV2 ? SerializeReconstructionV2(*plan, *signer)
                                             : SerializeReconstructionV1(*plan, *signer);
    bytes += body.size();
    terms += plan->terms.size();
    benchmark::DoNotOptimize(body.data());
  }
  state.counters["body_MB"] = benchmark::Counter(static_cast<double>(bytes) / 1e6 /
                                                 static_cast<double>(state.iterations()));
  state.counters["terms"] =
      benchmark::Counter(static_cast<double>(terms) / static_cast<double>(state.iterations()));
}

void BM_ReconstructionV2Full(benchmark::State& state) { Run(state, Format::kV2, false); }
void BM_ReconstructionV2RandomRange(benchmark::State& state) { Run(state, Format::kV2, true); }
void BM_ReconstructionV1Full(benchmark::State& state) { Run(state, Format::kV1, false); }

// Planning alone, to separate it from serialization.
void BM_ReconstructionPlanOnly(benchmark::State& state) {
  const FileRecord& file = FileFor(state);
  state.SetLabel(state.range(0) == 0 ? "unmerged" : "merged");
  XorbLookup lookup = Lookup();
  for (auto _ : state) {
    auto plan = PlanReconstruction(file, lookup, std::nullopt);
    benchmark::DoNotOptimize(plan.ok());
  }
}

// Signing alone: 100,000 single-range URLs written into one reused buffer.
void BM_SignUrls(benchmark::State& state) {
  auto signer = Signer().NewUrlSigner("http://127.0.0.1:8080", 1900000000);
  std::vector<char> buf(signer->MaxUrlSize(1));
  char hex[64];
  Hash h = BenchHash(1);
  h.ToHex(hex);
  uint64_t n = 0;
  for (auto _ : state) {
    for (uint64_t i = 0; i < 100000; ++i, ++n) {
      ByteRange r{n, n + 65535};
      char* end = signer->WriteUrl(buf.data(), h, hex, std::span<const ByteRange>(&r, 1));
      benchmark::DoNotOptimize(end);
    }
  }
}

BENCHMARK(BM_SignUrls)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ReconstructionPlanOnly)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ReconstructionV2Full)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ReconstructionV2RandomRange)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ReconstructionV1Full)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace xet::bench
