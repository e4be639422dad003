#include "client/cas/reconstruction_json.h"

#include <gtest/gtest.h>

#include <cctype>
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

TEST(ReconstructionJsonTest, ChunkDetailIsParsedAndChecked) {
  auto term = [](const std::string& lengths) {
    return R"([{"hash":")" + kHashA + R"(","unpacked_length":100,"range":{"start":1,"end":3})" +
           (lengths.empty() ? "" : R"(,"chunk_lengths":)" + lengths) + "}]";
  };
  auto xorbs = [](const std::string& offsets) {
    return R"({")" + kHashA +
           R"(":[{"url":"u","ranges":[{"chunks":{"start":1,"end":3},"bytes":{"start":10,"end":59})" +
           (offsets.empty() ? "" : R"(,"chunk_offsets":)" + offsets) + "}]}]}";
  };
  auto r = ParseReconstructionJson(Recon(term("[40,60]"), xorbs("[10,35,60]")));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->terms[0].chunk_lengths, (std::vector<uint32_t>{40, 60}));
  EXPECT_EQ(r->xorbs[0].second[0].ranges[0].chunk_offsets, (std::vector<uint64_t>{10, 35, 60}));
  // Without detail the vectors stay empty.
  auto plain = ParseReconstructionJson(Recon(term(""), xorbs("")));
  ASSERT_TRUE(plain.ok());
  EXPECT_TRUE(plain->terms[0].chunk_lengths.empty());
  EXPECT_TRUE(plain->xorbs[0].second[0].ranges[0].chunk_offsets.empty());

  for (const std::string& bad : std::vector<std::string>{
           Recon(term("[100]"), xorbs("")),           // one length for two chunks
           Recon(term("[40,60,0]"), xorbs("")),       // three
           Recon(term("[40,61]"), xorbs("")),         // does not add up
           Recon(term("[-40,140]"), xorbs("")),       // negative
           Recon(term("[40.5,59.5]"), xorbs("")),     // not integers
           Recon(term("[4294967296,0]"), xorbs("")),  // past u32
           Recon(term("\"40,60\""), xorbs("")),       // not an array
           Recon(term("[40,\"60\"]"), xorbs("")),     // not numbers
           Recon(term(""), xorbs("[10,60]")),         // one value short
           Recon(term(""), xorbs("[10,35,50,60]")),   // one too many
           Recon(term(""), xorbs("[11,35,60]")),      // does not start at bytes.start
           Recon(term(""), xorbs("[10,35,59]")),      // does not end past bytes.end
           Recon(term(""), xorbs("[10,10,60]")),      // not ascending
           Recon(term(""), xorbs("[10,70,60]")),      // not ascending
           Recon(term(""), xorbs("{}")),              // not an array
           Recon(term(""), xorbs("[10,-35,60]"))}) {  // negative
    auto p = ParseReconstructionJson(bad);
    ASSERT_FALSE(p.ok()) << bad;
    EXPECT_EQ(p.status().code(), Status::Code::kCorruption) << p.status().ToString();
    EXPECT_NE(p.status().message().find("chunk_"), std::string::npos) << p.status().ToString();
  }
}

TEST(ReconstructionJsonTest, OneXorbSpelledTwiceIsRefused) {
  // Hex digits are case-insensitive: "AB.." and "ab.." name the same xorb, and an answer
  // listing both would give it two sets of fetch entries.
  std::string upper = kHashB;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  ASSERT_NE(upper, kHashB);
  const std::string entry =
      R"([{"url":"u","ranges":[{"chunks":{"start":0,"end":1},"bytes":{"start":0,"end":9}}]}])";
  const std::string once = R"({")" + kHashB + R"(":)" + entry + "}";
  const std::string twice =
      R"({")" + kHashB + R"(":)" + entry + R"(,")" + upper + R"(":)" + entry + "}";
  ASSERT_TRUE(ParseReconstructionJson(Recon("[]", once)).ok());
  auto p = ParseReconstructionJson(Recon("[]", twice));
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), Status::Code::kCorruption);
  EXPECT_NE(p.status().message().find("listed twice"), std::string::npos) << p.status().ToString();
}

TEST(ReconstructionJsonTest, RangesBeyondAnyXorbAreRefused) {
  // The client sizes its buffers by the fetch ranges: no answer may name a byte a xorb (at
  // most 64 MiB serialized) cannot have. Chunk indices are not bounded: the spec sets no
  // limit on a xorb's chunk count.
  auto fetch = [](uint64_t chunk_end, uint64_t byte_end) {
    return R"({")" + kHashA + R"(":[{"url":"u","ranges":[{"chunks":{"start":0,"end":)" +
           std::to_string(chunk_end) + R"(},"bytes":{"start":0,"end":)" + std::to_string(byte_end) +
           "}}]}]}";
  };
  const uint64_t last_byte = (64u << 20) - 1;
  EXPECT_TRUE(ParseReconstructionJson(Recon("[]", fetch(8192, last_byte))).ok());
  EXPECT_TRUE(ParseReconstructionJson(Recon("[]", fetch(100000, 999999))).ok());
  for (const std::string& bad :
       {Recon("[]", fetch(1, last_byte + 1)), Recon("[]", fetch(1, uint64_t{1} << 40))}) {
    auto p = ParseReconstructionJson(bad);
    ASSERT_FALSE(p.ok()) << bad;
    EXPECT_EQ(p.status().code(), Status::Code::kCorruption);
    EXPECT_NE(p.status().message().find("a xorb can"), std::string::npos) << p.status().ToString();
  }
}

}  // namespace
}  // namespace xet
