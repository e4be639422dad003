#include "store/sqlite/sqlite_rows.h"

#include "store/index_blobs.h"
#include "store/index_support.h"
#include "store/object_store.h"
#include "store/sqlite/sqlite_values.h"

namespace xet {

Status RefusePendingDeletion(SqliteDb& db, const std::string& key) {
  XET_ASSIGN_OR_RETURN(ScopedStatement stmt,
                       db.Prepare("SELECT 1 FROM gc_pending WHERE object_key = ?1"));
  XET_RETURN_IF_ERROR(stmt->BindText(1, key));
  XET_ASSIGN_OR_RETURN(bool pending, stmt->Step());
  if (pending) return Status::Unavailable(key + " is being deleted by gc; retry");
  return Status::Ok();
}

Result<bool> StampXorb(SqliteDb& db, const Hash& h, int64_t now_ms) {
  XET_ASSIGN_OR_RETURN(
      ScopedStatement stmt,
      db.Prepare("UPDATE xorbs SET seen_at_ms = max(seen_at_ms, ?2) WHERE hash = ?1"));
  XET_RETURN_IF_ERROR(stmt->BindBlob(1, HashBytes(h)));
  XET_RETURN_IF_ERROR(stmt->BindInt64(2, now_ms));
  XET_RETURN_IF_ERROR(stmt->Run());
  return db.Changes() == 1;
}

Status AddXorbScope(SqliteDb& db, const Hash& xorb, const Scope& scope) {
  XET_ASSIGN_OR_RETURN(ScopedStatement stmt,
                       db.Prepare("INSERT INTO xorb_scopes(xorb_hash, scope) VALUES(?1, ?2) "
                                  "ON CONFLICT DO NOTHING"));
  XET_RETURN_IF_ERROR(stmt->BindBlob(1, HashBytes(xorb)));
  XET_RETURN_IF_ERROR(stmt->BindText(2, scope));
  Status st = stmt->Run();
  if (st.code() == Status::Code::kInvalidArgument) {
    return Status::InvalidArgument("xorb " + xorb.ToHex() + " is not in the index");
  }
  return st;
}

Result<bool> StoreXorbRow(SqliteDb& db, const XorbRecord& xorb, int64_t seen_at_ms) {
  XET_ASSIGN_OR_RETURN(const int64_t object_size, ToSqlInt(xorb.object_size, "xorb size"));
  XET_RETURN_IF_ERROR(RefusePendingDeletion(db, XorbKey(xorb.hash)));
  const std::vector<uint8_t> chunks = EncodeChunkRows(xorb.chunks);  // bound, not copied
  {
    XET_ASSIGN_OR_RETURN(ScopedStatement stmt,
                         db.Prepare("INSERT INTO xorbs(hash, object_size, chunks, seen_at_ms) "
                                    "VALUES(?1, ?2, ?3, ?4) ON CONFLICT(hash) DO NOTHING"));
    XET_RETURN_IF_ERROR(stmt->BindBlob(1, HashBytes(xorb.hash)));
    XET_RETURN_IF_ERROR(stmt->BindInt64(2, object_size));
    XET_RETURN_IF_ERROR(stmt->BindBlob(3, chunks));
    XET_RETURN_IF_ERROR(stmt->BindInt64(4, seen_at_ms));
    XET_RETURN_IF_ERROR(stmt->Run());
  }
  if (db.Changes() == 0) {
    XET_ASSIGN_OR_RETURN(bool stamped, StampXorb(db, xorb.hash, seen_at_ms));
    (void)stamped;  // the row exists: the insert conflicted on it
    return false;
  }
  const int64_t seq = db.LastInsertRowid();
  XET_ASSIGN_OR_RETURN(ScopedStatement stmt,
                       db.Prepare("INSERT INTO dedup_chunks(chunk_hash, xorb_hash, seq) "
                                  "VALUES(?1, ?2, ?3) ON CONFLICT DO NOTHING"));
  for (const Hash& chunk : DedupIndexedChunks(xorb)) {
    XET_RETURN_IF_ERROR(stmt->BindBlob(1, HashBytes(chunk)));
    XET_RETURN_IF_ERROR(stmt->BindBlob(2, HashBytes(xorb.hash)));
    XET_RETURN_IF_ERROR(stmt->BindInt64(3, seq));
    XET_RETURN_IF_ERROR(stmt->Run());
    stmt->Reset();
  }
  return true;
}

Status StoreFileRow(SqliteDb& db, const FileRecord& f, std::span<const uint8_t> encoded_terms,
                    int64_t seen_at_ms) {
  XET_ASSIGN_OR_RETURN(const int64_t size, ToSqlInt(f.size, "file size"));
  XET_ASSIGN_OR_RETURN(ScopedStatement stmt,
                       db.Prepare("INSERT INTO files(hash, size, terms, sha256, seen_at_ms) "
                                  "VALUES(?1, ?2, ?3, ?4, ?5) ON CONFLICT(hash) DO UPDATE SET "
                                  "seen_at_ms = max(seen_at_ms, excluded.seen_at_ms)"));
  XET_RETURN_IF_ERROR(stmt->BindBlob(1, HashBytes(f.file_hash)));
  XET_RETURN_IF_ERROR(stmt->BindInt64(2, size));
  XET_RETURN_IF_ERROR(stmt->BindBlob(3, encoded_terms));
  if (f.sha256) {
    XET_RETURN_IF_ERROR(stmt->BindBlob(4, HashBytes(*f.sha256)));
  } else {
    XET_RETURN_IF_ERROR(stmt->BindNull(4));
  }
  XET_RETURN_IF_ERROR(stmt->BindInt64(5, seen_at_ms));
  return stmt->Run();
}

Status AddFileScope(SqliteDb& db, const Hash& file, const Scope& scope) {
  XET_ASSIGN_OR_RETURN(ScopedStatement stmt, db.Prepare("INSERT INTO file_scopes(file_hash, scope) "
                                                        "VALUES(?1, ?2) ON CONFLICT DO NOTHING"));
  XET_RETURN_IF_ERROR(stmt->BindBlob(1, HashBytes(file)));
  XET_RETURN_IF_ERROR(stmt->BindText(2, scope));
  return stmt->Run();
}

}  // namespace xet
