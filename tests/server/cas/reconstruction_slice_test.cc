// SlicePlan against PlanReconstruction: a range's plan cut from a whole-file plan must be
// the plan planned directly (terms, xorb order, merged fetch ranges, offset, errors), for
// every kind of range: exhaustive over a small file, random over a large one with
// interleaved, repeated and adjacent terms, and at the edges (first byte, last byte, open
// end, past the end, reversed, an empty file).
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <vector>

#include "server/cas/reconstruction.h"

namespace xet {
namespace {

Hash X(uint32_t n) {
  std::array<uint8_t, 32> raw{};
  raw.fill(static_cast<uint8_t>(n * 7 + 1));
  raw[0] = static_cast<uint8_t>(n);
  raw[1] = static_cast<uint8_t>(n >> 8);
  return Hash::FromArray(raw);
}

struct Store {
  std::map<Hash, XorbRecord> xorbs;
  size_t lookups = 0;
  XorbLookup Lookup() {
    return [this](const Hash& h) -> const XorbRecord* {
      ++lookups;
      auto it = xorbs.find(h);
      return it == xorbs.end() ? nullptr : &it->second;
    };
  }
};

// `n` xorbs of `chunks` chunks with sizes drawn from `rng`, and a file of `terms` terms
// over them: random xorb, random chunk run (repeats, overlaps and adjacency included).
FileRecord RandomFile(std::mt19937_64& rng, Store* store, uint32_t n, uint32_t chunks,
                      size_t terms) {
  for (uint32_t x = 0; x < n; ++x) {
    XorbRecord rec;
    rec.hash = X(x);
    uint32_t u = 0, c = 0;
    for (uint32_t i = 0; i < chunks; ++i) {
      u += 1 + static_cast<uint32_t>(rng() % 900);
      c += 1 + static_cast<uint32_t>(rng() % 500);
      rec.chunks.push_back({Hash(), c, u});
    }
    rec.object_size = c;
    store->xorbs[rec.hash] = rec;
  }
  FileRecord f;
  f.file_hash = X(9999);
  for (size_t t = 0; t < terms; ++t) {
    const XorbRecord& x = store->xorbs[X(static_cast<uint32_t>(rng() % n))];
    const auto start = static_cast<uint32_t>(rng() % chunks);
    const auto end =
        start + 1 + static_cast<uint32_t>(rng() % std::min<uint32_t>(6, chunks - start));
    const uint32_t base = start == 0 ? 0 : x.chunks[start - 1].uncompressed_end;
    f.terms.push_back({x.hash, start, end, x.chunks[end - 1].uncompressed_end - base});
    f.size += f.terms.back().unpacked_bytes;
  }
  return f;
}

// Both ways, compared; returns how many lookups the slice made.
size_t ExpectSameAsDirect(Store& store, const FileRecord& file, const WholeFilePlan& whole,
                          std::optional<ByteRange> range) {
  auto direct = PlanReconstruction(file, store.Lookup(), range);
  const size_t before = store.lookups;
  auto sliced = SlicePlan(whole, store.Lookup(), range);
  const size_t lookups = store.lookups - before;
  const std::string what = range ? std::to_string(range->first) + "-" + std::to_string(range->last)
                                 : std::string("whole");
  EXPECT_EQ(direct.ok(), sliced.ok()) << what;
  if (!direct.ok() || !sliced.ok()) {
    EXPECT_EQ(direct.status().code(), sliced.status().code()) << what;
    EXPECT_EQ(direct.status().message(), sliced.status().message()) << what;
    return lookups;
  }
  EXPECT_EQ(*direct, *sliced) << what;
  return lookups;
}

TEST(ReconstructionSlice, EveryRangeOfASmallFileMatchesTheDirectPlan) {
  std::mt19937_64 rng(7);
  Store store;
  const FileRecord file = RandomFile(rng, &store, 3, 6, 9);
  auto whole = PlanWholeFile(file, store.Lookup());
  ASSERT_TRUE(whole.ok()) << whole.status().ToString();
  EXPECT_EQ(whole->plan, *PlanReconstruction(file, store.Lookup(), std::nullopt));
  ASSERT_EQ(whole->term_ends.size(), file.terms.size());
  EXPECT_EQ(whole->term_ends.back(), file.size);
  ASSERT_LT(file.size, 40000u);
  // Every start, with ends at every chunk boundary region: all first/last-term cuts.
  for (uint64_t first = 0; first < file.size; first += 37) {
    for (uint64_t last = first; last < file.size; last += 53) {
      ExpectSameAsDirect(store, file, *whole, ByteRange{first, last});
    }
    ExpectSameAsDirect(store, file, *whole, ByteRange{first, file.size - 1});
    ExpectSameAsDirect(store, file, *whole, ByteRange{first, kOpenEnd});
  }
}

TEST(ReconstructionSlice, RandomRangesOfALargeFileMatchAndLookUpAtMostTwoXorbs) {
  std::mt19937_64 rng(11);
  Store store;
  const FileRecord file = RandomFile(rng, &store, 200, 64, 20000);
  auto whole = PlanWholeFile(file, store.Lookup());
  ASSERT_TRUE(whole.ok()) << whole.status().ToString();
  for (int i = 0; i < 300; ++i) {
    const uint64_t first = rng() % file.size;
    const uint64_t last = std::min(file.size - 1, first + rng() % (file.size / (1 + rng() % 50)));
    EXPECT_LE(ExpectSameAsDirect(store, file, *whole, ByteRange{first, last}), 2u);
  }
  // A few bytes off each end (every term kept, the first and last cut or not): nearly the
  // whole file, still at most two lookups.
  for (uint64_t head = 0; head < 1500; head += 97) {
    for (uint64_t tail = 0; tail < 1500; tail += 89) {
      EXPECT_LE(ExpectSameAsDirect(store, file, *whole, ByteRange{head, file.size - 1 - tail}), 2u);
    }
  }
  EXPECT_EQ(ExpectSameAsDirect(store, file, *whole, std::nullopt), 0u);
  EXPECT_EQ(ExpectSameAsDirect(store, file, *whole, ByteRange{0, kOpenEnd}), 0u);
}

TEST(ReconstructionSlice, EdgesAndErrorsMatch) {
  std::mt19937_64 rng(3);
  Store store;
  const FileRecord file = RandomFile(rng, &store, 4, 8, 12);
  auto whole = PlanWholeFile(file, store.Lookup());
  ASSERT_TRUE(whole.ok());
  for (const ByteRange r :
       {ByteRange{0, 0}, ByteRange{file.size - 1, file.size - 1}, ByteRange{0, file.size - 1},
        ByteRange{0, file.size}, ByteRange{file.size - 1, kOpenEnd}, ByteRange{file.size, kOpenEnd},
        ByteRange{file.size + 10, file.size + 20}, ByteRange{10, 5}}) {
    ExpectSameAsDirect(store, file, *whole, r);
  }
  // Each term's exact bounds.
  uint64_t cum = 0;
  for (const FileTerm& t : file.terms) {
    ExpectSameAsDirect(store, file, *whole, ByteRange{cum, cum + t.unpacked_bytes - 1});
    ExpectSameAsDirect(store, file, *whole, ByteRange{cum, kOpenEnd});
    cum += t.unpacked_bytes;
  }
  EXPECT_EQ(SlicePlan(*whole, store.Lookup(), ByteRange{file.size, kOpenEnd}).status().code(),
            Status::Code::kOutOfRange);
  EXPECT_EQ(SlicePlan(*whole, store.Lookup(), ByteRange{9, 2}).status().code(),
            Status::Code::kInvalidArgument);
}

TEST(ReconstructionSlice, EmptyFile) {
  Store store;
  FileRecord empty;
  auto whole = PlanWholeFile(empty, store.Lookup());
  ASSERT_TRUE(whole.ok());
  EXPECT_TRUE(whole->plan.terms.empty());
  for (const auto& r : {std::optional<ByteRange>(), std::optional<ByteRange>(ByteRange{0, 0}),
                        std::optional<ByteRange>(ByteRange{0, kOpenEnd}),
                        std::optional<ByteRange>(ByteRange{1, 5})}) {
    ExpectSameAsDirect(store, empty, *whole, r);
  }
}

TEST(ReconstructionSlice, AWholePlanFailsAsTheDirectPlanDoes) {
  std::mt19937_64 rng(5);
  Store store;
  FileRecord file = RandomFile(rng, &store, 3, 8, 6);
  FileRecord unknown = file;
  unknown.terms[2].xorb_hash = X(777);  // no such xorb
  EXPECT_EQ(PlanWholeFile(unknown, store.Lookup()).status().code(), Status::Code::kCorruption);
  FileRecord bad_size = file;
  bad_size.size += 1;
  EXPECT_EQ(PlanWholeFile(bad_size, store.Lookup()).status().code(), Status::Code::kCorruption);
  FileRecord bad_range = file;
  bad_range.terms[1].chunk_end = 99;
  EXPECT_EQ(PlanWholeFile(bad_range, store.Lookup()).status().code(), Status::Code::kCorruption);
}

TEST(ReconstructionSlice, WholePlanBytesCountsWhatItHolds) {
  std::mt19937_64 rng(9);
  Store store;
  const FileRecord file = RandomFile(rng, &store, 10, 16, 500);
  auto whole = PlanWholeFile(file, store.Lookup());
  ASSERT_TRUE(whole.ok());
  size_t ranges = 0;
  for (const XorbFetchPlan& x : whole->plan.xorbs) ranges += x.ranges.size();
  EXPECT_GE(WholeFilePlanBytes(*whole), 500 * (sizeof(ReconstructionTerm) + sizeof(uint64_t)) +
                                            ranges * sizeof(XorbFetchRange));
}

}  // namespace
}  // namespace xet
