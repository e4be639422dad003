// RangeReader over a fake CAS (RangeSource) that serves synthetic xorbs: byte-exact random
// and sequential reads with and without chunk detail, chunk-exact fetches, caches shared
// across files and readers, refused URLs, and malformed answers and chunk data.
#include "client/download/range_reader.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <map>
#include <random>
#include <thread>
#include <tuple>
#include <vector>

#include "client/cache/chunk_cache.h"
#include "common/mutex.h"
#include "format/compression.h"
#include "format/keyed_hash.h"
#include "format/xorb.h"
#include "support/temp_dir.h"

namespace xet {
namespace {

Hash H(uint8_t b) {
  std::array<uint8_t, 32> a{};
  a[0] = b;
  a[31] = 0x5a;
  return Hash::FromArray(a);
}

// A xorb object: chunk records (odd chunks LZ4-compressed), and where each record starts.
struct FakeXorb {
  Hash hash;
  std::vector<std::vector<uint8_t>> chunks;
  std::vector<uint8_t> bytes;
  std::vector<uint64_t> offsets;  // one per chunk, then the end
};

FakeXorb MakeXorb(uint8_t id, size_t num_chunks, std::mt19937_64& rng) {
  FakeXorb x;
  x.hash = H(id);
  ChunkCodec codec;
  for (size_t i = 0; i < num_chunks; ++i) {
    std::vector<uint8_t> raw(1 + rng() % 3000);
    // Runs of a few values: compressible.
    for (size_t j = 0; j < raw.size(); ++j) raw[j] = static_cast<uint8_t>((j / 7) * id + i);
    if (i % 3 == 2) {
      for (auto& b : raw) b = static_cast<uint8_t>(rng());
    }
    std::vector<uint8_t> payload;
    CompressionScheme scheme = CompressionScheme::kNone;
    if (i % 2 == 1) {
      payload.resize(ChunkCodec::MaxCompressedSize(raw.size()));
      auto n = codec.CompressWith(CompressionScheme::kLz4, raw, payload);
      EXPECT_TRUE(n.ok());
      payload.resize(*n);
      scheme = CompressionScheme::kLz4;
    } else {
      payload = raw;
    }
    x.offsets.push_back(x.bytes.size());
    uint8_t header[kXorbChunkHeaderSize];
    EncodeXorbChunkHeader({kXorbChunkHeaderVersion, static_cast<uint32_t>(payload.size()),
                           static_cast<uint8_t>(scheme), static_cast<uint32_t>(raw.size())},
                          header);
    x.bytes.insert(x.bytes.end(), header, header + kXorbChunkHeaderSize);
    x.bytes.insert(x.bytes.end(), payload.begin(), payload.end());
    x.chunks.push_back(std::move(raw));
  }
  x.offsets.push_back(x.bytes.size());
  return x;
}

struct TermSpec {
  const FakeXorb* xorb;
  uint32_t first, end;
};

// A file made of terms, and its reconstruction: one fetch entry per xorb with the given
// ranges (each a chunk range of the xorb), chunk detail optional.
struct FakeFile {
  Hash hash;
  std::vector<uint8_t> data;
  Reconstruction recon;
};

FakeFile MakeFile(
    uint8_t id, const std::vector<TermSpec>& terms,
    const std::map<const FakeXorb*, std::vector<std::pair<uint32_t, uint32_t>>>& ranges,
    bool detail) {
  FakeFile f;
  f.hash = H(static_cast<uint8_t>(100 + id));
  for (const TermSpec& t : terms) {
    ReconTerm rt;
    rt.xorb_hash = t.xorb->hash;
    rt.chunk_start = t.first;
    rt.chunk_end = t.end;
    for (uint32_t c = t.first; c < t.end; ++c) {
      const auto& ch = t.xorb->chunks[c];
      f.data.insert(f.data.end(), ch.begin(), ch.end());
      rt.unpacked_length += ch.size();
      if (detail) rt.chunk_lengths.push_back(static_cast<uint32_t>(ch.size()));
    }
    f.recon.terms.push_back(rt);
  }
  for (const auto& [x, rs] : ranges) {
    FetchEntry e;
    e.url = "fake://" + x->hash.ToHex() + "/" + std::to_string(id);
    for (auto [a, b] : rs) {
      FetchRange fr;
      fr.chunk_start = a;
      fr.chunk_end = b;
      fr.byte_start = x->offsets[a];
      fr.byte_end = x->offsets[b] - 1;
      if (detail) fr.chunk_offsets.assign(x->offsets.begin() + a, x->offsets.begin() + b + 1);
      e.ranges.push_back(fr);
    }
    f.recon.xorbs.push_back({x->hash, {e}});
  }
  return f;
}

class FakeSource final : public RangeSource {
 public:
  void AddXorb(const FakeXorb* x) { xorbs_[x->hash.ToHex()] = x; }
  void AddFile(const FakeFile* f) { files_[f->hash] = f; }

  Result<Reconstruction> Reconstruct(const Hash& file) override {
    ++reconstructions;
    auto it = files_.find(file);
    if (it == files_.end()) return Status::NotFound("no such file");
    Reconstruction r = it->second->recon;
    if (mutate) mutate(r);
    return r;
  }

  Status StreamRange(const FetchEntry& entry, size_t range,
                     const std::function<Status(std::span<const uint8_t>)>& on_bytes) override {
    const FetchRange& r = entry.ranges.at(range);
    const std::string hex = entry.url.substr(7, 64);
    auto it = xorbs_.find(hex);
    if (it == xorbs_.end()) return Status::NotFound("no such xorb");
    const FakeXorb& x = *it->second;
    {
      MutexLock lock(mu_);
      requests_.emplace_back(hex, r.byte_start, r.byte_end);
      if (refuse_ > 0) {
        --refuse_;
        return Status::PermissionDenied("expired");
      }
    }
    if (r.byte_end >= x.bytes.size()) return Status::OutOfRange("past the xorb");
    std::vector<uint8_t> bytes(x.bytes.begin() + static_cast<ptrdiff_t>(r.byte_start),
                               x.bytes.begin() + static_cast<ptrdiff_t>(r.byte_end + 1));
    if (damage) bytes[0] ^= 0xff;  // the first record's header
    // Odd-sized pieces: records arrive split.
    for (size_t at = 0; at < bytes.size(); at += 777) {
      const size_t n = std::min<size_t>(777, bytes.size() - at);
      XET_RETURN_IF_ERROR(on_bytes(std::span<const uint8_t>(bytes).subspan(at, n)));
    }
    return Status::Ok();
  }

  std::vector<std::tuple<std::string, uint64_t, uint64_t>> requests() {
    MutexLock lock(mu_);
    return requests_;
  }
  void Refuse(int n) {
    MutexLock lock(mu_);
    refuse_ = n;
  }

  std::atomic<int> reconstructions{0};
  std::function<void(Reconstruction&)> mutate;
  std::atomic<bool> damage{false};

 private:
  std::map<std::string, const FakeXorb*> xorbs_;
  std::map<Hash, const FakeFile*> files_;
  Mutex mu_;
  std::vector<std::tuple<std::string, uint64_t, uint64_t>> requests_ GUARDED_BY(mu_);
  int refuse_ GUARDED_BY(mu_) = 0;
};

class RangeReaderTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    std::mt19937_64 rng(42);
    a_ = MakeXorb(1, 40, rng);
    b_ = MakeXorb(2, 30, rng);
    // Six terms, chunk reuse inside the file, two ranges in B's entry.
    file_ = MakeFile(
        1, {{&a_, 0, 10}, {&b_, 5, 20}, {&a_, 10, 40}, {&b_, 0, 5}, {&a_, 3, 8}, {&b_, 20, 30}},
        {{&a_, {{0, 40}}}, {&b_, {{0, 20}, {20, 30}}}}, detail());
    // A second file sharing A's chunks 10..40.
    other_ = MakeFile(2, {{&a_, 10, 40}}, {{&a_, {{10, 40}}}}, detail());
    source_ = new FakeSource;
    source_->AddXorb(&a_);
    source_->AddXorb(&b_);
    source_->AddFile(&file_);
    source_->AddFile(&other_);
  }

  bool detail() const { return GetParam(); }

  RangeReader& Reader(RangeReaderOptions o = {}) {
    o.fetch_threads = 2;
    reader_ = std::make_unique<RangeReader>(std::unique_ptr<RangeSource>(source_), o,
                                            [this] { return now_; });
    return *reader_;
  }

  // Bytes [offset, offset + n) as read, and what the file holds there.
  static std::vector<uint8_t> ReadOf(RangeReader::Stream& s, uint64_t offset, size_t n,
                                     Status* error = nullptr) {
    std::vector<uint8_t> out(n);
    auto got = s.Read(offset, out);
    if (!got.ok()) {
      if (error) *error = got.status();
      ADD_FAILURE_AT(__FILE__, __LINE__) << got.status().ToString();
      return {};
    }
    out.resize(*got);
    return out;
  }
  static std::vector<uint8_t> Expected(const FakeFile& f, uint64_t offset, size_t n) {
    if (offset >= f.data.size()) return {};
    const size_t m = std::min<size_t>(n, f.data.size() - offset);
    return std::vector<uint8_t>(f.data.begin() + static_cast<ptrdiff_t>(offset),
                                f.data.begin() + static_cast<ptrdiff_t>(offset + m));
  }

  FakeXorb a_, b_;
  FakeFile file_, other_;
  FakeSource* source_ = nullptr;  // owned by the reader
  std::chrono::steady_clock::time_point now_ =
      std::chrono::steady_clock::time_point() + std::chrono::hours(1);
  std::unique_ptr<RangeReader> reader_;
};

TEST_P(RangeReaderTest, RandomReadsMatchTheFileWithOneReconstruction) {
  RangeReader& reader = Reader();
  auto s = reader.Open(file_.hash, file_.data.size());
  std::mt19937_64 rng(7);
  const uint64_t size = file_.data.size();
  for (int i = 0; i < 300; ++i) {
    const uint64_t off = rng() % (size + 100);
    const size_t n = 1 + rng() % (i % 10 == 0 ? 60000 : 5000);
    ASSERT_EQ(ReadOf(*s, off, n), Expected(file_, off, n)) << off << "+" << n;
  }
  // Edges: the first and last byte, at and past EOF, an empty read.
  EXPECT_EQ(ReadOf(*s, 0, 1), Expected(file_, 0, 1));
  EXPECT_EQ(ReadOf(*s, size - 1, 10), Expected(file_, size - 1, 10));
  EXPECT_TRUE(ReadOf(*s, size, 10).empty());
  EXPECT_TRUE(ReadOf(*s, size + 5, 10).empty());
  EXPECT_TRUE(ReadOf(*s, 3, 0).empty());
  EXPECT_EQ(reader.reconstruction_requests(), 1u);
  EXPECT_EQ(source_->reconstructions.load(), 1);
}

TEST_P(RangeReaderTest, FileStartingInsideItsFirstTerm) {
  // offset_into_first_range: the file's byte 0 is byte 1234 of the first term.
  FakeFile shifted = MakeFile(3, {{&a_, 0, 10}, {&b_, 5, 20}, {&a_, 10, 40}},
                              {{&a_, {{0, 40}}}, {&b_, {{0, 20}}}}, detail());
  shifted.recon.offset_into_first_range = 1234;
  ASSERT_GT(shifted.recon.terms[0].unpacked_length, 1234u);
  shifted.data.erase(shifted.data.begin(), shifted.data.begin() + 1234);
  source_->AddFile(&shifted);
  RangeReader& reader = Reader();
  auto s = reader.Open(shifted.hash, shifted.data.size());
  std::mt19937_64 rng(11);
  for (int i = 0; i < 100; ++i) {
    const uint64_t off = i == 0 ? 0 : rng() % shifted.data.size();
    const size_t n = 1 + rng() % 20000;
    ASSERT_EQ(ReadOf(*s, off, n), Expected(shifted, off, n)) << off << "+" << n;
  }
}

TEST_P(RangeReaderTest, SmallReadFetchesOnlyItsChunks) {
  RangeReader& reader = Reader();
  auto s = reader.Open(file_.hash, file_.data.size());
  // Term 2 (A[10,40)) starts after terms 0 and 1; read 3 bytes inside A's chunk 12.
  uint64_t term2 = 0;
  for (uint32_t c = 0; c < 10; ++c) term2 += a_.chunks[c].size();
  for (uint32_t c = 5; c < 20; ++c) term2 += b_.chunks[c].size();
  const uint64_t off = term2 + a_.chunks[10].size() + a_.chunks[11].size() + 1;
  ASSERT_EQ(ReadOf(*s, off, 3), Expected(file_, off, 3));
  const auto reqs = source_->requests();
  ASSERT_EQ(reqs.size(), 1u);
  if (detail()) {
    EXPECT_EQ(std::get<1>(reqs[0]), a_.offsets[12]);
    EXPECT_EQ(std::get<2>(reqs[0]), a_.offsets[13] - 1);
  } else {  // the whole fetch range
    EXPECT_EQ(std::get<1>(reqs[0]), 0u);
    EXPECT_EQ(std::get<2>(reqs[0]), a_.bytes.size() - 1);
  }
  // Read again, and a read of another file sharing the chunk: chunk 12 is not fetched
  // again (the second read counts as sequential in so small a file: read-ahead fetches the
  // rest).
  ASSERT_EQ(ReadOf(*s, off, 3), Expected(file_, off, 3));
  auto s2 = reader.Open(other_.hash, other_.data.size());
  const uint64_t off2 = a_.chunks[10].size() + a_.chunks[11].size();
  ASSERT_EQ(ReadOf(*s2, off2, 10), Expected(other_, off2, 10));
  const auto later = source_->requests();
  for (size_t i = 1; i < later.size(); ++i) {
    const auto& [hex, first, last] = later[i];
    EXPECT_FALSE(hex == a_.hash.ToHex() && first <= a_.offsets[12] && a_.offsets[12] <= last)
        << "chunk 12 fetched again by request " << i;
  }
  EXPECT_EQ(reader.reconstruction_requests(), 2u);
}

TEST_P(RangeReaderTest, SequentialReadsEqualTheFile) {
  RangeReaderOptions o;
  o.memory_bytes = 64 << 10;  // less than the file: read-ahead and eviction at work
  RangeReader& reader = Reader(o);
  for (size_t step : {1000ul, 4096ul, 65536ul}) {
    auto s = reader.Open(file_.hash, file_.data.size());
    std::vector<uint8_t> all;
    for (uint64_t off = 0;; off += step) {
      auto got = ReadOf(*s, off, step);
      if (got.empty()) break;
      all.insert(all.end(), got.begin(), got.end());
    }
    EXPECT_EQ(all, file_.data) << step;
  }
  EXPECT_EQ(reader.reconstruction_requests(), 1u);
}

TEST_P(RangeReaderTest, ConcurrentReadsOnOneAndManyStreams) {
  RangeReader& reader = Reader();
  auto shared = reader.Open(file_.hash, file_.data.size());
  std::vector<std::thread> threads;
  std::atomic<int> mismatches{0};
  for (int t = 0; t < 6; ++t) {
    threads.emplace_back([&, t] {
      std::unique_ptr<RangeReader::Stream> own =
          t % 2 ? reader.Open(t % 4 == 1 ? other_.hash : file_.hash,
                              t % 4 == 1 ? other_.data.size() : file_.data.size())
                : nullptr;
      const FakeFile& f = own && t % 4 == 1 ? other_ : file_;
      RangeReader::Stream& s = own ? *own : *shared;
      std::mt19937_64 rng(t);
      for (int i = 0; i < 200; ++i) {
        const uint64_t off = t == 0 ? static_cast<uint64_t>(i) * 2000 : rng() % f.data.size();
        const size_t n = 1 + rng() % 8000;
        std::vector<uint8_t> out(n);
        auto got = s.Read(off, out);
        if (!got.ok()) {
          ++mismatches;
          continue;
        }
        out.resize(*got);
        if (out != Expected(f, off, n)) ++mismatches;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(mismatches.load(), 0);
  EXPECT_EQ(reader.reconstruction_requests(), 2u);
}

TEST_P(RangeReaderTest, RefusedUrlRefetchesThePlanOnce) {
  RangeReader& reader = Reader();
  auto s = reader.Open(file_.hash, file_.data.size());
  source_->Refuse(1);
  ASSERT_EQ(ReadOf(*s, 100, 50), Expected(file_, 100, 50));
  EXPECT_EQ(reader.reconstruction_requests(), 2u);
  source_->Refuse(2);  // refused with the fresh plan too
  std::vector<uint8_t> out(10);
  s = reader.Open(file_.hash, file_.data.size());  // a first read: no read-ahead
  auto got = s->Read(file_.data.size() - 20, out);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), Status::Code::kPermissionDenied);
  EXPECT_EQ(reader.reconstruction_requests(), 3u);
}

TEST_P(RangeReaderTest, PlansExpireAndForgetDropsThem) {
  RangeReader& reader = Reader();
  auto s = reader.Open(file_.hash, file_.data.size());
  ASSERT_EQ(ReadOf(*s, 0, 10), Expected(file_, 0, 10));
  now_ += std::chrono::minutes(49);
  ASSERT_EQ(ReadOf(*s, 10, 10), Expected(file_, 10, 10));
  EXPECT_EQ(reader.reconstruction_requests(), 1u);
  now_ += std::chrono::minutes(2);
  ASSERT_EQ(ReadOf(*s, 20, 10), Expected(file_, 20, 10));
  EXPECT_EQ(reader.reconstruction_requests(), 2u);
  reader.Forget(file_.hash);
  ASSERT_EQ(ReadOf(*s, 30, 10), Expected(file_, 30, 10));
  EXPECT_EQ(reader.reconstruction_requests(), 3u);
  // PrefetchPlan: fetched in the background, once.
  reader.PrefetchPlan(other_.hash, other_.data.size());
  reader.PrefetchPlan(other_.hash, other_.data.size());
  for (int i = 0; i < 500 && reader.reconstruction_requests() < 4; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  auto s2 = reader.Open(other_.hash, other_.data.size());
  ASSERT_EQ(ReadOf(*s2, 5, 10), Expected(other_, 5, 10));
  EXPECT_EQ(reader.reconstruction_requests(), 4u);
  // An empty file needs no plan.
  auto empty = reader.Open(H(77), 0);
  EXPECT_TRUE(ReadOf(*empty, 0, 10).empty());
  EXPECT_EQ(reader.reconstruction_requests(), 4u);
}

TEST_P(RangeReaderTest, DiskCacheServesAnotherReader) {
  testing::TempDir dir;
  RangeReaderOptions o;
  o.chunk_cache_dir = dir.path() + "/cache";
  o.cache_sequential = true;  // the second loop reads sequentially
  {
    RangeReader& reader = Reader(o);
    auto s = reader.Open(file_.hash, file_.data.size());
    std::mt19937_64 rng(3);
    for (int i = 0; i < 50; ++i) {
      const uint64_t off = rng() % file_.data.size();
      ASSERT_EQ(ReadOf(*s, off, 3000), Expected(file_, off, 3000));
    }
    for (uint64_t off = 0; off < file_.data.size(); off += 50000) {
      ASSERT_EQ(ReadOf(*s, off, 50000), Expected(file_, off, 50000));
    }
    s.reset();
    reader_.reset();
  }
  source_ = new FakeSource;
  source_->AddXorb(&a_);
  source_->AddXorb(&b_);
  source_->AddFile(&file_);
  RangeReader& again = Reader(o);
  auto s = again.Open(file_.hash, file_.data.size());
  std::mt19937_64 rng(4);
  for (int i = 0; i < 100; ++i) {
    const uint64_t off = rng() % file_.data.size();
    ASSERT_EQ(ReadOf(*s, off, 5000), Expected(file_, off, 5000));
  }
  EXPECT_EQ(again.stats().fetches, 0u);
  EXPECT_GT(again.stats().disk_chunks, 0u);
}

TEST_P(RangeReaderTest, SequentialStreamsDoNotFillTheDiskCacheByDefault) {
  testing::TempDir dir;
  RangeReaderOptions o;
  o.chunk_cache_dir = dir.path() + "/cache";
  {
    RangeReader& reader = Reader(o);
    auto s = reader.Open(file_.hash, file_.data.size());
    for (uint64_t off = 0; off < file_.data.size(); off += 50000) {
      ASSERT_EQ(ReadOf(*s, off, 50000), Expected(file_, off, 50000));
    }
    s.reset();
    reader_.reset();
  }
  // Only the reads before the stream counted as sequential were stored: a fresh reader
  // fetches the rest.
  source_ = new FakeSource;
  source_->AddXorb(&a_);
  source_->AddXorb(&b_);
  source_->AddFile(&file_);
  RangeReader& again = Reader(o);
  auto s = again.Open(file_.hash, file_.data.size());
  ASSERT_EQ(ReadOf(*s, 0, file_.data.size()), Expected(file_, 0, file_.data.size()));
  EXPECT_GT(again.stats().fetches, 0u);
}

TEST_P(RangeReaderTest, ReadsTakeOnlyTheirChunksFromALargeCacheEntry) {
  // An entry for all of A's chunks, as a whole-file download stores it.
  testing::TempDir dir;
  {
    auto cache = ChunkCache::Open(dir.path() + "/cache", 1 << 30);
    ASSERT_TRUE(cache.ok());
    std::vector<ChunkInfo> infos;
    for (const auto& c : a_.chunks) infos.push_back({ChunkHash(c), c.size()});
    ASSERT_TRUE((*cache)->Put(a_.hash, 0, 40, a_.bytes, infos).ok());
  }
  RangeReaderOptions o;
  o.chunk_cache_dir = dir.path() + "/cache";
  RangeReader& reader = Reader(o);
  auto s = reader.Open(other_.hash, other_.data.size());  // A[10,40)
  const uint64_t off = other_.data.size() / 2;
  ASSERT_EQ(ReadOf(*s, off, 3), Expected(other_, off, 3));
  EXPECT_EQ(reader.stats().fetches, 0u);
  // With detail only the chunk read is decoded; without, its whole range.
  if (detail()) {
    EXPECT_EQ(reader.stats().disk_chunks, 1u);
  } else {
    EXPECT_EQ(reader.stats().disk_chunks, 30u);
  }
}

TEST_P(RangeReaderTest, MalformedAnswersAndDataAreCorruption) {
  RangeReader& reader = Reader();
  source_->mutate = [](Reconstruction& r) { r.terms[1].unpacked_length += 1; };
  auto s = reader.Open(file_.hash, file_.data.size());
  std::vector<uint8_t> out(100);
  auto got = s->Read(0, out);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), Status::Code::kCorruption);
  if (detail()) {
    // Chunk lengths that add up but do not match the chunks.
    source_->mutate = [](Reconstruction& r) {
      auto& l = r.terms[0].chunk_lengths;
      l[0] += 1;
      l[1] -= 1;
    };
    reader.Forget(file_.hash);
    got = s->Read(0, out);
    ASSERT_FALSE(got.ok());
    EXPECT_EQ(got.status().code(), Status::Code::kCorruption) << got.status().ToString();
  }
  source_->mutate = nullptr;
  source_->damage = true;
  reader.Forget(file_.hash);
  got = s->Read(file_.data.size() / 2, out);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), Status::Code::kCorruption) << got.status().ToString();
  source_->damage = false;
  got = s->Read(file_.data.size() / 2, out);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(out, Expected(file_, file_.data.size() / 2, 100));
}

INSTANTIATE_TEST_SUITE_P(Detail, RangeReaderTest, ::testing::Bool(),
                         [](const auto& p) { return p.param ? "Detail" : "NoDetail"; });

}  // namespace
}  // namespace xet
