// Row writes the SqliteIndex sources share (sqlite_index.cc's PutXorb and CommitShard, and
// sqlite_migration.cc's imports), each run inside the caller's write transaction on the
// writer connection.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "common/result.h"
#include "store/index_records.h"
#include "store/sqlite/sqlite_db.h"

namespace xet {

// Unavailable when `key`'s object is pending deletion by gc (index.h, "operator tools").
Status RefusePendingDeletion(SqliteDb& db, const std::string& key);

// Raises the stamp of xorb `h` to `now_ms`; false if the xorb is not in the index.
Result<bool> StampXorb(SqliteDb& db, const Hash& h, int64_t now_ms);

// Makes xorb `xorb` visible to `scope`; InvalidArgument if the xorb is not in the index.
Status AddXorbScope(SqliteDb& db, const Hash& xorb, const Scope& scope);

// Stores `xorb`'s row stamped `seen_at_ms`, with its dedup chunk rows, unless a row for its
// hash exists (whose stamp is then raised to `seen_at_ms`). Refuses (Unavailable) a xorb
// pending deletion. Returns whether the row was new. Visibility is the caller's.
Result<bool> StoreXorbRow(SqliteDb& db, const XorbRecord& xorb, int64_t seen_at_ms);

// Stores file `f`'s row (its terms as `encoded_terms`, EncodeFileTerms) stamped
// `seen_at_ms`, or raises the stamp of the row its hash already has (the record stays:
// content addressing). Visibility is the caller's (AddFileScope).
Status StoreFileRow(SqliteDb& db, const FileRecord& f, std::span<const uint8_t> encoded_terms,
                    int64_t seen_at_ms);

// Makes file `file` visible to `scope` (idempotent).
Status AddFileScope(SqliteDb& db, const Hash& file, const Scope& scope);

}  // namespace xet
