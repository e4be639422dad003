#include "server/cas/reconstruction.h"

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "support/test_support.h"

namespace xet {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

const std::string kSecret(40, 's');
constexpr int64_t kExpires = 4000000000;
const std::string kBase = "https://cas.example";

TransferSigner Signer() { return TransferSigner::Create(kSecret).value(); }
TransferUrlSigner UrlSigner(const TransferSigner& s) {
  return s.NewUrlSigner(kBase, kExpires).value();
}

Hash H(uint8_t seed) {
  std::array<uint8_t, 32> raw{};
  raw.fill(seed);
  raw[31] = static_cast<uint8_t>(seed * 3 + 1);
  return Hash::FromArray(raw);
}

// A xorb whose chunks have these raw and serialized sizes.
XorbRecord MakeXorb(const Hash& hash, const std::vector<uint32_t>& raw,
                    const std::vector<uint32_t>& compressed) {
  XorbRecord x;
  x.hash = hash;
  uint32_t u = 0, c = 0;
  for (size_t i = 0; i < raw.size(); ++i) {
    u += raw[i];
    c += compressed[i];
    x.chunks.push_back(XorbChunkRow{Hash(), c, u});
  }
  x.object_size = c + 100;
  return x;
}

struct Store {
  std::map<Hash, XorbRecord> xorbs;
  int lookups = 0;
  XorbLookup Lookup() {
    return [this](const Hash& h) -> const XorbRecord* {
      ++lookups;
      auto it = xorbs.find(h);
      return it == xorbs.end() ? nullptr : &it->second;
    };
  }
};

FileRecord MakeFile(const std::vector<FileTerm>& terms) {
  FileRecord f;
  f.file_hash = H(200);
  f.terms = terms;
  for (const FileTerm& t : terms) f.size += t.unpacked_bytes;
  return f;
}

// ---- synthetic file ----
// Xorb A: raw 100,200,300,400,500 (ends 100,300,600,1000,1500); serialized 10..50 (ends
// 10,30,60,100,150). Xorb B: six chunks of 1000 raw / 100 serialized bytes.
// File: A[0,3) 600 | B[0,2) 2000 | A[3,5) 900 | A[1,2) 200 | B[4,6) 2000  = 5700 bytes,
// file offsets 0, 600, 2600, 3500, 3700.
class ReconstructionSyntheticTest : public ::testing::Test {
 protected:
  void SetUp() override {
    a = H(1);
    b = H(2);
    store.xorbs[a] = MakeXorb(a, {100, 200, 300, 400, 500}, {10, 20, 30, 40, 50});
    store.xorbs[b] = MakeXorb(b, std::vector<uint32_t>(6, 1000), std::vector<uint32_t>(6, 100));
    file = MakeFile(
        {{a, 0, 3, 600}, {b, 0, 2, 2000}, {a, 3, 5, 900}, {a, 1, 2, 200}, {b, 4, 6, 2000}});
  }
  ReconstructionPlan Plan(std::optional<ByteRange> range) {
    auto plan = PlanReconstruction(file, store.Lookup(), range);
    EXPECT_TRUE(plan.ok()) << plan.status().ToString();
    return plan.ok() ? std::move(plan).value() : ReconstructionPlan{};
  }
  Hash a, b;
  Store store;
  FileRecord file;
};

using Terms = std::vector<ReconstructionTerm>;
using Ranges = std::vector<XorbFetchRange>;

// The terms without their byte ranges (checked separately through the fetch ranges).
Terms Strip(Terms terms) {
  for (ReconstructionTerm& t : terms) t.bytes_first = t.bytes_last = 0;
  return terms;
}

TEST_F(ReconstructionSyntheticTest, FullFileMergesRangesPerXorb) {
  ReconstructionPlan p = Plan(std::nullopt);
  EXPECT_EQ(p.offset_into_first_range, 0u);
  EXPECT_EQ(
      Strip(p.terms),
      (Terms{{0, 0, 3, 600}, {1, 0, 2, 2000}, {0, 3, 5, 900}, {0, 1, 2, 200}, {1, 4, 6, 2000}}));
  ASSERT_EQ(p.xorbs.size(), 2u);
  EXPECT_EQ(p.xorbs[0].hash, a);
  EXPECT_EQ(p.xorbs[1].hash, b);
  // A: [0,3) + [3,5) adjacent, [1,2) overlapping -> one run.
  EXPECT_EQ(p.xorbs[0].ranges, (Ranges{{0, 5, {0, 149}}}));
  // B: [0,2) and [4,6) have a gap.
  EXPECT_EQ(p.xorbs[1].ranges, (Ranges{{0, 2, {0, 199}}, {4, 6, {400, 599}}}));
  EXPECT_EQ(store.lookups, 2);             // once per distinct xorb
  EXPECT_EQ(p.terms[2].bytes_first, 60u);  // A[3,5) is serialized at [60, 150)
  EXPECT_EQ(p.terms[2].bytes_last, 149u);
}

TEST_F(ReconstructionSyntheticTest, RangeStartingAndEndingMidChunk) {
  ReconstructionPlan p = Plan(ByteRange{150, 3599});
  EXPECT_EQ(p.offset_into_first_range, 50u);  // 150 is 50 bytes into A chunk 1
  EXPECT_EQ(Strip(p.terms),
            (Terms{{0, 1, 3, 500}, {1, 0, 2, 2000}, {0, 3, 5, 900}, {0, 1, 2, 200}}));
  ASSERT_EQ(p.xorbs.size(), 2u);
  EXPECT_EQ(p.xorbs[0].ranges, (Ranges{{1, 5, {10, 149}}}));
  EXPECT_EQ(p.xorbs[1].ranges, (Ranges{{0, 2, {0, 199}}}));
}

TEST_F(ReconstructionSyntheticTest, RangeTrimsLastTermToTheChunkHoldingTheEnd) {
  ReconstructionPlan p = Plan(ByteRange{700, 2650});
  EXPECT_EQ(p.offset_into_first_range, 100u);
  EXPECT_EQ(Strip(p.terms), (Terms{{0, 0, 2, 2000}, {1, 3, 4, 400}}));
  ASSERT_EQ(p.xorbs.size(), 2u);
  EXPECT_EQ(p.xorbs[0].hash, b);
  EXPECT_EQ(p.xorbs[1].hash, a);
  EXPECT_EQ(p.xorbs[1].ranges, (Ranges{{3, 4, {60, 99}}}));
}

TEST_F(ReconstructionSyntheticTest, RangesOnChunkBoundaries) {
  ReconstructionPlan p = Plan(ByteRange{1600, 1600});  // first byte of B chunk 1
  EXPECT_EQ(p.offset_into_first_range, 0u);
  EXPECT_EQ(Strip(p.terms), (Terms{{0, 1, 2, 1000}}));
  p = Plan(ByteRange{0, 599});  // exactly the first term
  EXPECT_EQ(Strip(p.terms), (Terms{{0, 0, 3, 600}}));
  p = Plan(ByteRange{0, 99});
  EXPECT_EQ(Strip(p.terms), (Terms{{0, 0, 1, 100}}));
  p = Plan(ByteRange{100, 299});
  EXPECT_EQ(p.offset_into_first_range, 0u);
  EXPECT_EQ(Strip(p.terms), (Terms{{0, 1, 2, 200}}));
  p = Plan(ByteRange{600, 600});  // first byte of the second term
  EXPECT_EQ(Strip(p.terms), (Terms{{0, 0, 1, 1000}}));
  EXPECT_EQ(p.xorbs[0].hash, b);
}

TEST_F(ReconstructionSyntheticTest, EndPastFileIsClamped) {
  ReconstructionPlan p = Plan(ByteRange{5000, 999999});
  EXPECT_EQ(p.offset_into_first_range, 300u);
  EXPECT_EQ(Strip(p.terms), (Terms{{0, 5, 6, 1000}}));
  EXPECT_EQ(p.xorbs[0].ranges, (Ranges{{5, 6, {500, 599}}}));
  p = Plan(ByteRange{5699, kOpenEnd});
  EXPECT_EQ(p.offset_into_first_range, 999u);
  EXPECT_EQ(Strip(p.terms), (Terms{{0, 5, 6, 1000}}));
  ReconstructionPlan full = Plan(std::nullopt);
  p = Plan(ByteRange{0, kOpenEnd});
  EXPECT_EQ(p.terms, full.terms);
}

TEST_F(ReconstructionSyntheticTest, StartAtOrPastEndIsOutOfRange) {
  for (uint64_t start : {5700ull, 5701ull, 1ull << 40}) {
    auto p = PlanReconstruction(file, store.Lookup(), ByteRange{start, start + 10});
    ASSERT_FALSE(p.ok());
    EXPECT_EQ(p.status().code(), Status::Code::kOutOfRange);
  }
  EXPECT_EQ(PlanReconstruction(file, store.Lookup(), ByteRange{10, 5}).status().code(),
            Status::Code::kInvalidArgument);
}

TEST_F(ReconstructionSyntheticTest, CorruptRecordsAreRejected) {
  auto expect_corrupt = [&](const FileRecord& f) {
    auto p = PlanReconstruction(f, store.Lookup(), std::nullopt);
    ASSERT_FALSE(p.ok());
    EXPECT_EQ(p.status().code(), Status::Code::kCorruption) << p.status().ToString();
  };
  expect_corrupt(MakeFile({{a, 0, 6, 1500}}));   // past the table
  expect_corrupt(MakeFile({{a, 2, 2, 0}}));      // empty
  expect_corrupt(MakeFile({{a, 3, 1, 0}}));      // reversed
  expect_corrupt(MakeFile({{a, 0, 2, 299}}));    // unpacked size disagrees
  expect_corrupt(MakeFile({{H(9), 0, 1, 10}}));  // unknown xorb
  FileRecord f = file;
  f.size += 1;  // terms do not add up
  expect_corrupt(f);
}

TEST(ReconstructionTest, EmptyFile) {
  Store store;
  FileRecord f = MakeFile({});
  auto p = PlanReconstruction(f, store.Lookup(), std::nullopt);
  ASSERT_TRUE(p.ok());
  EXPECT_TRUE(p->terms.empty());
  EXPECT_TRUE(p->xorbs.empty());
  p = PlanReconstruction(f, store.Lookup(), ByteRange{0, 100});
  ASSERT_TRUE(p.ok());
  EXPECT_TRUE(p->terms.empty());
  EXPECT_EQ(PlanReconstruction(f, store.Lookup(), ByteRange{1, 100}).status().code(),
            Status::Code::kOutOfRange);
  TransferSigner s = Signer();
  TransferUrlSigner us = UrlSigner(s);
  EXPECT_EQ(SerializeReconstructionV2(*p, us),
            R"({"offset_into_first_range":0,"terms":[],"xorbs":{}})");
  EXPECT_EQ(SerializeReconstructionV1(*p, us),
            R"({"offset_into_first_range":0,"terms":[],"fetch_info":{}})");
}

TEST(ReconstructionTest, SingleChunkFile) {
  Store store;
  Hash c = H(3);
  store.xorbs[c] = MakeXorb(c, {42}, {50});
  FileRecord f = MakeFile({{c, 0, 1, 42}});
  for (auto range : {std::optional<ByteRange>{}, std::optional<ByteRange>{ByteRange{0, 41}},
                     std::optional<ByteRange>{ByteRange{41, 41}}}) {
    auto p = PlanReconstruction(f, store.Lookup(), range);
    ASSERT_TRUE(p.ok());
    EXPECT_EQ(p->offset_into_first_range, range ? range->first : 0);
    EXPECT_EQ(Strip(p->terms), (Terms{{0, 0, 1, 42}}));
    EXPECT_EQ(p->xorbs[0].ranges, (Ranges{{0, 1, {0, 49}}}));
  }
  EXPECT_FALSE(PlanReconstruction(f, store.Lookup(), ByteRange{42, 42}).ok());
}

// ---- JSON ----

std::vector<ByteRange> QueryRanges(const TransferSigner& s, const std::string& url,
                                   const Hash& xorb) {
  // The URL's query, decoded (the signer only escapes '=' and ',').
  std::string prefix = kBase + "/v1/transfer/xorb/default/" + xorb.ToHex() + "?";
  EXPECT_EQ(url.rfind(prefix, 0), 0u) << url;
  std::string q = url.substr(prefix.size());
  std::map<std::string, std::string> params;
  std::stringstream ss(q);
  std::string kv;
  while (std::getline(ss, kv, '&')) {
    std::string v = kv.substr(kv.find('=') + 1);
    for (auto [from, to] : {std::pair<std::string, std::string>{"%3D", "="}, {"%2C", ","}}) {
      for (size_t at; (at = v.find(from)) != std::string::npos;) v.replace(at, 3, to);
    }
    params[kv.substr(0, kv.find('='))] = v;
  }
  EXPECT_EQ(params.size(), 3u);
  TransferVerification v = s.Verify(
      xorb, {params["X-Xet-Signed-Range"], params["Expires"], params["Signature"]}, kExpires - 1);
  EXPECT_TRUE(v.ok()) << TransferAuthErrorName(v.error);
  return v.ranges;
}

std::vector<std::string> Keys(const json& j) {
  std::vector<std::string> k;
  for (auto it = j.begin(); it != j.end(); ++it) k.push_back(it.key());
  return k;
}

TEST_F(ReconstructionSyntheticTest, V2JsonHasExactlyTheExpectedFieldsAndSignedUrls) {
  TransferSigner s = Signer();
  TransferUrlSigner us = UrlSigner(s);
  ReconstructionPlan p = Plan(ByteRange{150, 3599});
  json j = json::parse(SerializeReconstructionV2(p, us));
  std::vector<std::string> top = {"offset_into_first_range", "terms", "xorbs"};
  std::sort(top.begin(), top.end());
  EXPECT_EQ(Keys(j), top);
  EXPECT_EQ(j["offset_into_first_range"], 50);
  ASSERT_EQ(j["terms"].size(), 4u);
  EXPECT_EQ(j["terms"][0], json::parse(R"({"hash":")" + a.ToHex() +
                                       R"(","unpacked_length":500,"range":{"start":1,"end":3}})"));
  EXPECT_EQ(j["terms"][1]["hash"], b.ToHex());
  ASSERT_EQ(j["xorbs"].size(), 2u);
  const json& ea = j["xorbs"][a.ToHex()];
  ASSERT_EQ(ea.size(), 1u);
  EXPECT_EQ(Keys(ea[0]), (std::vector<std::string>{"ranges", "url"}));
  EXPECT_EQ(ea[0]["ranges"],
            json::parse(R"([{"chunks":{"start":1,"end":5},"bytes":{"start":10,"end":149}}])"));
  EXPECT_EQ(QueryRanges(s, ea[0]["url"], a), (std::vector<ByteRange>{{10, 149}}));

  // Full file: B has two ranges under one URL signed for both.
  p = Plan(std::nullopt);
  j = json::parse(SerializeReconstructionV2(p, us));
  const json& eb = j["xorbs"][b.ToHex()];
  ASSERT_EQ(eb.size(), 1u);
  EXPECT_EQ(eb[0]["ranges"].size(), 2u);
  EXPECT_EQ(QueryRanges(s, eb[0]["url"], b), (std::vector<ByteRange>{{0, 199}, {400, 599}}));
  EXPECT_NE(eb[0]["url"], j["xorbs"][a.ToHex()][0]["url"]);

  // With a cap of one range per fetch, B gets two entries, each with its own URL.
  ReconstructionJsonOptions one;
  one.max_ranges_per_fetch = 1;
  j = json::parse(SerializeReconstructionV2(p, us, one));
  const json& eb1 = j["xorbs"][b.ToHex()];
  ASSERT_EQ(eb1.size(), 2u);
  EXPECT_EQ(QueryRanges(s, eb1[0]["url"], b), (std::vector<ByteRange>{{0, 199}}));
  EXPECT_EQ(QueryRanges(s, eb1[1]["url"], b), (std::vector<ByteRange>{{400, 599}}));
  EXPECT_EQ(eb1[1]["ranges"],
            json::parse(R"([{"chunks":{"start":4,"end":6},"bytes":{"start":400,"end":599}}])"));
}

TEST_F(ReconstructionSyntheticTest, ChunkDetailListsLengthsAndOffsets) {
  TransferSigner s = Signer();
  TransferUrlSigner us = UrlSigner(s);
  // Range 150..3599: terms A[1,3) B[0,2) A[3,5) A[1,2); A's run [1,5), B's run [0,2).
  ReconstructionPlan p = Plan(ByteRange{150, 3599});
  const std::string plain = SerializeReconstructionV2(p, us);
  ASSERT_TRUE(AddChunkDetail(&p, store.Lookup()).ok());
  EXPECT_EQ(p.chunk_lengths, (std::vector<uint32_t>{200, 300, 1000, 1000, 400, 500, 200}));
  ASSERT_EQ(p.chunk_offsets.size(), 2u);
  // A's serialized chunk ends are 10,30,60,100,150: chunks 1..4 start at 10,30,60,100.
  EXPECT_EQ(p.chunk_offsets[0], (std::vector<uint64_t>{10, 30, 60, 100, 150}));
  EXPECT_EQ(p.chunk_offsets[1], (std::vector<uint64_t>{0, 100, 200}));
  const json j = json::parse(SerializeReconstructionV2(p, us));
  EXPECT_EQ(j["terms"][0], json::parse(R"({"hash":")" + a.ToHex() +
                                       R"(","unpacked_length":500,"range":{"start":1,"end":3},)"
                                       R"("chunk_lengths":[200,300]})"));
  EXPECT_EQ(j["terms"][3]["chunk_lengths"], json::parse("[200]"));
  EXPECT_EQ(j["xorbs"][a.ToHex()][0]["ranges"],
            json::parse(R"([{"chunks":{"start":1,"end":5},"bytes":{"start":10,"end":149},)"
                        R"("chunk_offsets":[10,30,60,100,150]}])"));
  // Without detail nothing changes; the detail answer differs only by its arrays.
  p.chunk_detail = false;
  EXPECT_EQ(SerializeReconstructionV2(p, us), plain);

  // Full file with one range per fetch: B's two runs each carry their own offsets; the
  // streamed answer equals the built one.
  ReconstructionPlan full = Plan(std::nullopt);
  ASSERT_TRUE(AddChunkDetail(&full, store.Lookup()).ok());
  ReconstructionJsonOptions one;
  one.max_ranges_per_fetch = 1;
  const std::string built = SerializeReconstructionV2(full, us, one);
  const json jf = json::parse(built);
  const json& eb = jf["xorbs"][b.ToHex()];
  ASSERT_EQ(eb.size(), 2u);
  EXPECT_EQ(eb[0]["ranges"][0]["chunk_offsets"], json::parse("[0,100,200]"));
  EXPECT_EQ(eb[1]["ranges"][0]["chunk_offsets"], json::parse("[400,500,600]"));
  size_t total_lengths = 0;
  for (const json& t : jf["terms"]) {
    const uint64_t n = t["range"]["end"].get<uint64_t>() - t["range"]["start"].get<uint64_t>();
    EXPECT_EQ(t["chunk_lengths"].size(), n);
    uint64_t sum = 0;
    for (const json& len : t["chunk_lengths"]) sum += len.get<uint64_t>();
    EXPECT_EQ(sum, t["unpacked_length"].get<uint64_t>());
    total_lengths += n;
  }
  EXPECT_EQ(total_lengths, full.chunk_lengths.size());
  for (size_t piece : {size_t{1}, size_t{13}, size_t{1} << 20}) {
    std::string streamed;
    EXPECT_TRUE(StreamReconstructionV2(
        full, us, one,
        [&](std::string_view bytes) {
          streamed.append(bytes);
          return true;
        },
        piece));
    EXPECT_EQ(streamed, built) << piece;
  }
  // An unknown xorb or a table too short for the plan is Corruption.
  Store partial;
  partial.xorbs[a] = store.xorbs[a];
  ReconstructionPlan q = Plan(std::nullopt);
  EXPECT_EQ(AddChunkDetail(&q, partial.Lookup()).code(), Status::Code::kCorruption);
  partial.xorbs[b] = MakeXorb(b, {1000, 1000}, {100, 100});
  EXPECT_EQ(AddChunkDetail(&q, partial.Lookup()).code(), Status::Code::kCorruption);
}

TEST_F(ReconstructionSyntheticTest, V1JsonHasOneSingleRangeUrlPerEntry) {
  TransferSigner s = Signer();
  TransferUrlSigner us = UrlSigner(s);
  ReconstructionPlan p = Plan(std::nullopt);
  json j = json::parse(SerializeReconstructionV1(p, us));
  EXPECT_EQ(Keys(j), (std::vector<std::string>{"fetch_info", "offset_into_first_range", "terms"}));
  EXPECT_EQ(j["terms"].size(), 5u);
  const json& fb = j["fetch_info"][b.ToHex()];
  ASSERT_EQ(fb.size(), 2u);
  EXPECT_EQ(Keys(fb[1]), (std::vector<std::string>{"range", "url", "url_range"}));
  EXPECT_EQ(fb[1]["range"], json::parse(R"({"start":4,"end":6})"));
  EXPECT_EQ(fb[1]["url_range"], json::parse(R"({"start":400,"end":599})"));
  EXPECT_EQ(QueryRanges(s, fb[0]["url"], b), (std::vector<ByteRange>{{0, 199}}));
  EXPECT_EQ(QueryRanges(s, fb[1]["url"], b), (std::vector<ByteRange>{{400, 599}}));
  EXPECT_EQ(j["fetch_info"][a.ToHex()].size(), 1u);
}

TEST_F(ReconstructionSyntheticTest, StreamedAnswersEqualTheBuiltOnes) {
  TransferSigner s = Signer();
  for (std::optional<ByteRange> range :
       {std::optional<ByteRange>(), std::optional(ByteRange{150, 3599})}) {
    ReconstructionPlan p = Plan(range);
    TransferUrlSigner us = UrlSigner(s);
    const std::string v2 = SerializeReconstructionV2(p, us);
    const std::string v1 = SerializeReconstructionV1(p, us);
    // Tiny pieces split the answer everywhere, including between an item and its ','.
    for (size_t piece : {size_t{1}, size_t{7}, size_t{100}, size_t{1} << 20}) {
      std::string streamed;
      size_t pieces = 0;
      auto sink = [&](std::string_view bytes) {
        EXPECT_FALSE(bytes.empty());
        streamed.append(bytes);
        ++pieces;
        return true;
      };
      EXPECT_TRUE(StreamReconstructionV2(p, us, {}, sink, piece));
      EXPECT_EQ(streamed, v2) << piece;
      if (piece == 1) {
        EXPECT_GT(pieces, 5u);  // roughly one per item
      }
      streamed.clear();
      EXPECT_TRUE(StreamReconstructionV1(p, us, sink, piece));
      EXPECT_EQ(streamed, v1) << piece;
    }
  }
  // A sink that refuses a piece stops the writer, which reports it.
  ReconstructionPlan p = Plan(std::nullopt);
  TransferUrlSigner us = UrlSigner(s);
  size_t calls = 0;
  auto refuse = [&](std::string_view) {
    ++calls;
    return false;
  };
  EXPECT_FALSE(StreamReconstructionV2(p, us, {}, refuse, 16));
  EXPECT_EQ(calls, 1u);
}

TEST_F(ReconstructionSyntheticTest, BatchJsonMergesFetchInfoAcrossFiles) {
  TransferSigner s = Signer();
  TransferUrlSigner us = UrlSigner(s);
  ReconstructionPlan p1 = Plan(std::nullopt);
  FileRecord f2 = MakeFile({{b, 2, 4, 2000}});  // fills B's gap
  f2.file_hash = H(201);
  ReconstructionPlan p2 = PlanReconstruction(f2, store.Lookup(), std::nullopt).value();
  std::vector<FileReconstruction> files = {
      {file.file_hash, &p1}, {f2.file_hash, &p2}, {file.file_hash, &p1}};
  json j = json::parse(SerializeBatchReconstruction(files, us));
  EXPECT_EQ(Keys(j), (std::vector<std::string>{"fetch_info", "files"}));
  ASSERT_EQ(j["files"].size(), 2u);
  EXPECT_EQ(j["files"][file.file_hash.ToHex()].size(), 5u);
  EXPECT_EQ(j["files"][f2.file_hash.ToHex()],
            json::parse(R"([{"hash":")" + b.ToHex() +
                        R"(","unpacked_length":2000,"range":{"start":2,"end":4}}])"));
  const json& fb = j["fetch_info"][b.ToHex()];
  ASSERT_EQ(fb.size(), 1u);  // [0,2) + [2,4) + [4,6) merged
  EXPECT_EQ(fb[0]["range"], json::parse(R"({"start":0,"end":6})"));
  EXPECT_EQ(fb[0]["url_range"], json::parse(R"({"start":0,"end":599})"));
  EXPECT_EQ(QueryRanges(s, fb[0]["url"], b), (std::vector<ByteRange>{{0, 599}}));
}

// ---- the captured ev-population responses ----
//
// The xorb's chunk table is built from independent sources: raw sizes from
// reference/ev-population.csv.chunks; serialized record ends of records 0-9 from
// extra.json (read from the reference xorb bytes); the remaining ends are filler that
// finishes at 14,737,813, the data length the captured full-file response implies.
class ReconstructionEvPopulationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    xorb_hash =
        testing::HashFromHex("eea25d6ee393ccae385820daed127b96ef0ea034dfb7cf6da3a950ce334b7632");
    std::ifstream chunks(testing::ConformanceDir() / "reference/ev-population.csv.chunks");
    std::string hex;
    uint32_t size = 0;
    std::vector<uint32_t> raw;
    std::vector<Hash> hashes;
    while (chunks >> hex >> size) {
      raw.push_back(size);
      hashes.push_back(testing::HashFromHex(hex));
    }
    ASSERT_EQ(raw.size(), 796u);
    json extra = testing::LoadConformanceJson("extra.json");
    std::vector<uint32_t> ends;
    for (const json& r : extra["ev_population"]["xorb_prefix_records"]) {
      ends.push_back(r["record_end"].get<uint32_t>());
    }
    ASSERT_EQ(ends.size(), 10u);
    const uint64_t last = 14737813, from = ends.back();
    for (uint64_t i = 10; i < 796; ++i) {
      ends.push_back(static_cast<uint32_t>(from + (last - from) * (i - 9) / 786));
    }
    XorbRecord x;
    x.hash = xorb_hash;
    uint32_t u = 0;
    for (size_t i = 0; i < 796; ++i) {
      u += raw[i];
      x.chunks.push_back(XorbChunkRow{hashes[i], ends[i], u});
    }
    store.xorbs[xorb_hash] = x;
    file.file_hash =
        testing::HashFromHex("118a53328412787fee04011dcf82fdc4acf3a4a1eddec341c910d30a306aaf97");
    file.size = 63527244;
    file.terms = {{xorb_hash, 0, 796, 63527244}};
  }

  // Our body must equal the captured one with its URLs replaced by ours: same fields, same
  // order, same values.
  void ExpectMatchesCapture(const std::string& ours, const std::string& capture_name,
                            const char* url_container) {
    auto bytes = testing::LoadConformanceFile("responses/" + capture_name);
    ordered_json captured = ordered_json::parse(bytes.begin(), bytes.end());
    ordered_json mine = ordered_json::parse(ours);
    auto& cap_entries = captured[url_container][xorb_hash.ToHex()];
    auto& my_entries = mine[url_container][xorb_hash.ToHex()];
    ASSERT_EQ(cap_entries.size(), my_entries.size());
    for (size_t i = 0; i < cap_entries.size(); ++i) cap_entries[i]["url"] = my_entries[i]["url"];
    EXPECT_EQ(ours, captured.dump());
  }

  Hash xorb_hash;
  Store store;
  FileRecord file;
};

TEST_F(ReconstructionEvPopulationTest, FullFileV2MatchesCapture) {
  auto p = PlanReconstruction(file, store.Lookup(), std::nullopt);
  ASSERT_TRUE(p.ok());
  TransferSigner s = Signer();
  TransferUrlSigner us = UrlSigner(s);
  std::string body = SerializeReconstructionV2(*p, us);
  ExpectMatchesCapture(body, "ev-population.v2.json", "xorbs");
  json j = json::parse(body);
  EXPECT_EQ(QueryRanges(s, j["xorbs"][xorb_hash.ToHex()][0]["url"], xorb_hash),
            (std::vector<ByteRange>{{0, 14737812}}));
}

TEST_F(ReconstructionEvPopulationTest, RangeV2AndV1MatchCapture) {
  // Range: bytes=0-200000 -> chunks [0,2), 237171 bytes unpacked, bytes 0-50468.
  auto p = PlanReconstruction(file, store.Lookup(), ByteRange{0, 200000});
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(Strip(p->terms), (Terms{{0, 0, 2, 237171}}));
  TransferSigner s = Signer();
  TransferUrlSigner us = UrlSigner(s);
  ExpectMatchesCapture(SerializeReconstructionV2(*p, us), "ev-population-range.v2.json", "xorbs");
  std::string v1 = SerializeReconstructionV1(*p, us);
  ExpectMatchesCapture(v1, "ev-population-range.v1.json", "fetch_info");
  EXPECT_EQ(QueryRanges(s, json::parse(v1)["fetch_info"][xorb_hash.ToHex()][0]["url"], xorb_hash),
            (std::vector<ByteRange>{{0, 50468}}));
}

TEST_F(ReconstructionEvPopulationTest, MidChunkRangeOffsets) {
  // 131072 + 5 is 5 bytes into chunk 1; the range ends inside chunk 2 (ends at 298560).
  auto p = PlanReconstruction(file, store.Lookup(), ByteRange{131077, 250000});
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->offset_into_first_range, 5u);
  EXPECT_EQ(Strip(p->terms), (Terms{{0, 1, 3, 106099 + 61389}}));
  EXPECT_EQ(p->xorbs[0].ranges, (Ranges{{1, 3, {28959, 63491}}}));
}

}  // namespace
}  // namespace xet
