#include "client/cache/chunk_cache.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "support/temp_dir.h"

namespace xet {
namespace {

namespace fs = std::filesystem;

Hash H(uint8_t b) {
  std::array<uint8_t, 32> a{};
  a[0] = b;
  return Hash::FromArray(a);
}

std::vector<uint8_t> Bytes(size_t n, uint8_t seed) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(seed + i * 31);
  return v;
}

// Every entry file of the cache (not the tmp folder).
std::vector<fs::path> EntryFiles(const std::string& dir) {
  std::vector<fs::path> out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (e.is_regular_file() && e.path().parent_path().filename() != "tmp") out.push_back(e.path());
  }
  return out;
}

TEST(ChunkCache, PutGetRoundTripAndReopen) {
  testing::TempDir dir;
  const auto rec = Bytes(1000, 1);
  const std::vector<ChunkInfo> chunks{{H(10), 600}, {H(11), 700}};
  {
    auto c = ChunkCache::Open(dir.path(), 1 << 20);
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    EXPECT_FALSE((*c)->Get(H(1), 0, 2).has_value());
    ASSERT_TRUE((*c)->Put(H(1), 0, 2, rec, chunks).ok());
    auto got = (*c)->Get(H(1), 0, 2);
    ASSERT_TRUE(got.has_value());
    EXPECT_EQ(got->records, rec);
    EXPECT_EQ(got->chunks, chunks);
    EXPECT_FALSE((*c)->Get(H(1), 0, 3).has_value());  // a different range is a miss
    EXPECT_FALSE((*c)->Get(H(2), 0, 2).has_value());
    EXPECT_EQ((*c)->Put(H(1), 0, 3, rec, chunks).code(), Status::Code::kInvalidArgument);
  }
  auto c = ChunkCache::Open(dir.path(), 1 << 20);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ((*c)->num_entries(), 1u);
  auto got = (*c)->Get(H(1), 0, 2);
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->records, rec);
}

TEST(ChunkCache, EvictsLeastRecentlyUsedBeyondTheBound) {
  testing::TempDir dir;
  const auto rec = Bytes(4000, 2);
  const std::vector<ChunkInfo> one{{H(10), 4000}};
  // Each entry is 24 + 40 + 4000 bytes: three fit in 13,000, four do not.
  auto c = ChunkCache::Open(dir.path(), 13000);
  ASSERT_TRUE(c.ok());
  ASSERT_TRUE((*c)->Put(H(1), 0, 1, rec, one).ok());
  ASSERT_TRUE((*c)->Put(H(2), 0, 1, rec, one).ok());
  ASSERT_TRUE((*c)->Put(H(3), 0, 1, rec, one).ok());
  ASSERT_TRUE((*c)->Get(H(1), 0, 1).has_value());  // 1 is now newer than 2
  ASSERT_TRUE((*c)->Put(H(4), 0, 1, rec, one).ok());
  EXPECT_EQ((*c)->num_entries(), 3u);
  EXPECT_LE((*c)->size_bytes(), 13000u);
  EXPECT_FALSE((*c)->Get(H(2), 0, 1).has_value());
  EXPECT_TRUE((*c)->Get(H(1), 0, 1).has_value());
  EXPECT_TRUE((*c)->Get(H(3), 0, 1).has_value());
  EXPECT_TRUE((*c)->Get(H(4), 0, 1).has_value());
  EXPECT_EQ(EntryFiles(dir.path()).size(), 3u);  // the evicted file is gone from disk
  // An entry larger than the whole bound is not stored.
  ASSERT_TRUE((*c)->Put(H(5), 0, 1, Bytes(20000, 3), one).ok());
  EXPECT_FALSE((*c)->Get(H(5), 0, 1).has_value());
  // Reopening with a smaller bound evicts down to it.
  c->reset();
  auto small = ChunkCache::Open(dir.path(), 5000);
  ASSERT_TRUE(small.ok());
  EXPECT_EQ((*small)->num_entries(), 1u);
}

TEST(ChunkCache, FindCoveringNamesAnEntryHoldingTheChunk) {
  testing::TempDir dir;
  auto c = ChunkCache::Open(dir.path(), 1 << 20);
  ASSERT_TRUE(c.ok());
  const auto rec = Bytes(100, 4);
  const std::vector<ChunkInfo> two{{H(10), 50}, {H(11), 50}};
  const std::vector<ChunkInfo> one{{H(10), 100}};
  ASSERT_TRUE((*c)->Put(H(1), 4, 6, rec, two).ok());
  ASSERT_TRUE((*c)->Put(H(1), 10, 11, rec, one).ok());
  ASSERT_TRUE((*c)->Put(H(2), 0, 2, rec, two).ok());
  using Range = std::optional<std::pair<uint32_t, uint32_t>>;
  EXPECT_EQ((*c)->FindCovering(H(1), 4), Range(std::make_pair(4u, 6u)));
  EXPECT_EQ((*c)->FindCovering(H(1), 5), Range(std::make_pair(4u, 6u)));
  EXPECT_EQ((*c)->FindCovering(H(1), 6), std::nullopt);
  EXPECT_EQ((*c)->FindCovering(H(1), 3), std::nullopt);
  EXPECT_EQ((*c)->FindCovering(H(1), 10), Range(std::make_pair(10u, 11u)));
  EXPECT_EQ((*c)->FindCovering(H(1), 0), std::nullopt);  // H(2)'s entry is another xorb's
  EXPECT_EQ((*c)->FindCovering(H(2), 1), Range(std::make_pair(0u, 2u)));
  EXPECT_EQ((*c)->FindCovering(H(3), 1), std::nullopt);
}

TEST(ChunkCache, EvictsInAccessOrderAmongManyEntries) {
  testing::TempDir dir;
  const auto rec = Bytes(100, 5);
  const std::vector<ChunkInfo> one{{H(10), 100}};
  const uint64_t entry = 24 + 40 + 100;
  auto c = ChunkCache::Open(dir.path(), 500 * entry);
  ASSERT_TRUE(c.ok());
  for (uint32_t i = 0; i < 500; ++i) ASSERT_TRUE((*c)->Put(H(1), i, i + 1, rec, one).ok());
  for (uint32_t i = 0; i < 500; i += 2) ASSERT_NE((*c)->OpenEntry(H(1), i, i + 1), nullptr);
  // 250 more entries push out the 250 least recently used: the odd ones.
  for (uint32_t i = 500; i < 750; ++i) ASSERT_TRUE((*c)->Put(H(1), i, i + 1, rec, one).ok());
  EXPECT_EQ((*c)->num_entries(), 500u);
  for (uint32_t i = 0; i < 500; ++i) {
    EXPECT_EQ((*c)->FindCovering(H(1), i).has_value(), i % 2 == 0) << i;
  }
}

TEST(ChunkCache, DamagedEntriesAreDropped) {
  testing::TempDir dir;
  const auto rec = Bytes(1000, 4);
  const std::vector<ChunkInfo> one{{H(10), 1000}};
  auto c = ChunkCache::Open(dir.path(), 1 << 20);
  ASSERT_TRUE(c.ok());
  ASSERT_TRUE((*c)->Put(H(1), 0, 1, rec, one).ok());
  ASSERT_TRUE((*c)->Put(H(2), 0, 1, rec, one).ok());
  auto files = EntryFiles(dir.path());
  ASSERT_EQ(files.size(), 2u);
  // Truncate one and break the magic of the other.
  fs::resize_file(files[0], 100);
  {
    std::fstream f(files[1], std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(0);
    f.write("JUNK", 4);
  }
  EXPECT_FALSE((*c)->Get(H(1), 0, 1).has_value());
  EXPECT_FALSE((*c)->Get(H(2), 0, 1).has_value());
  EXPECT_EQ((*c)->num_entries(), 0u);
  EXPECT_TRUE(EntryFiles(dir.path()).empty());
}

TEST(ChunkCache, OpenCleansTemporariesAndForeignFiles) {
  testing::TempDir dir;
  fs::create_directories(dir.path() + "/tmp");
  fs::create_directories(dir.path() + "/ab");
  { std::ofstream(dir.path() + "/tmp/123-1") << "half written"; }
  { std::ofstream(dir.path() + "/ab/not-an-entry") << "x"; }
  auto c = ChunkCache::Open(dir.path(), 1 << 20);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ((*c)->num_entries(), 0u);
  EXPECT_FALSE(fs::exists(dir.path() + "/tmp/123-1"));
  EXPECT_FALSE(fs::exists(dir.path() + "/ab/not-an-entry"));
}

// GetInto reuses the caller's Entry: after a larger entry, a smaller one reads back exactly.
TEST(ChunkCache, GetIntoReusesTheCallersEntry) {
  testing::TempDir dir;
  auto c = ChunkCache::Open(dir.path(), 1 << 20);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  const auto big = Bytes(5000, 3), small = Bytes(700, 9);
  const std::vector<ChunkInfo> big_chunks{{H(20), 2000}, {H(21), 2000}, {H(22), 1000}};
  const std::vector<ChunkInfo> small_chunks{{H(23), 700}};
  ASSERT_TRUE((*c)->Put(H(5), 0, 3, big, big_chunks).ok());
  ASSERT_TRUE((*c)->Put(H(6), 4, 5, small, small_chunks).ok());
  ChunkCache::Entry e;
  ASSERT_TRUE((*c)->GetInto(H(5), 0, 3, e));
  EXPECT_EQ(e.records, big);
  EXPECT_EQ(e.chunks, big_chunks);
  ASSERT_TRUE((*c)->GetInto(H(6), 4, 5, e));
  EXPECT_EQ(e.records, small);
  EXPECT_EQ(e.chunks, small_chunks);
  EXPECT_FALSE((*c)->GetInto(H(6), 4, 6, e));
}

// An entry written in pieces (StartPut/Append/Commit) reads back, in pieces, as written;
// an uncommitted or short one leaves nothing behind.
TEST(ChunkCache, StreamedPutAndReadRoundTrip) {
  testing::TempDir dir;
  auto c = ChunkCache::Open(dir.path(), 1 << 20);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  const auto rec = Bytes(10'000, 4);
  const std::vector<ChunkInfo> chunks{{H(30), 6000}, {H(31), 4000}};
  {
    auto w = (*c)->StartPut(H(7), 2, 4, rec.size());
    ASSERT_TRUE(w.ok()) << w.status().ToString();
    for (size_t at = 0; at < rec.size(); at += 3000) {
      const size_t n = std::min<size_t>(3000, rec.size() - at);
      ASSERT_TRUE((*w)->Append(std::span<const uint8_t>(rec).subspan(at, n)).ok());
    }
    ASSERT_TRUE((*w)->Commit(chunks).ok());
  }
  auto reader = (*c)->OpenEntry(H(7), 2, 4);
  ASSERT_NE(reader, nullptr);
  EXPECT_EQ(reader->chunks(), chunks);
  EXPECT_EQ(reader->records_bytes(), rec.size());
  std::vector<uint8_t> buffer(4096), got;
  size_t pieces = 0;
  ASSERT_TRUE(reader
                  ->ReadRecords(buffer,
                                [&](std::span<const uint8_t> b) {
                                  got.insert(got.end(), b.begin(), b.end());
                                  ++pieces;
                                  return Status::Ok();
                                })
                  .ok());
  EXPECT_EQ(got, rec);
  EXPECT_EQ(pieces, 3u);  // 10,000 bytes through 4,096
  // The whole-entry Get agrees.
  auto whole = (*c)->Get(H(7), 2, 4);
  ASSERT_TRUE(whole.has_value());
  EXPECT_EQ(whole->records, rec);

  {
    auto abandoned = (*c)->StartPut(H(8), 0, 2, rec.size());
    ASSERT_TRUE(abandoned.ok());
    ASSERT_TRUE((*abandoned)->Append(rec).ok());
  }  // never committed
  {
    auto short_one = (*c)->StartPut(H(9), 0, 2, rec.size());
    ASSERT_TRUE(short_one.ok());
    ASSERT_TRUE((*short_one)->Append(std::span<const uint8_t>(rec).first(100)).ok());
    EXPECT_EQ((*short_one)->Commit(chunks).code(), Status::Code::kInvalidArgument);
    EXPECT_EQ((*short_one)->Append(rec).code(), Status::Code::kInvalidArgument);  // too many
  }
  EXPECT_EQ((*c)->OpenEntry(H(8), 0, 2), nullptr);
  EXPECT_EQ((*c)->OpenEntry(H(9), 0, 2), nullptr);
  EXPECT_EQ((*c)->num_entries(), 1u);
  EXPECT_EQ(EntryFiles(dir.path()).size(), 1u);
  size_t temporaries = 0;
  for (const auto& e : fs::directory_iterator(dir.path() + "/tmp"))
    temporaries += e.is_regular_file();
  EXPECT_EQ(temporaries, 0u);
}

}  // namespace
}  // namespace xet
