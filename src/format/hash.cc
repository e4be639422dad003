#include "format/hash.h"

#include <array>
#include <bit>
#include <random>

static_assert(std::endian::native == std::endian::little,
              "xetstore assumes a little-endian host (all Xet formats are little-endian)");

namespace xet {
namespace {

constexpr char kHexDigits[] = "0123456789abcdef";

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Decodes 64 hex digits into 32 bytes in string order. False on a bad digit or length.
bool DecodeHex(std::string_view hex, uint8_t out[Hash::kSize]) {
  if (hex.size() != 2 * Hash::kSize) return false;
  for (size_t i = 0; i < Hash::kSize; ++i) {
    int hi = HexValue(hex[2 * i]);
    int lo = HexValue(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return false;
    out[i] = static_cast<uint8_t>(hi << 4 | lo);
  }
  return true;
}

}  // namespace

std::optional<Hash> Hash::FromHex(std::string_view xet_hex) {
  uint8_t decoded[kSize];
  if (!DecodeHex(xet_hex, decoded)) return std::nullopt;
  Hash h;
  // Each 8-byte group was printed most-significant byte first: reverse it back.
  for (int g = 0; g < 4; ++g) {
    for (int b = 0; b < 8; ++b) h.bytes_[8 * g + b] = decoded[8 * g + 7 - b];
  }
  return h;
}

std::optional<Hash> Hash::FromRawHex(std::string_view raw_hex) {
  Hash h;
  if (!DecodeHex(raw_hex, h.bytes_.data())) return std::nullopt;
  return h;
}

void Hash::ToHex(char* out) const {
  for (int g = 0; g < 4; ++g) {
    for (int b = 0; b < 8; ++b) {
      uint8_t byte = bytes_[8 * g + 7 - b];
      out[16 * g + 2 * b] = kHexDigits[byte >> 4];
      out[16 * g + 2 * b + 1] = kHexDigits[byte & 0xF];
    }
  }
}

std::string Hash::ToHex() const {
  std::string s(2 * kSize, '\0');
  ToHex(s.data());
  return s;
}

std::string Hash::ToRawHex() const {
  std::string s(2 * kSize, '\0');
  for (size_t i = 0; i < kSize; ++i) {
    s[2 * i] = kHexDigits[bytes_[i] >> 4];
    s[2 * i + 1] = kHexDigits[bytes_[i] & 0xF];
  }
  return s;
}

bool Hash::IsZero() const { return (Word(0) | Word(1) | Word(2) | Word(3)) == 0; }

bool Hash::IsAllOnes() const { return (Word(0) & Word(1) & Word(2) & Word(3)) == ~uint64_t{0}; }

namespace {

// The process's hashing key, drawn on first use; immutable afterwards.
const std::array<uint64_t, 2>& HashTableKey() {
  static const std::array<uint64_t, 2> key = [] {
    std::random_device rd;
    return std::array<uint64_t, 2>{(uint64_t{rd()} << 32) | rd(), (uint64_t{rd()} << 32) | rd()};
  }();
  return key;
}

// splitmix64's finalizer: every input bit reaches every output bit.
uint64_t Mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

}  // namespace

size_t HashHasher::operator()(const Hash& h) const noexcept {
  const auto& key = HashTableKey();
  uint64_t x = Mix(h.Word(0) ^ key[0]);
  x = Mix(x ^ h.Word(1) ^ key[1]);
  x = Mix(x ^ h.Word(2));
  return static_cast<size_t>(Mix(x ^ h.Word(3)));
}

}  // namespace xet
