#include "client/cas/reconstruction_json.h"

#include <gtest/gtest.h>

#include <string>

namespace xet {
namespace {

const std::string kHashA = std::string(64, 'a');
const std::string kHashB = std::string(63, 'b') + "1";

std::string Recon(const std::string& terms, const std::string& xorbs, int offset = 0) {
  return R"({"offset_into_first_range":)" + std::to_string(offset) + R"(,"terms":)" + terms +
         R"(,"xorbs":)" + xorbs + "}";
}

TEST(ReconstructionJsonTest, ShapesAndHostileAnswers) {
  const std::string terms = R"([{"hash":")" + kHashA +
                            R"(","unpacked_length":100,"range":{"start":0,"end":2}},{"hash":")" +
                            kHashB + R"(","unpacked_length":50,"range":{"start":3,"end":4}}])";
  const std::string xorbs =
      R"({")" + kHashA +
      R"(":[{"url":"http://h/x?sig=1","ranges":[{"chunks":{"start":0,"end":2},"bytes":{"start":0,"end":99}}]}],")" +
      kHashB +
      R"(":[{"url":"http://h/y","ranges":[{"chunks":{"start":0,"end":1},"bytes":{"start":0,"end":9}},{"chunks":{"start":3,"end":4},"bytes":{"start":30,"end":59}}]}]})";
  auto r = ParseReconstructionJson(Recon(terms, xorbs, 7));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->offset_into_first_range, 7u);
  ASSERT_EQ(r->terms.size(), 2u);
  EXPECT_EQ(r->terms[1].xorb_hash.ToHex(), kHashB);
  EXPECT_EQ(r->terms[1].chunk_start, 3u);
  EXPECT_EQ(r->terms[1].chunk_end, 4u);
  EXPECT_EQ(r->terms[1].unpacked_length, 50u);
  ASSERT_EQ(r->xorbs.size(), 2u);
  for (const auto& [hash, entries] : r->xorbs) {
    ASSERT_EQ(entries.size(), 1u);
    if (hash.ToHex() == kHashB) {
      ASSERT_EQ(entries[0].ranges.size(), 2u);
      EXPECT_EQ(entries[0].url, "http://h/y");
      EXPECT_EQ(entries[0].ranges[1].chunk_start, 3u);
      EXPECT_EQ(entries[0].ranges[1].byte_start, 30u);
      EXPECT_EQ(entries[0].ranges[1].byte_end, 59u);
    }
  }
  // An empty file.
  EXPECT_TRUE(ParseReconstructionJson(Recon("[]", "{}")).ok());

  const std::string one_xorb_only =
      R"({")" + kHashA +
      R"(":[{"url":"u","ranges":[{"chunks":{"start":0,"end":2},"bytes":{"start":0,"end":9}}]}]})";
  for (
      const std::string& bad : std::vector<std::string>{
          "", "[]", "{}", Recon(terms, one_xorb_only),  // term xorb without fetch entries
          Recon(terms, xorbs, 100),                     // offset past the first term
          Recon(R"([{"hash":"x","unpacked_length":1,"range":{"start":0,"end":1}}])", "{}"),
          Recon(R"([{"hash":")" + kHashA + R"(","unpacked_length":1,"range":{"start":2,"end":2}}])",
                one_xorb_only),
          Recon(R"([{"hash":")" + kHashA +
                    R"(","unpacked_length":1,"range":{"start":0,"end":4294967296}}])",
                one_xorb_only),
          Recon("[]", R"({"zz":[]})"), Recon("[]", R"({")" + kHashA + R"(":[]})"),
          Recon("[]", R"({")" + kHashA + R"(":[{"ranges":[]}]})"),
          Recon(
              "[]",
              R"({")" + kHashA +
                  R"(":[{"url":"u","ranges":[{"chunks":{"start":0,"end":1},"bytes":{"start":9,"end":8}}]}]})"),
          Recon(
              "[]",
              R"({")" + kHashA +
                  R"(":[{"url":"u","ranges":[{"chunks":{"start":1,"end":1},"bytes":{"start":0,"end":8}}]}]})"),
          Recon("[]", R"({")" + kHashA + R"(":[{"url":"u","ranges":[{"chunks":{}}]}]})"),
          R"({"offset_into_first_range":-1,"terms":[],"xorbs":{}})"}) {
    auto p = ParseReconstructionJson(bad);
    ASSERT_FALSE(p.ok()) << bad;
    EXPECT_EQ(p.status().code(), Status::Code::kCorruption) << p.status().ToString();
  }
}

// xetstore's chunk detail: "chunk_lengths" per term and "chunk_offsets" per fetch range.
std::string DetailRecon(const std::string& lengths, const std::string& offsets) {
  const std::string terms = R"([{"hash":")" + kHashA +
                            R"(","unpacked_length":100,"range":{"start":1,"end":3})" +
                            (lengths.empty() ? "" : R"(,"chunk_lengths":)" + lengths) + "}]";
  const std::string xorbs =
      R"({")" + kHashA +
      R"(":[{"url":"u","ranges":[{"chunks":{"start":0,"end":3},"bytes":{"start":10,"end":109})" +
      (offsets.empty() ? "" : R"(,"chunk_offsets":)" + offsets) + "}]}]}";
  return Recon(terms, xorbs);
}

TEST(ReconstructionJsonTest, ChunkDetail) {
  auto r = ParseReconstructionJson(DetailRecon("[60,40]", "[10,30,70,110]"));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->terms[0].chunk_lengths, (std::vector<uint32_t>{60, 40}));
  EXPECT_EQ(r->xorbs[0].second[0].ranges[0].chunk_offsets,
            (std::vector<uint64_t>{10, 30, 70, 110}));
  // Without detail the lists stay empty.
  r = ParseReconstructionJson(DetailRecon("", ""));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->terms[0].chunk_lengths.empty());
  EXPECT_TRUE(r->xorbs[0].second[0].ranges[0].chunk_offsets.empty());
  for (const auto& [lengths, offsets] : std::vector<std::pair<std::string, std::string>>{
           {"[60]", ""},                 // one length for two chunks
           {"[60,40,1]", ""},            // three
           {"[60,41]", ""},              // sum is not unpacked_length
           {"[100,0]", ""},              // an empty chunk
           {"[60,-40]", ""},             // negative
           {"[60,\"40\"]", ""},          // not a number
           {"{}", ""},                   // not a list
           {"[131072,40]", ""},          // a chunk of the largest size, but the sum is wrong
           {"[131073,-131013]", ""},     // larger than a chunk may be
           {"", "[10,30,70]"},           // too few offsets
           {"", "[10,30,70,110,120]"},   // too many
           {"", "[11,30,70,110]"},       // not from bytes.start
           {"", "[10,30,70,109]"},       // not to bytes.end + 1
           {"", "[10,70,30,110]"},       // descending
           {"", "[10,10,70,110]"},       // an empty record
           {"", "[10,15,70,110]"},       // a record shorter than its header
           {"", "[10,30,70,1.5]"},       // not an integer
           {"", "\"10,30,70,110\""}}) {  // not a list
    auto p = ParseReconstructionJson(DetailRecon(lengths, offsets));
    ASSERT_FALSE(p.ok()) << lengths << " " << offsets;
    EXPECT_EQ(p.status().code(), Status::Code::kCorruption) << p.status().ToString();
  }
}

}  // namespace
}  // namespace xet
