// CachedObjectStore: a node's bounded local-disk copy of the objects it reads from a slower,
// shared object store (an S3 bucket), so hot xorbs are served from the node's own disk
// (with sendfile(2)) instead of being fetched from the remote store again.
//
// Reads:
//   - The first OpenFile or ReadRange of an object copies it whole into the cache, then
//     serves from the copy; later reads of it never reach the remote store. One copy per
//     object runs at a time: concurrent readers of the object wait for it.
//   - Served from the remote store directly (ReadRange) or answered Unimplemented (OpenFile:
//     the caller then streams ranges through ReadRange): an object larger than
//     max_object_bytes, a read that arrives while max_fills copies run already, and a copy
//     that failed (remote error, full or broken cache disk: counted, and no copy is tried
//     for the next 5 seconds; the error itself is not returned unless the remote store
//     answered NotFound).
//   - Size answers from the copy when there is one; Get never copies.
// Writes: Put and PutParts go to the remote store only. Delete removes the remote object,
// then the copy; a copy that was running meanwhile is discarded, not kept. List lists the
// remote store.
//
// Staleness: none by construction. Keys are content hashes, so a key's bytes never change
// and no copy ever needs invalidating, across nodes either. An object another process (gc)
// deletes from the remote store stays in this node's cache until evicted; it is served
// only to a request naming it, which no reconstruction does once gc has deleted it.
//
// Bounds: the copies, those in flight included, take at most capacity_bytes of disk: a copy
// reserves its size before it starts, evicting least recently used copies to make room (a
// copy that cannot fit is not made). Each copy in flight holds one 4 MiB buffer.
// Crash safety: copies are written as LocalObjectStore objects (temporary file, fsync,
// link), so a crash leaves whole copies or none. Opening indexes the copies already in the
// directory, least recently used first by file mtime (a read refreshes it at most once per
// touch_interval_s), and evicts down to the capacity. Thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "common/result.h"
#include "store/object_store.h"

namespace xet {

struct ObjectCacheOptions {
  std::string dir;              // the cache's directory (created if missing)
  uint64_t capacity_bytes = 0;  // > 0
  // Larger objects are never copied; 0 means capacity_bytes / 4 (one object must not
  // flush the rest).
  uint64_t max_object_bytes = 0;
  size_t max_fills = 4;  // copies in flight at once (> 0)
  int64_t touch_interval_s = 600;
};

// Counts since the store was opened, and what the cache holds now.
struct ObjectCacheStats {
  uint64_t hits = 0;        // reads served from a copy
  uint64_t fills = 0;       // objects copied in
  uint64_t fill_bytes = 0;  // bytes copied in
  uint64_t bypasses = 0;    // reads sent to the remote store (too large, busy, failed copy)
  uint64_t fill_errors = 0;
  uint64_t evictions = 0;
  uint64_t entries = 0;
  uint64_t bytes = 0;
};

class ObjectCache {
 public:
  virtual ~ObjectCache() = default;
  virtual ObjectCacheStats Stats() const = 0;
};

// The cache over `remote`. InvalidArgument for options out of range; the errors of creating
// or reading `options.dir`.
Result<std::unique_ptr<ObjectStore>> OpenCachedObjectStore(std::unique_ptr<ObjectStore> remote,
                                                           const ObjectCacheOptions& options);

// The cache's statistics, if `store` was opened by OpenCachedObjectStore; else nullptr.
const ObjectCache* AsObjectCache(const ObjectStore& store);

}  // namespace xet
