// GET /v2/file-chunk-hashes: window expansion, merging and clamping of dirty ranges, the
// gap subtrees (null when empty; composing them with subtrees of the windows' chunks gives
// the file's hash, as a xet-core client does), gap verification hashes, errors, the JSON.
#include "server/cas/file_chunk_hashes.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "format/chunker.h"
#include "format/keyed_hash.h"
#include "format/merkle.h"

namespace xet {
namespace {

// Sizes as xet-core's chunk_window_builder.rs tests build them: 2 * min chunk is the
// smallest stable size; the max chunk size is not stable.
constexpr uint64_t kStable = 2 * kMinChunkSize;  // 16384
constexpr uint64_t kUnstable = kMaxChunkSize;    // 131072

Hash RandomHash(std::mt19937_64& rng) {
  std::array<uint8_t, 32> raw{};
  for (size_t i = 0; i < 4; ++i) {
    const uint64_t w = rng();
    std::memcpy(raw.data() + 8 * i, &w, 8);
  }
  return Hash::FromArray(raw);
}

// Xorbs and files over them, with the per-chunk view kept for independent checks.
class Fixture {
 public:
  explicit Fixture(uint64_t seed) : rng_(seed) {}

  // A xorb with chunks of these raw sizes (serialized sizes are irrelevant here).
  Hash AddXorb(const std::vector<uint64_t>& sizes) {
    XorbRecord x;
    x.hash = RandomHash(rng_);
    uint32_t u = 0;
    for (uint64_t s : sizes) {
      u += static_cast<uint32_t>(s);
      x.chunks.push_back({RandomHash(rng_), u / 2, u});
    }
    xorbs_[x.hash] = x;
    return x.hash;
  }

  FileTerm Term(const Hash& xorb, uint32_t start, uint32_t end) const {
    const auto& rows = xorbs_.at(xorb).chunks;
    const uint32_t base = start == 0 ? 0 : rows[start - 1].uncompressed_end;
    return {xorb, start, end, rows[end - 1].uncompressed_end - base};
  }

  FileRecord File(const std::vector<FileTerm>& terms) {
    FileRecord f;
    f.terms = terms;
    for (const FileTerm& t : terms) f.size += t.unpacked_bytes;
    f.file_hash = FileHash(Chunks(f));
    return f;
  }

  // A single-xorb, single-term file of chunks with these sizes.
  FileRecord SimpleFile(const std::vector<uint64_t>& sizes) {
    const Hash x = AddXorb(sizes);
    return File({Term(x, 0, static_cast<uint32_t>(sizes.size()))});
  }

  std::vector<ChunkInfo> Chunks(const FileRecord& f) const {
    std::vector<ChunkInfo> out;
    for (const FileTerm& t : f.terms) {
      const auto& rows = xorbs_.at(t.xorb_hash).chunks;
      for (uint32_t i = t.chunk_start; i < t.chunk_end; ++i) {
        const uint32_t prev = i == 0 ? 0 : rows[i - 1].uncompressed_end;
        out.push_back({rows[i].hash, rows[i].uncompressed_end - prev});
      }
    }
    return out;
  }

  std::vector<Hash> TermChunkHashes(const FileTerm& t) const {
    std::vector<Hash> out;
    const auto& rows = xorbs_.at(t.xorb_hash).chunks;
    for (uint32_t i = t.chunk_start; i < t.chunk_end; ++i) out.push_back(rows[i].hash);
    return out;
  }

  XorbLookup Lookup() {
    return [this](const Hash& h) -> const XorbRecord* {
      ++lookups;
      const auto it = xorbs_.find(h);
      return it == xorbs_.end() ? nullptr : &it->second;
    };
  }

  std::map<Hash, XorbRecord>& xorbs() { return xorbs_; }
  std::mt19937_64& rng() { return rng_; }
  int lookups = 0;

 private:
  std::mt19937_64 rng_;
  std::map<Hash, XorbRecord> xorbs_;
};

// Exclusive-end dirty range, as xet-core's FileRange, to the header's inclusive form.
ByteRange Dirty(uint64_t start, uint64_t end) { return {start, end - 1}; }

Result<FileChunkHashes> Compute(Fixture& fx, const FileRecord& f,
                                const std::vector<ByteRange>& dirty) {
  return ComputeFileChunkHashes(f, fx.Lookup(), dirty);
}

std::vector<ChunkWindow> Windows(const FileChunkHashes& a) { return a.windows; }

// Composes the file's root the way xet-core's client does (range_upload.rs): merge
// [gap0, window0, gap1, ..., gapN], each window's subtree built from its chunks with
// at_start when it is the first and gap0 is null, at_end when it is the last and the
// trailing gap is null. Here the windows' chunks are the original ones, so the composed
// root must equal the original file's.
std::optional<Hash> ComposeRoot(const FileChunkHashes& a, const std::vector<ChunkInfo>& chunks) {
  std::vector<MerkleHashSubtree> seq;
  const bool first_at_start = !a.hash_ranges.front().has_value();
  const bool last_at_end = !a.hash_ranges.back().has_value();
  size_t ci = 0;
  uint64_t offset = 0;
  for (size_t w = 0; w < a.windows.size(); ++w) {
    if (a.hash_ranges[w]) seq.push_back(*a.hash_ranges[w]);
    std::vector<ChunkInfo> win;
    while (ci < chunks.size() && offset < a.windows[w].start) offset += chunks[ci++].size;
    while (ci < chunks.size() && offset < a.windows[w].end) {
      win.push_back(chunks[ci]);
      offset += chunks[ci++].size;
    }
    seq.push_back(MerkleHashSubtree::FromChunks(w == 0 && first_at_start, win,
                                                w + 1 == a.windows.size() && last_at_end));
  }
  if (a.hash_ranges.back()) seq.push_back(*a.hash_ranges.back());
  auto merged = MerkleHashSubtree::Merge(seq);
  if (!merged.ok()) return std::nullopt;
  return merged->Root();
}

// Structural checks every answer must pass, plus the composed-root property.
void CheckInvariants(const FileChunkHashes& a, const FileRecord& f, const Fixture& fx,
                     const std::vector<ByteRange>& dirty) {
  const auto chunks = fx.Chunks(f);
  ASSERT_EQ(a.total_chunks, chunks.size());
  ASSERT_EQ(a.file_size, f.size);
  ASSERT_FALSE(a.windows.empty());
  ASSERT_EQ(a.hash_ranges.size(), a.windows.size() + 1);
  std::vector<uint64_t> bounds{0};
  for (const ChunkInfo& c : chunks) bounds.push_back(bounds.back() + c.size);
  for (size_t w = 0; w < a.windows.size(); ++w) {
    const ChunkWindow& win = a.windows[w];
    EXPECT_LT(win.start, win.end);
    EXPECT_TRUE(std::binary_search(bounds.begin(), bounds.end(), win.start)) << win.start;
    EXPECT_TRUE(std::binary_search(bounds.begin(), bounds.end(), win.end)) << win.end;
    if (w > 0) {
      EXPECT_LE(a.windows[w - 1].end, win.start);
    }
  }
  // Every dirty byte inside the file lies in a window.
  for (const ByteRange& r : dirty) {
    if (r.first >= f.size) continue;
    const uint64_t last = std::min(r.last, f.size - 1);
    const bool covered = std::any_of(a.windows.begin(), a.windows.end(), [&](const ChunkWindow& w) {
      return w.start <= r.first && last < w.end;
    });
    EXPECT_TRUE(covered) << r.first << "-" << r.last;
  }
  // Null exactly when the gap is empty; a gap starts the file only when it is the first.
  for (size_t g = 0; g < a.hash_ranges.size(); ++g) {
    const uint64_t gap_start = g == 0 ? 0 : a.windows[g - 1].end;
    const uint64_t gap_end = g == a.windows.size() ? f.size : a.windows[g].start;
    EXPECT_EQ(a.hash_ranges[g].has_value(), gap_start < gap_end) << "gap " << g;
    if (a.hash_ranges[g]) {
      EXPECT_EQ(a.hash_ranges[g]->at_start(), g == 0);
      EXPECT_EQ(a.hash_ranges[g]->at_end(), g == a.windows.size());
    }
  }
  // Gap verification, computed independently: one per term overlapping no window.
  std::vector<Hash> expected;
  uint64_t t0 = 0;
  for (const FileTerm& t : f.terms) {
    const uint64_t t1 = t0 + t.unpacked_bytes;
    const bool overlaps =
        std::any_of(a.windows.begin(), a.windows.end(),
                    [&](const ChunkWindow& w) { return w.start < t1 && t0 < w.end; });
    if (!overlaps) expected.push_back(VerificationHash(fx.TermChunkHashes(t)));
    t0 = t1;
  }
  EXPECT_EQ(a.gap_verification, expected);
  // Gap pieces, computed independently: per gap, per term, the term's chunks in that gap.
  std::vector<Hash> pieces;
  for (size_t g = 0; g <= a.windows.size(); ++g) {
    const uint64_t gap_start = g == 0 ? 0 : a.windows[g - 1].end;
    const uint64_t gap_end = g == a.windows.size() ? f.size : a.windows[g].start;
    uint64_t pos = 0;
    size_t c = 0;
    for (const FileTerm& t : f.terms) {
      std::vector<Hash> in_gap;
      for (uint32_t i = t.chunk_start; i < t.chunk_end; ++i, ++c) {
        if (pos >= gap_start && pos + chunks[c].size <= gap_end) in_gap.push_back(chunks[c].hash);
        pos += chunks[c].size;
      }
      if (!in_gap.empty()) pieces.push_back(VerificationHash(in_gap));
    }
  }
  EXPECT_EQ(a.gap_piece_verification, pieces);
  // Window tails, computed independently: the window's chunks after the last one that
  // overlaps a dirty range.
  ASSERT_EQ(a.window_tails.size(), a.windows.size());
  for (size_t w = 0; w < a.windows.size(); ++w) {
    std::vector<ChunkInfo> tail;
    uint64_t pos = 0;
    for (const ChunkInfo& c : chunks) {
      const uint64_t end = pos + c.size;
      if (pos >= a.windows[w].start && end <= a.windows[w].end) {
        const bool dirty_chunk = std::any_of(dirty.begin(), dirty.end(), [&](const ByteRange& r) {
          return r.first < end && pos <= r.last;
        });
        if (dirty_chunk) {
          tail.clear();
        } else {
          tail.push_back(c);
        }
      }
      pos = end;
    }
    EXPECT_EQ(a.window_tails[w], tail) << "window " << w;
  }
  // The composed root and file hash equal the original file's.
  const auto root = ComposeRoot(a, chunks);
  ASSERT_TRUE(root.has_value());
  EXPECT_EQ(*root, MerkleRoot(chunks));
  EXPECT_EQ(KeyedBlake3(keys::kFileHashKey, root->data(), Hash::kSize), f.file_hash);
}

// ---- ported from xet-core chunk_window_builder.rs tests (same inputs, same expectations;
// FileRange [start, end) written here as Dirty(start, end)) ----

TEST(FileChunkHashes, XetCoreExtendsDirtyWindowToNextStableBoundary) {
  Fixture fx(1);
  const auto f = fx.SimpleFile(std::vector<uint64_t>(6, kStable));
  const std::vector<ByteRange> dirty = {Dirty(1, kStable + 1)};
  const auto a = Compute(fx, f, dirty);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(Windows(*a), (std::vector<ChunkWindow>{{0, 4 * kStable}}));
  CheckInvariants(*a, f, fx, dirty);
}

TEST(FileChunkHashes, XetCoreCoalescesRangesAfterStableExtension) {
  Fixture fx(2);
  const auto f = fx.SimpleFile(std::vector<uint64_t>(8, kStable));
  const std::vector<ByteRange> dirty = {Dirty(1, kStable + 1),
                                        Dirty(3 * kStable + 7, 3 * kStable + 42)};
  const auto a = Compute(fx, f, dirty);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(Windows(*a), (std::vector<ChunkWindow>{{0, 6 * kStable}}));
  CheckInvariants(*a, f, fx, dirty);
}

TEST(FileChunkHashes, XetCoreNoExtensionWhenRangeAlreadyAtFileEnd) {
  Fixture fx(3);
  const auto f = fx.SimpleFile(std::vector<uint64_t>(6, kStable));
  const std::vector<ByteRange> dirty = {Dirty(4 * kStable, 6 * kStable)};
  const auto a = Compute(fx, f, dirty);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(Windows(*a), (std::vector<ChunkWindow>{{4 * kStable, 6 * kStable}}));
  EXPECT_TRUE(a->hash_ranges[0].has_value());
  EXPECT_FALSE(a->hash_ranges[1].has_value());
  CheckInvariants(*a, f, fx, dirty);
}

TEST(FileChunkHashes, XetCoreSeparateRangesStaySeparateWhenFarApart) {
  Fixture fx(4);
  const auto f = fx.SimpleFile(std::vector<uint64_t>(20, kStable));
  const std::vector<ByteRange> dirty = {Dirty(0, kStable), Dirty(14 * kStable, 15 * kStable)};
  const auto a = Compute(fx, f, dirty);
  ASSERT_TRUE(a.ok());
  // xet-core asserts >= 2 windows and N + 1 gaps; the exact windows follow from the rules.
  EXPECT_EQ(Windows(*a),
            (std::vector<ChunkWindow>{{0, 3 * kStable}, {14 * kStable, 17 * kStable}}));
  ASSERT_EQ(a->hash_ranges.size(), 3u);
  EXPECT_FALSE(a->hash_ranges[0].has_value());
  EXPECT_TRUE(a->hash_ranges[1].has_value());
  EXPECT_TRUE(a->hash_ranges[2].has_value());
  CheckInvariants(*a, f, fx, dirty);
}

TEST(FileChunkHashes, XetCoreExtensionFallsThroughToFileEndWithoutStableBoundary) {
  Fixture fx(5);
  const auto f = fx.SimpleFile(std::vector<uint64_t>(4, kUnstable));
  const std::vector<ByteRange> dirty = {Dirty(0, kUnstable)};
  const auto a = Compute(fx, f, dirty);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(Windows(*a), (std::vector<ChunkWindow>{{0, 4 * kUnstable}}));
  EXPECT_FALSE(a->hash_ranges[0].has_value());
  EXPECT_FALSE(a->hash_ranges[1].has_value());
  CheckInvariants(*a, f, fx, dirty);
}

// ---- window expansion, merging, clamping ----

TEST(FileChunkHashes, StableSizeRange) {
  EXPECT_FALSE(IsStableChunkSize(2 * kMinChunkSize - 1));
  EXPECT_TRUE(IsStableChunkSize(2 * kMinChunkSize));
  EXPECT_TRUE(IsStableChunkSize(kTargetChunkSize));
  EXPECT_TRUE(IsStableChunkSize(kMaxChunkSize - kMinChunkSize - 1));
  EXPECT_FALSE(IsStableChunkSize(kMaxChunkSize - kMinChunkSize));
  EXPECT_FALSE(IsStableChunkSize(kMaxChunkSize));
}

TEST(FileChunkHashes, WindowExpandsOutwardToChunkBoundaries) {
  Fixture fx(6);
  // Chunks 20000 each (stable): a dirty byte in the middle of chunk 3.
  const uint64_t c = 20000;
  const auto f = fx.SimpleFile(std::vector<uint64_t>(12, c));
  const std::vector<ByteRange> dirty = {{3 * c + 123, 3 * c + 123}};
  const auto a = Compute(fx, f, dirty);
  ASSERT_TRUE(a.ok());
  // Opens at chunk 3's start; chunks 4 and 5 are the two stable clean chunks.
  EXPECT_EQ(Windows(*a), (std::vector<ChunkWindow>{{3 * c, 6 * c}}));
  CheckInvariants(*a, f, fx, dirty);
  // A range straddling a chunk boundary opens at the earlier chunk.
  const std::vector<ByteRange> straddle = {{5 * c - 1, 5 * c}};
  const auto b = Compute(fx, f, straddle);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(Windows(*b), (std::vector<ChunkWindow>{{4 * c, 8 * c}}));
  CheckInvariants(*b, f, fx, straddle);
}

TEST(FileChunkHashes, UnstableChunksAfterDirtyKeepTheWindowOpen) {
  Fixture fx(7);
  // dirty chunk 1, then small, stable, small, stable, stable, ... : the window closes only
  // after two consecutive stable chunks.
  const std::vector<uint64_t> sizes = {kStable, kStable, 1000,    kStable, 1000,
                                       kStable, kStable, kStable, kStable, kStable};
  const auto f = fx.SimpleFile(sizes);
  const std::vector<ByteRange> dirty = {Dirty(kStable, kStable + 1)};
  const auto a = Compute(fx, f, dirty);
  ASSERT_TRUE(a.ok());
  std::vector<uint64_t> ends{0};
  for (uint64_t s : sizes) ends.push_back(ends.back() + s);
  EXPECT_EQ(Windows(*a), (std::vector<ChunkWindow>{{ends[1], ends[7]}}));
  CheckInvariants(*a, f, fx, dirty);
}

TEST(FileChunkHashes, RangesSharingAChunkMergeIntoOneWindow) {
  Fixture fx(8);
  const uint64_t c = 20000;
  const auto f = fx.SimpleFile(std::vector<uint64_t>(12, c));
  // Two ranges inside chunk 2, and one in chunk 3 (reached while the window is open).
  const std::vector<ByteRange> dirty = {
      {2 * c + 10, 2 * c + 20}, {2 * c + 500, 2 * c + 600}, {3 * c + 1, 3 * c + 2}};
  const auto a = Compute(fx, f, dirty);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(Windows(*a), (std::vector<ChunkWindow>{{2 * c, 6 * c}}));
  CheckInvariants(*a, f, fx, dirty);
}

TEST(FileChunkHashes, RangeInTheExtensionJoinsTheWindow) {
  Fixture fx(9);
  const uint64_t c = 20000;
  const auto f = fx.SimpleFile(std::vector<uint64_t>(12, c));
  // Chunk 1 dirty; chunk 3 dirty while chunk 2 extends: the window restarts its extension.
  const std::vector<ByteRange> dirty = {{c, c}, {3 * c + 5, 3 * c + 5}};
  const auto a = Compute(fx, f, dirty);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(Windows(*a), (std::vector<ChunkWindow>{{c, 6 * c}}));
  CheckInvariants(*a, f, fx, dirty);
}

TEST(FileChunkHashes, TouchingWindowsHaveANullGapBetween) {
  Fixture fx(10);
  const auto f = fx.SimpleFile(std::vector<uint64_t>(10, kStable));
  // Window 1 closes at 3 chunks; the next chunk is dirty and opens window 2 at once.
  const std::vector<ByteRange> dirty = {Dirty(0, 1), Dirty(3 * kStable, 3 * kStable + 1)};
  const auto a = Compute(fx, f, dirty);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(Windows(*a), (std::vector<ChunkWindow>{{0, 3 * kStable}, {3 * kStable, 6 * kStable}}));
  ASSERT_EQ(a->hash_ranges.size(), 3u);
  EXPECT_FALSE(a->hash_ranges[0].has_value());
  EXPECT_FALSE(a->hash_ranges[1].has_value());
  ASSERT_TRUE(a->hash_ranges[2].has_value());
  EXPECT_FALSE(a->hash_ranges[2]->at_start());
  EXPECT_TRUE(a->hash_ranges[2]->at_end());
  // The empty gap holds no chunk, so no piece of the term: only the run after window 2.
  EXPECT_TRUE(a->gap_verification.empty());
  EXPECT_EQ(a->gap_piece_verification.size(), 1u);
  CheckInvariants(*a, f, fx, dirty);
}

TEST(FileChunkHashes, UnsortedOverlappingRangesAreNormalized) {
  Fixture fx(11);
  const uint64_t c = 30000;
  const auto f = fx.SimpleFile(std::vector<uint64_t>(30, c));
  const std::vector<ByteRange> messy = {
      {20 * c, 20 * c + 5}, {2 * c, 2 * c + 100}, {2 * c + 50, 2 * c + 70}, {20 * c + 6, 21 * c}};
  const std::vector<ByteRange> clean = {{2 * c, 2 * c + 100}, {20 * c, 21 * c}};
  const auto a = Compute(fx, f, messy);
  const auto b = Compute(fx, f, clean);
  ASSERT_TRUE(a.ok());
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(Windows(*a), Windows(*b));
  EXPECT_EQ(SerializeFileChunkHashes(*a), SerializeFileChunkHashes(*b));
  EXPECT_EQ(Windows(*a), (std::vector<ChunkWindow>{{2 * c, 5 * c}, {20 * c, 24 * c}}));
  CheckInvariants(*a, f, fx, messy);
}

TEST(FileChunkHashes, RangesAreClampedToTheFile) {
  Fixture fx(12);
  const uint64_t c = 20000;
  const auto f = fx.SimpleFile(std::vector<uint64_t>(10, c));
  // Runs past the end: clamped; starts past the end: dropped.
  const std::vector<ByteRange> dirty = {
      {9 * c + 5, 1'000'000'000}, {20 * c, 30 * c}, {kOpenEnd - 1, kOpenEnd}};
  const auto a = Compute(fx, f, dirty);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(Windows(*a), (std::vector<ChunkWindow>{{9 * c, 10 * c}}));
  CheckInvariants(*a, f, fx, dirty);
  // An open-ended range from the header.
  const auto header = ParseDirtyRangesHeader("bytes=150000-");
  ASSERT_TRUE(header.ok());
  const auto b = Compute(fx, f, *header);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(Windows(*b), (std::vector<ChunkWindow>{{7 * c, 10 * c}}));
  CheckInvariants(*b, f, fx, *header);
}

TEST(FileChunkHashes, NoRangeInsideTheFileIsInvalid) {
  Fixture fx(13);
  const auto f = fx.SimpleFile(std::vector<uint64_t>(4, 20000));
  for (const std::vector<ByteRange>& dirty :
       {std::vector<ByteRange>{}, std::vector<ByteRange>{{80000, 80000}},
        std::vector<ByteRange>{{80000, 90000}, {100000, kOpenEnd}},
        std::vector<ByteRange>{{10, 5}}}) {
    const auto a = Compute(fx, f, dirty);
    ASSERT_FALSE(a.ok());
    EXPECT_EQ(a.status().code(), Status::Code::kInvalidArgument);
    EXPECT_FALSE(BuildFileChunkHashesJson(f, fx.Lookup(), dirty).ok());
  }
  // The last byte is inside.
  EXPECT_TRUE(Compute(fx, f, {{79999, 80000}}).ok());
  // An empty file has no byte to be dirty.
  FileRecord empty;
  const auto e = Compute(fx, empty, {{0, 0}});
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.status().code(), Status::Code::kInvalidArgument);
}

// ---- multi-term, multi-xorb files: gaps, gap verification ----

class FileChunkHashesMultiTermTest : public ::testing::Test {
 protected:
  // Xorb A: 8 chunks, xorb B: 6 chunks, all stable sizes of varying length.
  // File: A[0,3) | B[0,4) | A[3,8) | B[4,6) | A[1,2)
  void SetUp() override {
    std::vector<uint64_t> sa, sb;
    for (int i = 0; i < 8; ++i) sa.push_back(17000 + 1000 * i);
    for (int i = 0; i < 6; ++i) sb.push_back(40000 + 3000 * i);
    a = fx.AddXorb(sa);
    b = fx.AddXorb(sb);
    file = fx.File(
        {fx.Term(a, 0, 3), fx.Term(b, 0, 4), fx.Term(a, 3, 8), fx.Term(b, 4, 6), fx.Term(a, 1, 2)});
    chunks = fx.Chunks(file);
    bounds = {0};
    for (const ChunkInfo& ch : chunks) bounds.push_back(bounds.back() + ch.size);
    term_start = {0};
    for (const FileTerm& t : file.terms) term_start.push_back(term_start.back() + t.unpacked_bytes);
  }

  Fixture fx{77};
  Hash a, b;
  FileRecord file;
  std::vector<ChunkInfo> chunks;
  std::vector<uint64_t> bounds;      // chunk boundaries, 0 .. size (15 chunks)
  std::vector<uint64_t> term_start;  // term boundaries
};

TEST_F(FileChunkHashesMultiTermTest, WindowInTheMiddleTerm) {
  ASSERT_EQ(chunks.size(), 15u);
  // Dirty byte in chunk 8 (the 2nd chunk of term 2 = A[3,8)).
  const std::vector<ByteRange> dirty = {{bounds[8] + 1, bounds[8] + 1}};
  const auto r = Compute(fx, file, dirty);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(Windows(*r), (std::vector<ChunkWindow>{{bounds[8], bounds[11]}}));
  EXPECT_EQ(r->total_chunks, 15u);
  // Terms 0, 1, 3, 4 are stable; term 2 overlaps the window.
  ASSERT_EQ(r->gap_verification.size(), 4u);
  EXPECT_EQ(r->gap_verification[0], VerificationHash(fx.TermChunkHashes(file.terms[0])));
  EXPECT_EQ(r->gap_verification[1], VerificationHash(fx.TermChunkHashes(file.terms[1])));
  EXPECT_EQ(r->gap_verification[2], VerificationHash(fx.TermChunkHashes(file.terms[3])));
  EXPECT_EQ(r->gap_verification[3], VerificationHash(fx.TermChunkHashes(file.terms[4])));
  // The gaps are exactly the subtrees of the chunks around the window.
  const std::span<const ChunkInfo> all(chunks);
  EXPECT_EQ(r->hash_ranges[0], MerkleHashSubtree::FromChunks(true, all.first(8), false));
  EXPECT_EQ(r->hash_ranges[1], MerkleHashSubtree::FromChunks(false, all.subspan(11), true));
  CheckInvariants(*r, file, fx, dirty);
  EXPECT_EQ(fx.lookups, 5);  // once per term
}

TEST_F(FileChunkHashesMultiTermTest, ExtensionIntoTheNextTermMakesItUnstable) {
  // Dirty in the last chunk of term 0: the extension takes chunks 3 and 4 of term 1.
  const std::vector<ByteRange> dirty = {{bounds[2], bounds[2]}};
  const auto r = Compute(fx, file, dirty);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(Windows(*r), (std::vector<ChunkWindow>{{bounds[2], bounds[5]}}));
  ASSERT_EQ(r->gap_verification.size(), 3u);  // terms 2, 3, 4
  EXPECT_EQ(r->gap_verification[0], VerificationHash(fx.TermChunkHashes(file.terms[2])));
  CheckInvariants(*r, file, fx, dirty);
}

TEST_F(FileChunkHashesMultiTermTest, EveryTermDirtyLeavesNoGapVerification) {
  const std::vector<ByteRange> dirty = {{0, file.size - 1}};
  const auto r = Compute(fx, file, dirty);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(Windows(*r), (std::vector<ChunkWindow>{{0, file.size}}));
  EXPECT_TRUE(r->gap_verification.empty());
  EXPECT_FALSE(r->hash_ranges[0].has_value());
  EXPECT_FALSE(r->hash_ranges[1].has_value());
  CheckInvariants(*r, file, fx, dirty);
  EXPECT_EQ(SerializeFileChunkHashes(*r),
            R"({"totalChunks":15,"fileSize":)" + std::to_string(file.size) +
                R"(,"windows":[{"dirtyByteRange":[0,)" + std::to_string(file.size) +
                R"(]}],"hashRanges":[null,null],"gapVerification":[],"gapPieceVerification":[],)"
                R"("windowTails":[[]]})");
}

TEST_F(FileChunkHashesMultiTermTest, TwoWindowsAndTheJson) {
  const std::vector<ByteRange> dirty = {{bounds[1], bounds[1] + 10}, {bounds[14], bounds[15] - 1}};
  const auto r = Compute(fx, file, dirty);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(Windows(*r),
            (std::vector<ChunkWindow>{{bounds[1], bounds[4]}, {bounds[14], bounds[15]}}));
  CheckInvariants(*r, file, fx, dirty);

  const auto body = BuildFileChunkHashesJson(file, fx.Lookup(), dirty);
  ASSERT_TRUE(body.ok());
  EXPECT_EQ(*body, SerializeFileChunkHashes(*r));
  const auto j = nlohmann::json::parse(*body);
  std::vector<std::string> keys;
  for (auto it = j.begin(); it != j.end(); ++it) keys.push_back(it.key());
  std::sort(keys.begin(), keys.end());
  EXPECT_EQ(keys,
            (std::vector<std::string>{"fileSize", "gapPieceVerification", "gapVerification",
                                      "hashRanges", "totalChunks", "windowTails", "windows"}));
  EXPECT_EQ(body->rfind(R"({"totalChunks":15,"fileSize":)", 0), 0u);  // serde field order
  EXPECT_EQ(j["fileSize"], file.size);
  ASSERT_EQ(j["windows"].size(), 2u);
  EXPECT_EQ(j["windows"][0]["dirtyByteRange"], nlohmann::json::array({bounds[1], bounds[4]}));
  EXPECT_EQ(j["windows"][1]["dirtyByteRange"], nlohmann::json::array({bounds[14], bounds[15]}));
  ASSERT_EQ(j["hashRanges"].size(), 3u);
  EXPECT_TRUE(j["hashRanges"][2].is_null());
  for (size_t g = 0; g < 2; ++g) {
    const auto parsed = MerkleHashSubtree::FromJson(j["hashRanges"][g].dump());
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed, *r->hash_ranges[g]);
  }
  // Window 1 covers chunks 1-3 (terms 0 and 1), window 2 chunk 14 (term 4): terms 2 and 3
  // are stable.
  ASSERT_EQ(j["gapVerification"].size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(j["gapVerification"][i],
              VerificationHash(fx.TermChunkHashes(file.terms[i + 2])).ToHex());
  }
  ASSERT_EQ(j["gapPieceVerification"].size(), r->gap_piece_verification.size());
  for (size_t i = 0; i < r->gap_piece_verification.size(); ++i) {
    EXPECT_EQ(j["gapPieceVerification"][i], r->gap_piece_verification[i].ToHex());
  }
}

TEST_F(FileChunkHashesMultiTermTest, CorruptRecordsAreReported) {
  const std::vector<ByteRange> dirty = {{0, 0}};
  {
    FileRecord f = file;
    f.terms[1].xorb_hash = Hash();
    EXPECT_EQ(Compute(fx, f, dirty).status().code(), Status::Code::kCorruption);
  }
  {
    FileRecord f = file;
    f.terms[2].chunk_end = 9;
    EXPECT_EQ(Compute(fx, f, dirty).status().code(), Status::Code::kCorruption);
  }
  {
    FileRecord f = file;
    f.terms[2].chunk_end = f.terms[2].chunk_start;
    EXPECT_EQ(Compute(fx, f, dirty).status().code(), Status::Code::kCorruption);
  }
  {
    FileRecord f = file;
    f.terms[3].unpacked_bytes += 1;
    f.size += 1;
    EXPECT_EQ(Compute(fx, f, dirty).status().code(), Status::Code::kCorruption);
  }
  {
    FileRecord f = file;
    f.size -= 1;
    EXPECT_EQ(Compute(fx, f, dirty).status().code(), Status::Code::kCorruption);
  }
}

// ---- random files and ranges: all invariants, including the composed file hash ----

TEST(FileChunkHashes, RandomFilesComposeToTheFileHash) {
  Fixture fx(2024);
  auto& rng = fx.rng();
  const std::vector<uint64_t> size_menu = {1000,  8192,  16383,  16384,  30000,
                                           65536, 90000, 122879, 122880, 131072};
  for (int trial = 0; trial < 150; ++trial) {
    // 1-4 xorbs; a file of 1-8 terms over them.
    std::vector<Hash> xs;
    std::vector<uint32_t> counts;
    const size_t nx = 1 + rng() % 4;
    for (size_t i = 0; i < nx; ++i) {
      std::vector<uint64_t> sizes(1 + rng() % 40);
      for (uint64_t& s : sizes) {
        s = (trial % 2 == 0) ? size_menu[rng() % size_menu.size()] : 16384 + rng() % 100000;
      }
      xs.push_back(fx.AddXorb(sizes));
      counts.push_back(static_cast<uint32_t>(sizes.size()));
    }
    std::vector<FileTerm> terms;
    const size_t nt = 1 + rng() % 8;
    for (size_t i = 0; i < nt; ++i) {
      const size_t x = rng() % nx;
      const uint32_t s = static_cast<uint32_t>(rng() % counts[x]);
      const uint32_t e = s + 1 + static_cast<uint32_t>(rng() % (counts[x] - s));
      terms.push_back(fx.Term(xs[x], s, e));
    }
    const FileRecord f = fx.File(terms);
    std::vector<ByteRange> dirty;
    const size_t nd = 1 + rng() % 5;
    for (size_t i = 0; i < nd; ++i) {
      const uint64_t first = rng() % (f.size + f.size / 10);  // some past the end
      const uint64_t len = (rng() % 4 == 0) ? rng() % (f.size / 2 + 1) : rng() % 2000;
      dirty.push_back({first, first + len});
    }
    const auto r = Compute(fx, f, dirty);
    const bool any_inside = std::any_of(dirty.begin(), dirty.end(),
                                        [&](const ByteRange& d) { return d.first < f.size; });
    if (!any_inside) {
      EXPECT_EQ(r.status().code(), Status::Code::kInvalidArgument);
      continue;
    }
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    SCOPED_TRACE("trial " + std::to_string(trial));
    CheckInvariants(*r, f, fx, dirty);
  }
}

// ---- X-Range-Dirty ----

TEST(FileChunkHashes, ParseDirtyRangesHeader) {
  const auto r = ParseDirtyRangesHeader("bytes=0-65535,200000-299999");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, (std::vector<ByteRange>{{0, 65535}, {200000, 299999}}));
  const auto open = ParseDirtyRangesHeader("bytes=10-");
  ASSERT_TRUE(open.ok());
  EXPECT_EQ(*open, (std::vector<ByteRange>{{10, kOpenEnd}}));
  // Kept as written (sorting and merging happen in ComputeFileChunkHashes).
  EXPECT_EQ(*ParseDirtyRangesHeader("bytes=5-9, 0-3"), (std::vector<ByteRange>{{5, 9}, {0, 3}}));
  for (const char* bad :
       {"", "bytes=", "bytes=-5", "bytes=9-5", "items=0-1", "0-1", "bytes=a-b", "bytes=1-2,,3-4"}) {
    const auto p = ParseDirtyRangesHeader(bad);
    EXPECT_FALSE(p.ok()) << bad;
  }
}

}  // namespace
}  // namespace xet
