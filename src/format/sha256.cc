#include "format/sha256.h"

#include <openssl/evp.h>

#include <algorithm>
#include <cstdlib>

namespace xet {

struct Sha256::Ctx {
  EVP_MD_CTX* md = nullptr;
  ~Ctx() { EVP_MD_CTX_free(md); }
};

Sha256::Sha256() : ctx_(std::make_unique<Ctx>()) {
  ctx_->md = EVP_MD_CTX_new();
  // Allocation or initialization failure of a built-in digest means the process cannot
  // work at all; there is no meaningful recovery.
  if (ctx_->md == nullptr || EVP_DigestInit_ex(ctx_->md, EVP_sha256(), nullptr) != 1) {
    std::abort();
  }
}
Sha256::~Sha256() = default;
Sha256::Sha256(Sha256&&) noexcept = default;
Sha256& Sha256::operator=(Sha256&&) noexcept = default;

void Sha256::Update(const void* data, size_t len) {
  if (len > 0) EVP_DigestUpdate(ctx_->md, data, len);
}

Sha256Digest Sha256::Finish() {
  Sha256Digest out{};
  unsigned int len = 0;
  EVP_DigestFinal_ex(ctx_->md, out.data(), &len);
  return out;
}

Sha256Digest Sha256Of(std::span<const uint8_t> data) {
  Sha256 h;
  h.Update(data);
  return h.Finish();
}

std::string Sha256Hex(const Sha256Digest& digest) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string s(64, '\0');
  for (size_t i = 0; i < 32; ++i) {
    s[2 * i] = kHex[digest[i] >> 4];
    s[2 * i + 1] = kHex[digest[i] & 0xF];
  }
  return s;
}

Hash Sha256ToXetOrder(const Sha256Digest& digest) {
  Sha256Digest stored = digest;
  for (size_t g = 0; g < 4; ++g) std::reverse(stored.begin() + 8 * g, stored.begin() + 8 * g + 8);
  return Hash::FromArray(stored);
}

Sha256Digest Sha256FromXetOrder(const Hash& stored) {
  Sha256Digest digest = stored.bytes();
  for (size_t g = 0; g < 4; ++g) std::reverse(digest.begin() + 8 * g, digest.begin() + 8 * g + 8);
  return digest;
}

}  // namespace xet
