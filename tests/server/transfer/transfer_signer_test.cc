#include "server/transfer/transfer_signer.h"

#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <string>
#include <vector>

#include "protocol/byte_range.h"

namespace xet {
namespace {

const std::string kSecret = "0123456789abcdef0123456789abcdef-test-secret";
constexpr int64_t kExpires = 1700000000;

Hash TestHash(uint8_t seed) {
  std::array<uint8_t, 32> raw{};
  for (size_t i = 0; i < raw.size(); ++i) raw[i] = static_cast<uint8_t>(seed + 7 * i);
  return Hash::FromArray(raw);
}

// Decodes the few escapes the signer writes.
std::string UrlDecode(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size()) {
      out.push_back(static_cast<char>(std::stoi(std::string(s.substr(i + 1, 2)), nullptr, 16)));
      i += 2;
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

struct ParsedUrl {
  std::string path;
  std::string signed_range, expires, signature;
  TransferQuery query() const { return {signed_range, expires, signature}; }
};

ParsedUrl ParseUrl(const std::string& url, std::string_view base) {
  ParsedUrl p;
  EXPECT_EQ(url.substr(0, base.size()), base);
  size_t q = url.find('?');
  p.path = url.substr(base.size(), q - base.size());
  std::string query = url.substr(q + 1);
  size_t pos = 0;
  while (pos <= query.size()) {
    size_t amp = query.find('&', pos);
    if (amp == std::string::npos) amp = query.size();
    std::string kv = query.substr(pos, amp - pos);
    size_t eq = kv.find('=');
    std::string k = kv.substr(0, eq), v = UrlDecode(kv.substr(eq + 1));
    if (k == "X-Xet-Signed-Range") p.signed_range = v;
    if (k == "Expires") p.expires = v;
    if (k == "Signature") p.signature = v;
    pos = amp + 1;
  }
  return p;
}

TransferSigner MakeSigner(const std::string& secret = kSecret) {
  auto s = TransferSigner::Create(secret);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return std::move(s).value();
}

TEST(TransferSignerTest, RejectsShortSecret) {
  EXPECT_FALSE(TransferSigner::Create(std::string(31, 'k')).ok());
  EXPECT_TRUE(TransferSigner::Create(std::string(32, 'k')).ok());
}

TEST(TransferSignerTest, UrlFormatAndIndependentHmac) {
  TransferSigner signer = MakeSigner();
  Hash h = TestHash(1);
  std::vector<ByteRange> ranges = {{0, 1023}, {2048, 4095}};
  auto url = signer.SignUrl("http://127.0.0.1:8080/", h, ranges, kExpires);
  ASSERT_TRUE(url.ok());
  std::string expected_prefix = "http://127.0.0.1:8080/v1/transfer/xorb/default/" + h.ToHex() +
                                "?X-Xet-Signed-Range=bytes%3D0-1023%2C2048-4095&Expires=1700000000"
                                "&Signature=";
  ASSERT_EQ(url->substr(0, expected_prefix.size()), expected_prefix);
  std::string sig = url->substr(expected_prefix.size());
  ASSERT_EQ(sig.size(), 64u);

  // The documented message, HMAC'd with OpenSSL's one-shot HMAC.
  std::string message = "xetstore-transfer-v1\n";
  message.append(reinterpret_cast<const char*>(h.data()), 32);
  message += "bytes=0-1023,2048-4095\n1700000000";
  unsigned char mac[32];
  unsigned int len = 0;
  HMAC(EVP_sha256(), kSecret.data(), static_cast<int>(kSecret.size()),
       reinterpret_cast<const unsigned char*>(message.data()), message.size(), mac, &len);
  std::string hex;
  static const char* digits = "0123456789abcdef";
  for (unsigned char b : mac) {
    hex.push_back(digits[b >> 4]);
    hex.push_back(digits[b & 15]);
  }
  EXPECT_EQ(sig, hex);
}

TEST(TransferSignerTest, RoundTrip) {
  TransferSigner signer = MakeSigner();
  Hash h = TestHash(2);
  std::vector<ByteRange> ranges = {{0, 50468}, {60000, 70000}, {90000, 90000}};
  auto url = signer.SignUrl("https://cas.example", h, ranges, kExpires);
  ASSERT_TRUE(url.ok());
  ParsedUrl p = ParseUrl(*url, "https://cas.example");
  EXPECT_EQ(p.path, "/v1/transfer/xorb/default/" + h.ToHex());
  TransferVerification v = signer.Verify(h, p.query(), kExpires - 1);
  ASSERT_TRUE(v.ok()) << TransferAuthErrorName(v.error);
  EXPECT_EQ(v.ranges, ranges);
}

TEST(TransferSignerTest, ReusedUrlSignerSignsEachUrlCorrectly) {
  TransferSigner signer = MakeSigner();
  auto url_signer = signer.NewUrlSigner("http://h", kExpires);
  ASSERT_TRUE(url_signer.ok());
  for (uint8_t i = 0; i < 20; ++i) {
    Hash h = TestHash(i);
    std::vector<ByteRange> ranges = {{i * 100u, i * 100u + 99u}};
    std::string url = url_signer->Url(h, ranges);
    EXPECT_EQ(url, signer.SignUrl("http://h", h, ranges, kExpires).value());
    TransferVerification v = signer.Verify(h, ParseUrl(url, "http://h").query(), 0);
    ASSERT_TRUE(v.ok());
    EXPECT_EQ(v.ranges, ranges);
  }
}

TEST(TransferSignerTest, TamperingIsRejected) {
  TransferSigner signer = MakeSigner();
  Hash h = TestHash(3);
  std::vector<ByteRange> ranges = {{0, 1023}, {2048, 4095}};
  ParsedUrl p = ParseUrl(signer.SignUrl("http://h", h, ranges, kExpires).value(), "http://h");
  ASSERT_TRUE(signer.Verify(h, p.query(), 0).ok());

  // Another xorb.
  EXPECT_EQ(signer.Verify(TestHash(4), p.query(), 0).error, TransferAuthError::kBadSignature);
  // Another range set: widened, extra range, re-ordered, single range.
  for (const char* r : {"bytes=0-1024,2048-4095", "bytes=0-1023,2048-4095,5000-6000",
                        "bytes=2048-4095,0-1023", "bytes=0-1023", "bytes=0-4095"}) {
    ParsedUrl t = p;
    t.signed_range = r;
    EXPECT_EQ(signer.Verify(h, t.query(), 0).error, TransferAuthError::kBadSignature) << r;
  }
  // A later expiry.
  ParsedUrl t = p;
  t.expires = std::to_string(kExpires + 1);
  EXPECT_EQ(signer.Verify(h, t.query(), 0).error, TransferAuthError::kBadSignature);
  // A flipped signature digit.
  t = p;
  t.signature[10] = t.signature[10] == '0' ? '1' : '0';
  EXPECT_EQ(signer.Verify(h, t.query(), 0).error, TransferAuthError::kBadSignature);
  // Another secret.
  TransferSigner other = MakeSigner(kSecret + "x");
  EXPECT_EQ(other.Verify(h, p.query(), 0).error, TransferAuthError::kBadSignature);
}

TEST(TransferSignerTest, Expiry) {
  TransferSigner signer = MakeSigner();
  Hash h = TestHash(5);
  std::vector<ByteRange> ranges = {{10, 20}};
  ParsedUrl p = ParseUrl(signer.SignUrl("http://h", h, ranges, kExpires).value(), "http://h");
  EXPECT_TRUE(signer.Verify(h, p.query(), kExpires - 1).ok());
  EXPECT_EQ(signer.Verify(h, p.query(), kExpires).error, TransferAuthError::kExpired);
  EXPECT_EQ(signer.Verify(h, p.query(), kExpires + 3600).error, TransferAuthError::kExpired);
}

TEST(TransferSignerTest, MalformedQueries) {
  TransferSigner signer = MakeSigner();
  Hash h = TestHash(6);
  std::vector<ByteRange> ranges = {{10, 20}};
  ParsedUrl p = ParseUrl(signer.SignUrl("http://h", h, ranges, kExpires).value(), "http://h");
  auto check = [&](ParsedUrl t, const char* what) {
    EXPECT_EQ(signer.Verify(h, t.query(), 0).error, TransferAuthError::kMalformed) << what;
  };
  ParsedUrl t = p;
  t.signed_range.clear();
  check(t, "no range");
  t = p;
  t.signed_range = "bytes=10-";
  check(t, "open range");
  t = p;
  t.signed_range = "bytes=10-20, 30-40";
  check(t, "whitespace");
  t = p;
  t.expires.clear();
  check(t, "no expiry");
  t = p;
  t.expires = "0" + p.expires;
  check(t, "leading zero");
  t = p;
  t.expires = "-1";
  check(t, "negative");
  t = p;
  t.expires = "99999999999999999999999";
  check(t, "overflow");
  t = p;
  t.signature = p.signature.substr(1);
  check(t, "short signature");
  t = p;
  for (char& c : t.signature) c = static_cast<char>(std::toupper(c));
  if (t.signature != p.signature) check(t, "upper-case signature");
  t = p;
  t.signature[0] = 'g';
  check(t, "non-hex signature");
}

TEST(TransferSignerTest, BaseUrlValidation) {
  TransferSigner signer = MakeSigner();
  EXPECT_FALSE(signer.NewUrlSigner("", kExpires).ok());
  EXPECT_FALSE(signer.NewUrlSigner("http://a\"b", kExpires).ok());
  EXPECT_FALSE(signer.NewUrlSigner("http://a b", kExpires).ok());
  EXPECT_FALSE(signer.NewUrlSigner("http://a?x=1", kExpires).ok());
  auto s = signer.NewUrlSigner("http://a/prefix//", kExpires);
  ASSERT_TRUE(s.ok());
  std::vector<ByteRange> r = {{0, 0}};
  EXPECT_EQ(s->Url(Hash(), r).rfind("http://a/prefix/v1/transfer/xorb/default/", 0), 0u);
}

// ---- byte ranges ----

}  // namespace
}  // namespace xet
