// VisibleXorbCache: the positive answers of Index::XorbsVisible a node has seen, so that
// a shard upload referencing xorbs its uploader has referenced before skips that lookup
// (shard_ingest.cc). An answer depends on the uploader's read scopes, so an entry is keyed
// by the xorb and the exact scope list it was answered for.
//
// Entries go stale: deleting or renaming a bucket (on any node) or gc deleting a xorb takes
// visibility away, and nothing here notices. That is safe because nothing trusts this cache
// alone: Index::CommitShard checks visibility again in the transaction that registers the
// shard (ShardCommit::visible_scopes), and a shard whose validation fails is checked against
// the index before its error is reported. A stale entry costs at most a stored shard object
// that is never registered (fsck reports it).
//
// Memory: at most `max_entries` entries of about kEntryBytes each. Thread-safe.
#pragma once

#include <cstddef>
#include <memory>
#include <span>

#include "format/hash.h"
#include "server/cache/record_lru.h"
#include "store/index_records.h"

namespace xet {

class VisibleXorbCache {
 public:
  // What one entry costs: its key and the LRU's list and map nodes.
  static constexpr size_t kEntryBytes = 128;

  // 0 disables the cache: Insert keeps nothing and Contains always misses.
  explicit VisibleXorbCache(size_t max_entries);

  // Whether `xorb` was recorded as visible to `scopes` (the same list, in the same order).
  bool Contains(const Hash& xorb, std::span<const Scope> scopes);

  // Records that the index answered `xorb` visible to `scopes`, evicting the least recently
  // used entries beyond the capacity.
  void Insert(const Hash& xorb, std::span<const Scope> scopes);

  size_t size() const { return entries_.size(); }

 private:
  // SHA-256 of the xorb hash and each scope followed by '\n' (a scope holds no '\n').
  static Hash KeyOf(const Hash& xorb, std::span<const Scope> scopes);

  RecordLru<bool> entries_;
  const std::shared_ptr<const bool> present_ = std::make_shared<const bool>(true);
};

}  // namespace xet
