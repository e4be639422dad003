// Small wrappers over OpenSSL used by the API layer: secure random bytes, HMAC-SHA256,
// constant-time comparison and base64url (no padding).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace xet {

using Hmac256 = std::array<uint8_t, 32>;

// n cryptographically secure random bytes. Aborts if the system RNG fails (nothing safe
// can be done without it).
std::vector<uint8_t> SecureRandomBytes(size_t n);
// Lowercase hex of n secure random bytes (2n characters).
std::string SecureRandomHex(size_t n);

Hmac256 HmacSha256(std::span<const uint8_t> key, std::string_view message);

// Constant-time equality of two byte strings (false when the lengths differ).
bool ConstantTimeEqual(std::span<const uint8_t> a, std::span<const uint8_t> b);

std::string Base64UrlEncode(std::span<const uint8_t> bytes);
// Unpadded base64url. Decode returns nullopt on characters outside the alphabet, an impossible
// length, or a non-canonical text (unused trailing bits set, padding present): every byte
// string has exactly one accepted text, so a changed token never decodes to the same bytes.
std::optional<std::vector<uint8_t>> Base64UrlDecode(std::string_view text);

inline std::span<const uint8_t> AsBytes(std::string_view s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

}  // namespace xet
