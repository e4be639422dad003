#include "server/auth/crypto_util.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <cstdlib>

namespace xet {

std::vector<uint8_t> SecureRandomBytes(size_t n) {
  std::vector<uint8_t> out(n);
  if (n > 0 && RAND_bytes(out.data(), static_cast<int>(n)) != 1) std::abort();
  return out;
}

std::string SecureRandomHex(size_t n) {
  static constexpr char kHex[] = "0123456789abcdef";
  const auto bytes = SecureRandomBytes(n);
  std::string s;
  s.reserve(2 * n);
  for (uint8_t b : bytes) {
    s.push_back(kHex[b >> 4]);
    s.push_back(kHex[b & 0xF]);
  }
  return s;
}

Hmac256 HmacSha256(std::span<const uint8_t> key, std::string_view message) {
  Hmac256 out{};
  unsigned int len = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(message.data()), message.size(), out.data(), &len);
  return out;
}

bool ConstantTimeEqual(std::span<const uint8_t> a, std::span<const uint8_t> b) {
  return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

std::string Base64UrlEncode(std::span<const uint8_t> bytes) {
  std::string out(4 * ((bytes.size() + 2) / 3) + 1, '\0');
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()), bytes.data(),
                                static_cast<int>(bytes.size()));
  out.resize(static_cast<size_t>(n));
  while (!out.empty() && out.back() == '=') out.pop_back();
  for (char& c : out) {
    if (c == '+') c = '-';
    if (c == '/') c = '_';
  }
  return out;
}

std::optional<std::vector<uint8_t>> Base64UrlDecode(std::string_view text) {
  if (text.size() % 4 == 1) return std::nullopt;
  std::string std_b64(text);
  for (char& c : std_b64) {
    if (c == '-') {
      c = '+';
    } else if (c == '_') {
      c = '/';
    } else if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))) {
      return std::nullopt;
    }
  }
  const size_t pad = (4 - std_b64.size() % 4) % 4;
  std_b64.append(pad, '=');
  std::vector<uint8_t> out(3 * std_b64.size() / 4 + 1);
  const int n = EVP_DecodeBlock(out.data(), reinterpret_cast<const unsigned char*>(std_b64.data()),
                                static_cast<int>(std_b64.size()));
  if (n < 0) return std::nullopt;
  out.resize(static_cast<size_t>(n) - pad);  // EVP_DecodeBlock counts padding as zero bytes
  // One text per byte string: a last character whose unused low bits are set decodes to the
  // same bytes as the canonical one, which would let a token be altered and still verify.
  if (Base64UrlEncode(out) != text) return std::nullopt;
  return out;
}

}  // namespace xet
