// Deterministic Index records for the Index tests (tests/store/index_contract_test.cc and the
// backends' own tests): hashes, xorbs, files and tokens built from small integers, so a test
// can rebuild the record it expects independently of what the index returns.
#pragma once

#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <string>
#include <vector>

#include "format/hash.h"
#include "store/index_records.h"

namespace xet::testing::index_test {

// A deterministic hash from (tag, n). The last word is chosen so dedup eligibility is
// controlled by `eligible`.
inline Hash H(uint64_t tag, uint64_t n, bool eligible = false) {
  Hash h;
  uint64_t w[4] = {tag * 0x9E3779B97F4A7C15ULL + n, n ^ 0xABCDEF, tag + 7 * n + 1,
                   eligible ? (n + 1) * 1024 : (n + 1) * 1024 + 1};
  std::memcpy(h.mutable_data(), w, 32);
  return h;
}

inline XorbRecord MakeXorb(uint64_t n, size_t chunks = 8) {
  XorbRecord x;
  x.hash = H(1, n);
  uint32_t c = 0, u = 0;
  for (size_t i = 0; i < chunks; ++i) {
    c += 1000 + static_cast<uint32_t>(i);
    u += 2000 + static_cast<uint32_t>(i);
    // Chunk 0 is always dedup-eligible; make chunk 3 eligible by hash too.
    x.chunks.push_back({H(2, n * 1000 + i, i == 3), c, u});
  }
  x.object_size = c + 100;
  return x;
}

inline FileRecord MakeFile(uint64_t n, const std::vector<Hash>& xorbs, size_t terms = 3,
                           bool with_sha = true) {
  FileRecord f;
  f.file_hash = H(3, n);
  for (size_t i = 0; i < terms; ++i) {
    FileTerm t{xorbs[i % xorbs.size()], static_cast<uint32_t>(i), static_cast<uint32_t>(i + 2),
               static_cast<uint32_t>(4000 + i)};
    f.size += t.unpacked_bytes;
    f.terms.push_back(t);
  }
  if (with_sha) f.sha256 = H(4, n);
  return f;
}

inline TokenRecord MakeToken(uint64_t n, std::vector<Scope> scopes = {"ns/a"}) {
  TokenRecord t;
  t.id = "tok" + std::to_string(n);
  t.name = "token #" + std::to_string(n);
  t.secret_hash = H(5, n);
  t.permission = Permission::kWrite;
  t.scopes = std::move(scopes);
  t.created_at = 1700000000 + static_cast<int64_t>(n);
  t.expires_at = 0;
  return t;
}

inline std::vector<Scope> S(std::initializer_list<const char*> s) { return {s.begin(), s.end()}; }

}  // namespace xet::testing::index_test
