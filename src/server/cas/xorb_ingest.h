// Accepting an uploaded xorb: validate it completely, store it with its footer, index it.
#pragma once

#include <cstdint>
#include <span>

#include "common/result.h"
#include "format/hash.h"
#include "store/index.h"
#include "store/object_store.h"

namespace xet {

struct XorbIngestResult {
  bool inserted = false;  // false: the xorb already existed (nothing rewritten)
  // This call wrote the stored object, so its chunk data is exactly the body. (An existing
  // object may hold the same chunks encoded differently, e.g. compressed another way.)
  bool stored = false;
  size_t num_chunks = 0;
  uint64_t raw_bytes = 0;
};

// Validates `body` as an upload-form xorb whose hash must equal `claimed_hash` (the body is
// parsed once, each chunk decompressed and hashed once), then — unless the xorb already
// exists — stores it with its XorbObjectInfo footer (random uniqueness nonce) under
// XorbKey(hash) and records it in the index. The xorb becomes visible to `scope` either
// way; an existing xorb is re-verified first, so knowing a hash never grants visibility.
// Errors: InvalidArgument / ResourceExhausted / Corruption (the route answers 400) for a bad
// body or hash mismatch; IoError and others for storage failures (500). Nothing is stored
// or indexed on error.
Result<XorbIngestResult> IngestXorb(const Hash& claimed_hash, std::span<const uint8_t> body,
                                    const Scope& scope, Index& index, ObjectStore& objects);

}  // namespace xet
