// Base64url without padding (RFC 4648 §5): the test vectors, and one accepted text per byte
// string (§3.5), which keeps a changed CAS token from decoding to the same MAC.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "server/auth/crypto_util.h"

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

}  // namespace
}  // namespace xet
