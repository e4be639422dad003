// Keyed BLAKE3, the one hash primitive of the Xet protocol, over the official BLAKE3 C
// implementation (SIMD kernels picked at run time).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "format/hash.h"
#include "format/keys.h"

namespace xet {

// Incremental keyed BLAKE3 with a 32-byte output. Not thread-safe; cheap to construct.
class KeyedHasher {
 public:
  explicit KeyedHasher(const uint8_t key[32]);
  explicit KeyedHasher(const keys::Key& key) : KeyedHasher(key.data()) {}
  KeyedHasher(const KeyedHasher&) = default;
  KeyedHasher& operator=(const KeyedHasher&) = default;

  void Update(const void* data, size_t len);
  void Update(std::span<const uint8_t> data) { Update(data.data(), data.size()); }
  // Returns the hash of everything fed so far; the hasher may keep being updated.
  Hash Finalize() const;

 private:
  alignas(64) unsigned char state_[2048];  // blake3_hasher, kept opaque to avoid the C header
};

// keyed BLAKE3(key, data).
Hash KeyedBlake3(const uint8_t key[32], const void* data, size_t len);
inline Hash KeyedBlake3(const keys::Key& key, const void* data, size_t len) {
  return KeyedBlake3(key.data(), data, len);
}

// The chunk hash: keyed BLAKE3 with DATA_KEY over the chunk's bytes.
inline Hash ChunkHash(std::span<const uint8_t> chunk) {
  return KeyedBlake3(keys::kDataKey, chunk.data(), chunk.size());
}

}  // namespace xet
