// A CAS token is accepted only exactly as minted: any one-character change is refused, which
// needs base64url decoding to accept a single text per byte string (RFC 4648 §3.5).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "server/auth/crypto_util.h"
#include "server/auth/token_service.h"
#include "support/temp_dir.h"

namespace xet {
namespace {

constexpr std::string_view kAlphabet =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

std::string Text(const std::optional<std::vector<uint8_t>>& bytes) {
  return bytes ? std::string(bytes->begin(), bytes->end()) : "<refused>";
}

TEST(Base64UrlTest, DecodesTheRfc4648Vectors) {
  // RFC 4648 §10, with the padding removed as base64url without padding does.
  EXPECT_EQ(Text(Base64UrlDecode("")), "");
  EXPECT_EQ(Text(Base64UrlDecode("Zg")), "f");
  EXPECT_EQ(Text(Base64UrlDecode("Zm8")), "fo");
  EXPECT_EQ(Text(Base64UrlDecode("Zm9v")), "foo");
  EXPECT_EQ(Text(Base64UrlDecode("Zm9vYg")), "foob");
  EXPECT_EQ(Text(Base64UrlDecode("Zm9vYmE")), "fooba");
  EXPECT_EQ(Text(Base64UrlDecode("Zm9vYmFy")), "foobar");
  EXPECT_EQ(Base64UrlEncode(AsBytes("foobar")), "Zm9vYmFy");
  // The URL-safe characters: 0xfb 0xff is "+/8" in standard base64.
  EXPECT_EQ(Base64UrlEncode(std::vector<uint8_t>{0xfb, 0xff}), "-_8");
  EXPECT_EQ(Text(Base64UrlDecode("-_8")), "\xfb\xff");
}

TEST(Base64UrlTest, RefusesNonCanonicalAndMalformedTexts) {
  EXPECT_FALSE(Base64UrlDecode("Zh"));      // "f" with an unused low bit set
  EXPECT_FALSE(Base64UrlDecode("Zm9"));     // "fo" with unused low bits set
  EXPECT_FALSE(Base64UrlDecode("Zg=="));    // padding
  EXPECT_FALSE(Base64UrlDecode("Z"));       // impossible length
  EXPECT_FALSE(Base64UrlDecode("Zm+v"));    // standard alphabet, not URL-safe
  EXPECT_FALSE(Base64UrlDecode("Zm9v\n"));  // whitespace
}

TEST(Base64UrlTest, EveryLengthRoundTripsAndEveryOtherLastCharacterIsRefused) {
  for (size_t n = 0; n <= 66; ++n) {
    std::vector<uint8_t> bytes(n);
    for (size_t i = 0; i < n; ++i) bytes[i] = static_cast<uint8_t>(i * 37 + n);
    const std::string text = Base64UrlEncode(bytes);
    const auto back = Base64UrlDecode(text);
    ASSERT_TRUE(back) << n;
    EXPECT_EQ(*back, bytes) << n;
    if (text.empty()) continue;
    for (char c : kAlphabet) {
      if (c == text.back()) continue;
      std::string other = text;
      other.back() = c;
      const auto decoded = Base64UrlDecode(other);
      EXPECT_TRUE(!decoded || *decoded != bytes) << n << " " << other;
    }
  }
}

class CasTokenTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto index = OpenSqliteIndex(dir_.path() + "/index.sqlite");
    ASSERT_TRUE(index.ok()) << index.status().ToString();
    index_ = std::move(*index);
    tokens_ = std::make_unique<TokenService>(
        *index_, secret_, [] { return kNow; }, 10);
    auto user = tokens_->CreateUserToken("t", Permission::kWrite, {"ns/b"}, 0);
    ASSERT_TRUE(user.ok()) << user.status().ToString();
    user_id_ = user->record.id;
  }

  static constexpr int64_t kNow = 1'700'000'000;
  testing::TempDir dir_;
  std::vector<uint8_t> secret_ = std::vector<uint8_t>(32, 9);
  std::unique_ptr<Index> index_;
  std::unique_ptr<TokenService> tokens_;
  std::string user_id_;
};

TEST_F(CasTokenTest, EveryOneCharacterChangeIsRefused) {
  // Every position of one token; the end of the MAC (where base64 has unused bits) of several
  // more, so that MACs ending in many different characters are covered.
  for (int i = 0; i < 32; ++i) {
    const std::string cas =
        tokens_->MintCasToken(user_id_, Permission::kWrite, "ns/b", kNow + 3600 + i);
    ASSERT_TRUE(tokens_->AuthenticateToken(cas).ok()) << cas;
    for (size_t pos = i == 0 ? 0 : cas.size() - 3; pos < cas.size(); ++pos) {
      for (char c : std::string(kAlphabet) + ".") {
        if (c == cas[pos]) continue;
        std::string changed = cas;
        changed[pos] = c;
        EXPECT_FALSE(tokens_->AuthenticateToken(changed).ok()) << cas << " -> " << changed;
      }
    }
    EXPECT_FALSE(tokens_->AuthenticateToken(cas + "A").ok());
    EXPECT_FALSE(tokens_->AuthenticateToken(cas.substr(0, cas.size() - 1)).ok());
  }
}

}  // namespace
}  // namespace xet
