// SqliteIndex: the migration exports and imports of index.h ("migration"). Exports read a
// page on a reader connection; imports write a page in one transaction on the writer.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "store/index_blobs.h"
#include "store/index_support.h"
#include "store/object_store.h"
#include "store/sqlite/sqlite_index.h"
#include "store/sqlite/sqlite_rows.h"
#include "store/sqlite/sqlite_values.h"

namespace xet {
namespace {

// The scopes that can see row `hash`, read by `sql` (the hash in ?1).
Result<std::vector<Scope>> ScopesOf(SqliteDb& db, const char* sql, const Hash& hash) {
  XET_ASSIGN_OR_RETURN(ScopedStatement stmt, db.Prepare(sql));
  XET_RETURN_IF_ERROR(stmt->BindBlob(1, HashBytes(hash)));
  std::vector<Scope> scopes;
  while (true) {
    XET_ASSIGN_OR_RETURN(bool row, stmt->Step());
    if (!row) return scopes;
    scopes.emplace_back(stmt->ColumnText(0));
  }
}

// Runs `sql` (?1: a cursor bound by `bind`, ?2: the page size), handing each row to `read`.
template <typename Bind, typename Read>
Status ReadPage(SqliteDb& db, const char* sql, size_t limit, Bind bind, Read read) {
  XET_ASSIGN_OR_RETURN(ScopedStatement stmt, db.Prepare(sql));
  XET_RETURN_IF_ERROR(bind(*stmt));
  XET_RETURN_IF_ERROR(stmt->BindInt64(2, SqlLimit(limit)));
  while (true) {
    XET_ASSIGN_OR_RETURN(bool row, stmt->Step());
    if (!row) return Status::Ok();
    XET_RETURN_IF_ERROR(read(*stmt));
  }
}

}  // namespace

Result<std::vector<Index::ExportedXorb>> SqliteIndex::ExportXorbs(int64_t after_row_id,
                                                                  size_t limit) {
  std::vector<ExportedXorb> out;
  auto lease = readers_->Acquire();
  XET_RETURN_IF_ERROR(ReadPage(
      lease.db(),
      "SELECT id, hash, object_size, chunks, seen_at_ms FROM xorbs WHERE id > ?1 ORDER BY id "
      "LIMIT ?2",
      limit, [&](SqliteStatement& stmt) { return stmt.BindInt64(1, after_row_id); },
      [&](SqliteStatement& stmt) -> Status {
        ExportedXorb x;
        x.row_id = stmt.ColumnInt64(0);
        XET_ASSIGN_OR_RETURN(x.record.hash, HashColumn(stmt, 1, "xorb hash"));
        XET_ASSIGN_OR_RETURN(x.record.object_size, FromSqlSize(stmt.ColumnInt64(2), "xorb size"));
        XET_ASSIGN_OR_RETURN(x.record.chunks, DecodeChunkRows(stmt.ColumnBlob(3)));
        x.seen_at_ms = stmt.ColumnInt64(4);
        out.push_back(std::move(x));
        return Status::Ok();
      }));
  for (ExportedXorb& x : out) {
    XET_ASSIGN_OR_RETURN(
        x.scopes,
        ScopesOf(lease.db(), "SELECT scope FROM xorb_scopes WHERE xorb_hash = ?1 ORDER BY scope",
                 x.record.hash));
  }
  return out;
}

Result<std::vector<Index::ExportedFile>> SqliteIndex::ExportFiles(int64_t after_row_id,
                                                                  size_t limit) {
  std::vector<ExportedFile> out;
  auto lease = readers_->Acquire();
  XET_RETURN_IF_ERROR(ReadPage(
      lease.db(),
      "SELECT id, hash, size, terms, sha256, seen_at_ms FROM files WHERE id > ?1 ORDER BY id "
      "LIMIT ?2",
      limit, [&](SqliteStatement& stmt) { return stmt.BindInt64(1, after_row_id); },
      [&](SqliteStatement& stmt) -> Status {
        ExportedFile f;
        f.row_id = stmt.ColumnInt64(0);
        XET_ASSIGN_OR_RETURN(f.record.file_hash, HashColumn(stmt, 1, "file hash"));
        XET_ASSIGN_OR_RETURN(f.record.size, FromSqlSize(stmt.ColumnInt64(2), "file size"));
        XET_ASSIGN_OR_RETURN(f.record.terms, DecodeFileTerms(stmt.ColumnBlob(3)));
        if (!stmt.ColumnIsNull(4)) {
          XET_ASSIGN_OR_RETURN(f.record.sha256, HashColumn(stmt, 4, "file sha256"));
        }
        f.seen_at_ms = stmt.ColumnInt64(5);
        out.push_back(std::move(f));
        return Status::Ok();
      }));
  for (ExportedFile& f : out) {
    XET_ASSIGN_OR_RETURN(
        f.scopes,
        ScopesOf(lease.db(), "SELECT scope FROM file_scopes WHERE file_hash = ?1 ORDER BY scope",
                 f.record.file_hash));
  }
  return out;
}

Result<std::vector<Index::ExportedShard>> SqliteIndex::ExportShards(const Hash& after,
                                                                    size_t limit) {
  std::vector<ExportedShard> out;
  auto lease = lookups_->Acquire();
  XET_RETURN_IF_ERROR(ReadPage(
      lease.db(),
      "SELECT hash, scope, created_at, seen_at_ms FROM shards WHERE hash > ?1 ORDER BY hash "
      "LIMIT ?2",
      limit, [&](SqliteStatement& stmt) { return stmt.BindBlob(1, HashBytes(after)); },
      [&](SqliteStatement& stmt) -> Status {
        ExportedShard s;
        XET_ASSIGN_OR_RETURN(s.hash, HashColumn(stmt, 0, "shard hash"));
        s.scope = std::string(stmt.ColumnText(1));
        s.created_at = stmt.ColumnInt64(2);
        s.seen_at_ms = stmt.ColumnInt64(3);
        out.push_back(std::move(s));
        return Status::Ok();
      }));
  return out;
}

Status SqliteIndex::ImportXorbs(std::span<const ExportedXorb> xorbs) {
  return writer_->Submit([&](SqliteDb& db) -> Status {
    for (const ExportedXorb& x : xorbs) {
      XET_RETURN_IF_ERROR(StoreXorbRow(db, x.record, x.seen_at_ms).status());
      for (const Scope& scope : x.scopes) {
        XET_RETURN_IF_ERROR(AddXorbScope(db, x.record.hash, scope));
      }
    }
    return Status::Ok();
  });
}

Status SqliteIndex::ImportFiles(std::span<const ExportedFile> files) {
  return writer_->Submit([&](SqliteDb& db) -> Status {
    XET_ASSIGN_OR_RETURN(ScopedStatement exists, db.Prepare("SELECT 1 FROM xorbs WHERE hash = ?1"));
    for (const ExportedFile& f : files) {
      std::vector<Hash> xorbs;
      for (const FileTerm& t : f.record.terms) xorbs.push_back(t.xorb_hash);
      for (const Hash& x : SortedUniqueHashes(std::move(xorbs))) {
        XET_RETURN_IF_ERROR(exists->BindBlob(1, HashBytes(x)));
        XET_ASSIGN_OR_RETURN(bool stored, exists->Step());
        exists->Reset();
        if (!stored) return Status::InvalidArgument("xorb " + x.ToHex() + " is not in the index");
      }
      XET_RETURN_IF_ERROR(
          StoreFileRow(db, f.record, EncodeFileTerms(f.record.terms), f.seen_at_ms));
      for (const Scope& scope : f.scopes) {
        XET_RETURN_IF_ERROR(AddFileScope(db, f.record.file_hash, scope));
      }
    }
    return Status::Ok();
  });
}

Status SqliteIndex::ImportShards(std::span<const ExportedShard> shards) {
  return writer_->Submit([&](SqliteDb& db) -> Status {
    XET_ASSIGN_OR_RETURN(ScopedStatement put,
                         db.Prepare("INSERT INTO shards(hash, scope, created_at, seen_at_ms) "
                                    "VALUES(?1, ?2, ?3, ?4) ON CONFLICT(hash) DO UPDATE SET "
                                    "seen_at_ms = max(seen_at_ms, excluded.seen_at_ms)"));
    for (const ExportedShard& s : shards) {
      XET_RETURN_IF_ERROR(RefusePendingDeletion(db, ShardKey(s.hash)));
      XET_RETURN_IF_ERROR(put->BindBlob(1, HashBytes(s.hash)));
      XET_RETURN_IF_ERROR(put->BindText(2, s.scope));
      XET_RETURN_IF_ERROR(put->BindInt64(3, s.created_at));
      XET_RETURN_IF_ERROR(put->BindInt64(4, s.seen_at_ms));
      XET_RETURN_IF_ERROR(put->Run());
      put->Reset();
    }
    return Status::Ok();
  });
}

}  // namespace xet
