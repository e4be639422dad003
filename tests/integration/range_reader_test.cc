// RangeReader against a real `xetstore serve`: random and sequential reads compared with
// the file's bytes, one reconstruction request for many reads, concurrent streams, files
// of many terms and ranges, the on-disk chunk cache, and chunk-exact fetches (the server
// sends chunk detail).
#include "client/download/range_reader.h"

#include <gtest/gtest.h>

#include <atomic>
#include <random>
#include <thread>

#include "integration/cas_client_fixture.h"
#include "support/temp_dir.h"
#include "support/test_support.h"
#include "support/xet_fixtures.h"

namespace xet {
namespace {

using testing::UploadArtifacts;

class RangeReaderServerTest : public testing::CasClientFixture {
 protected:
  void SetUp() override { StartServer("range-reader"); }

  // Whether the server answers with chunk detail.
  bool ServerSendsDetail(const Hash& file) {
    auto r = cas_->GetReconstruction(file, std::nullopt, true);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() && !r->terms.empty() && !r->terms[0].chunk_lengths.empty();
  }

  static std::vector<uint8_t> Read(RangeReader::Stream& s, uint64_t offset, size_t n) {
    std::vector<uint8_t> out(n);
    auto got = s.Read(offset, out);
    EXPECT_TRUE(got.ok()) << got.status().ToString();
    out.resize(got.ok() ? *got : 0);
    return out;
  }
  static std::vector<uint8_t> Slice(const std::vector<uint8_t>& data, uint64_t offset, size_t n) {
    if (offset >= data.size()) return {};
    const auto first = data.begin() + static_cast<ptrdiff_t>(offset);
    return std::vector<uint8_t>(first,
                                first + static_cast<ptrdiff_t>(std::min(n, data.size() - offset)));
  }
};

TEST_F(RangeReaderServerTest, RandomAndSequentialReadsWithOneReconstruction) {
  const auto data = testing::TextLikeBytes(6'000'000, 11);
  const UploadArtifacts a = testing::PrepareUpload(data, CompressionPolicy::kPredict, 20);
  ASSERT_GT(a.xorbs.size(), 2u);
  UploadAll(a);
  RangeReader reader(*cas_, RangeReaderOptions{});
  reader.PrefetchPlan(a.file_hash, a.size);
  auto s = reader.Open(a.file_hash, a.size);
  std::mt19937_64 rng(5);
  for (int i = 0; i < 200; ++i) {
    const uint64_t off = rng() % a.size;
    const size_t n = i % 4 == 0 ? 4096 : 1 + rng() % 300'000;
    ASSERT_EQ(Read(*s, off, n), Slice(data, off, n)) << off << "+" << n;
  }
  EXPECT_EQ(Read(*s, a.size - 1, 4096), Slice(data, a.size - 1, 1));
  EXPECT_TRUE(Read(*s, a.size, 4096).empty());
  // Sequential, in reads of 128 KiB and 1 MiB, on fresh streams.
  for (size_t step : {128u << 10, 1u << 20}) {
    auto seq = reader.Open(a.file_hash, a.size);
    std::vector<uint8_t> all;
    for (uint64_t off = 0; off < a.size; off += step) {
      auto got = Read(*seq, off, step);
      ASSERT_FALSE(got.empty());
      all.insert(all.end(), got.begin(), got.end());
    }
    EXPECT_TRUE(all == data) << step;
  }
  EXPECT_EQ(reader.reconstruction_requests(), 1u);
}

TEST_F(RangeReaderServerTest, ConcurrentStreamsOverManyTermsAndRanges) {
  std::vector<uint8_t> base_data, sparse_data;
  const UploadArtifacts base = testing::PrepareInterleavedUpload(300, 9000, 3, &base_data);
  UploadAll(base);
  const UploadArtifacts sparse = testing::PrepareSparseFile(base, base_data, 3, &sparse_data);
  UploadAll(sparse);
  RangeReaderOptions o;
  o.memory_bytes = 1 << 20;  // less than the files: eviction while reading
  RangeReader reader(*cas_, o);
  auto shared = reader.Open(base.file_hash, base.size);
  std::atomic<int> bad{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 6; ++t) {
    threads.emplace_back([&, t] {
      const bool use_sparse = t % 2 == 1;
      const auto& data = use_sparse ? sparse_data : base_data;
      const UploadArtifacts& f = use_sparse ? sparse : base;
      auto own = t < 4 ? reader.Open(f.file_hash, f.size) : nullptr;
      RangeReader::Stream& s = own ? *own : *shared;
      const auto& sdata = own ? data : base_data;
      std::mt19937_64 rng(t);
      for (int i = 0; i < 60; ++i) {
        const bool sequential = t < 2;
        const uint64_t off = sequential ? static_cast<uint64_t>(i) * 65536 : rng() % sdata.size();
        const size_t n = sequential ? 65536 : 1 + rng() % 40000;
        std::vector<uint8_t> out(n);
        auto got = s.Read(off, out);
        if (!got.ok()) {
          ADD_FAILURE() << got.status().ToString();
          ++bad;
          continue;
        }
        out.resize(*got);
        if (out != Slice(sdata, off, n)) ++bad;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(bad.load(), 0);
  EXPECT_EQ(reader.reconstruction_requests(), 2u);
}

TEST_F(RangeReaderServerTest, ChunkCacheServesAFreshReader) {
  const auto data = testing::RandomBytes(3'000'000, 21);
  const UploadArtifacts a = testing::PrepareUpload(data, CompressionPolicy::kPredict, 16);
  UploadAll(a);
  testing::TempDir dir;
  RangeReaderOptions o;
  o.chunk_cache_dir = dir.path() + "/chunks";
  o.cache_sequential = true;  // the first reader reads sequentially
  {
    RangeReader first(*cas_, o);
    auto s = first.Open(a.file_hash, a.size);
    for (uint64_t off = 0; off < a.size; off += 1 << 20) {
      ASSERT_EQ(Read(*s, off, 1 << 20), Slice(data, off, 1 << 20));
    }
  }
  RangeReader second(*cas_, o);
  ASSERT_TRUE(second.status().ok());
  auto s = second.Open(a.file_hash, a.size);
  std::mt19937_64 rng(9);
  for (int i = 0; i < 100; ++i) {
    const uint64_t off = rng() % a.size;
    ASSERT_EQ(Read(*s, off, 4096), Slice(data, off, 4096));
  }
  EXPECT_EQ(second.stats().fetches, 0u);
  EXPECT_GT(second.stats().disk_chunks, 0u);
}

TEST_F(RangeReaderServerTest, SmallReadsFetchOnlyTheirChunksWithDetail) {
  const auto data = testing::RandomBytes(4'000'000, 31);
  const UploadArtifacts a = testing::PrepareUpload(data, CompressionPolicy::kPredict);
  UploadAll(a);
  RangeReader reader(*cas_, RangeReaderOptions{});
  auto s = reader.Open(a.file_hash, a.size);
  std::mt19937_64 rng(13);
  for (int i = 0; i < 20; ++i) {
    const uint64_t off = rng() % a.size;
    ASSERT_EQ(Read(*s, off, 4096), Slice(data, off, 4096));
  }
  ASSERT_TRUE(ServerSendsDetail(a.file_hash));
  // 20 reads of at most two chunks each (chunks are at most 128 KiB, incompressible here).
  EXPECT_LE(reader.stats().fetched_bytes, 20u * 2 * (128u << 10) + 20u * 2 * 16);
  EXPECT_LE(reader.stats().fetches, 20u);
}

// A client of a server without chunk detail: the answers as such a server sends them.
class NoDetailSource final : public RangeSource {
 public:
  explicit NoDetailSource(CasClient& cas) : cas_(cas) {}
  Result<Reconstruction> Reconstruct(const Hash& file) override {
    return cas_.GetReconstruction(file, std::nullopt, /*chunk_detail=*/false);
  }
  Status StreamRange(const FetchEntry& entry, size_t range,
                     const std::function<Status(std::span<const uint8_t>)>& on_bytes) override {
    return cas_.StreamRange(entry, range, on_bytes);
  }

 private:
  CasClient& cas_;
};

TEST_F(RangeReaderServerTest, WithoutChunkDetailWholeRangesServeTheReads) {
  std::vector<uint8_t> base_data, sparse_data;
  const UploadArtifacts base = testing::PrepareInterleavedUpload(200, 7000, 8, &base_data);
  UploadAll(base);
  const UploadArtifacts sparse = testing::PrepareSparseFile(base, base_data, 4, &sparse_data);
  UploadAll(sparse);
  RangeReader reader(std::make_unique<NoDetailSource>(*cas_), RangeReaderOptions{});
  for (const auto& [f, data] : {std::pair{&base, &base_data}, std::pair{&sparse, &sparse_data}}) {
    auto s = reader.Open(f->file_hash, f->size);
    std::mt19937_64 rng(17);
    for (int i = 0; i < 80; ++i) {
      const uint64_t off = rng() % f->size;
      const size_t n = 1 + rng() % 30000;
      ASSERT_EQ(Read(*s, off, n), Slice(*data, off, n)) << off << "+" << n;
    }
    auto seq = reader.Open(f->file_hash, f->size);
    std::vector<uint8_t> all;
    for (uint64_t off = 0; off < f->size; off += 100'000) {
      auto got = Read(*seq, off, 100'000);
      all.insert(all.end(), got.begin(), got.end());
    }
    EXPECT_TRUE(all == *data);
  }
  EXPECT_EQ(reader.reconstruction_requests(), 2u);
}

TEST_F(RangeReaderServerTest, UnknownFileIsNotFound) {
  RangeReader reader(*cas_, RangeReaderOptions{});
  std::array<uint8_t, 32> raw{};
  raw[0] = 7;
  auto s = reader.Open(Hash::FromArray(raw), 1000);
  std::vector<uint8_t> out(10);
  auto got = s->Read(0, out);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), Status::Code::kNotFound) << got.status().ToString();
}

}  // namespace
}  // namespace xet
