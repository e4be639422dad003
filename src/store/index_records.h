// The records the Index stores: what the CAS needs to validate uploads, answer
// reconstruction and dedup queries, and authorize requests.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "format/hash.h"

namespace xet {

// One chunk of a stored xorb: its hash and where it ends, serialized (header included) and
// uncompressed. Chunk i occupies serialized bytes [compressed_end[i-1], compressed_end[i])
// and raw bytes [uncompressed_end[i-1], uncompressed_end[i]) (with [-1] = 0).
struct XorbChunkRow {
  Hash hash;
  uint32_t compressed_end = 0;
  uint32_t uncompressed_end = 0;
  friend bool operator==(const XorbChunkRow&, const XorbChunkRow&) = default;
};

struct XorbRecord {
  Hash hash;
  uint64_t object_size = 0;  // bytes of the stored object (chunks + footer)
  std::vector<XorbChunkRow> chunks;
  friend bool operator==(const XorbRecord&, const XorbRecord&) = default;
};

// One reconstruction term of a file: chunks [chunk_start, chunk_end) of a xorb.
struct FileTerm {
  Hash xorb_hash;
  uint32_t chunk_start = 0;
  uint32_t chunk_end = 0;
  uint32_t unpacked_bytes = 0;
  friend bool operator==(const FileTerm&, const FileTerm&) = default;
};

struct FileRecord {
  Hash file_hash;
  uint64_t size = 0;            // sum of the terms' unpacked bytes
  std::vector<FileTerm> terms;  // stored as one compact blob, read whole
  std::optional<Hash> sha256;   // metadata-extension value (Xet byte order), if given
  friend bool operator==(const FileRecord&, const FileRecord&) = default;
};

// A scope names what a token may see and write: today a namespace or repository
// ("ns/name"); buckets slot in as scopes of their own. Files and xorbs are visible to the
// scopes that registered them.
using Scope = std::string;

enum class Permission : uint8_t { kRead = 1, kWrite = 2, kAdmin = 3 };

// A user token as stored: only a hash of the secret is kept.
struct TokenRecord {
  std::string id;    // public identifier, e.g. for `token list` / `token revoke`
  std::string name;  // human label
  Hash secret_hash;  // SHA-256 of the token string
  Permission permission = Permission::kRead;
  std::vector<Scope> scopes;  // empty = every scope (admin tokens)
  int64_t created_at = 0;     // unix seconds
  int64_t expires_at = 0;     // 0 = never
  bool revoked = false;
  friend bool operator==(const TokenRecord&, const TokenRecord&) = default;
};

}  // namespace xet
