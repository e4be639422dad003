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

}  // namespace
}  // namespace xet
