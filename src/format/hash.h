// Hash: the 32-byte value every Xet hash is (chunk, xorb, file, verification hashes),
// and its string form.
//
// The Xet string form is NOT the plain hex of the raw bytes: the 32 bytes are read as
// four little-endian u64 words, each printed as 16 lowercase hex digits.
#pragma once

#include <array>
#include <compare>
#include <cstdint>
#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace xet {

class Hash {
 public:
  static constexpr size_t kSize = 32;

  constexpr Hash() = default;  // all zeros
  static Hash FromBytes(const uint8_t* raw) {
    Hash h;
    std::memcpy(h.bytes_.data(), raw, kSize);
    return h;
  }
  static Hash FromArray(const std::array<uint8_t, kSize>& raw) { return FromBytes(raw.data()); }

  // Parses the Xet string form (64 hex digits, either case). nullopt on any other input.
  static std::optional<Hash> FromHex(std::string_view xet_hex);
  // Parses the plain hex of the raw bytes (used by a few test vectors). nullopt on bad input.
  static std::optional<Hash> FromRawHex(std::string_view raw_hex);

  // The Xet string form: 64 lowercase hex digits.
  std::string ToHex() const;
  // Writes the Xet string form into out[0..63] (no terminator). Requires 64 writable bytes.
  void ToHex(char* out) const;
  // Plain hex of the raw bytes.
  std::string ToRawHex() const;

  const uint8_t* data() const { return bytes_.data(); }
  uint8_t* mutable_data() { return bytes_.data(); }
  const std::array<uint8_t, kSize>& bytes() const { return bytes_; }

  // The i-th 8-byte group as a little-endian u64 (i in [0,4)).
  uint64_t Word(int i) const {
    uint64_t w;
    std::memcpy(&w, bytes_.data() + 8 * i, 8);
    return w;  // the project targets little-endian hosts only (checked in hash.cc)
  }

  bool IsZero() const;
  // True when all 32 bytes are 0xFF: the shard bookend marker.
  bool IsAllOnes() const;

  friend bool operator==(const Hash&, const Hash&) = default;
  friend auto operator<=>(const Hash&, const Hash&) = default;

 private:
  std::array<uint8_t, kSize> bytes_{};
};

// The hash-table hash of a Hash: all four words mixed with a key drawn at random once per
// process. Content hashes are chosen by whoever uploads the content, who could otherwise
// grind them (cheaply: a bucket index is a few bits) into one bucket of a server's tables.
struct HashHasher {
  size_t operator()(const Hash& h) const noexcept;
};

}  // namespace xet

template <>
struct std::hash<xet::Hash> {
  size_t operator()(const xet::Hash& h) const noexcept { return xet::HashHasher{}(h); }
};
