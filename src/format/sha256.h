// SHA-256 (OpenSSL) and the Xet byte order used to store it in a shard's metadata
// extension.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "format/hash.h"

namespace xet {

using Sha256Digest = std::array<uint8_t, 32>;

// Incremental SHA-256. Not thread-safe. Owns an OpenSSL digest context (RAII).
class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;
  Sha256(Sha256&&) noexcept;
  Sha256& operator=(Sha256&&) noexcept;

  void Update(const void* data, size_t len);
  void Update(std::span<const uint8_t> data) { Update(data.data(), data.size()); }
  // Returns the digest of everything fed; the object must not be updated afterwards.
  Sha256Digest Finish();

 private:
  struct Ctx;
  std::unique_ptr<Ctx> ctx_;
};

Sha256Digest Sha256Of(std::span<const uint8_t> data);

// Lowercase hex of the digest in standard order (what `sha256sum` prints).
std::string Sha256Hex(const Sha256Digest& digest);

// The metadata extension stores the digest so that the Xet hash-string conversion prints
// the usual SHA-256 hex: each 8-byte group of the digest is reversed.
Hash Sha256ToXetOrder(const Sha256Digest& digest);
Sha256Digest Sha256FromXetOrder(const Hash& stored);

}  // namespace xet
