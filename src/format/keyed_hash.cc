#include "format/keyed_hash.h"

#include <blake3.h>

namespace xet {

static_assert(sizeof(blake3_hasher) <= 2048, "KeyedHasher state buffer too small");
static_assert(alignof(blake3_hasher) <= 64, "KeyedHasher state buffer misaligned");

namespace {
blake3_hasher* AsHasher(unsigned char* p) { return reinterpret_cast<blake3_hasher*>(p); }
const blake3_hasher* AsHasher(const unsigned char* p) {
  return reinterpret_cast<const blake3_hasher*>(p);
}
}  // namespace

KeyedHasher::KeyedHasher(const uint8_t key[32]) { blake3_hasher_init_keyed(AsHasher(state_), key); }

void KeyedHasher::Update(const void* data, size_t len) {
  blake3_hasher_update(AsHasher(state_), data, len);
}

Hash KeyedHasher::Finalize() const {
  Hash out;
  blake3_hasher_finalize(AsHasher(state_), out.mutable_data(), Hash::kSize);
  return out;
}

Hash KeyedBlake3(const uint8_t key[32], const void* data, size_t len) {
  KeyedHasher h(key);
  h.Update(data, len);
  return h.Finalize();
}

}  // namespace xet
