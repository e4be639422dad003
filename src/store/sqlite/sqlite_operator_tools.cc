// SqliteIndex: the operator tools of index.h ("operator tools: gc/fsck"). Every removal runs
// on the one writer connection (SqliteGroupCommitter), so its checks and its deletes are
// atomic with respect to every other write: no locking beyond that is needed.
#include <cstdint>
#include <string>
#include <utility>

#include "store/index_blobs.h"
#include "store/index_support.h"
#include "store/object_store.h"
#include "store/sqlite/sqlite_index.h"
#include "store/sqlite/sqlite_values.h"

namespace xet {
namespace {

// Rows a listing reads per query; file rows with their terms (up to megabytes each) fewer.
constexpr int64_t kRowPage = 1000;
constexpr int64_t kTermsPage = 64;

// Runs `sql` (?1: the last key seen, bound by `bind`; ?2: the page size) page after page on a
// reader. `read` turns a row into a Row and records its key; the page's rows go to `visit`
// once the reader is released, so `visit` may call back into the index.
template <typename Row, typename Key>
Status PageRows(SqliteReadPool& pool, const char* sql, int64_t page, Key first,
                const std::function<Status(SqliteStatement&, const Key&)>& bind,
                const std::function<Result<Row>(SqliteStatement&, Key*)>& read,
                const std::function<Status(const Row&)>& visit) {
  Key after = std::move(first);
  while (true) {
    std::vector<Row> rows;
    {
      auto lease = pool.Acquire();
      XET_ASSIGN_OR_RETURN(ScopedStatement stmt, lease.db().Prepare(sql));
      XET_RETURN_IF_ERROR(bind(*stmt, after));
      XET_RETURN_IF_ERROR(stmt->BindInt64(2, page));
      while (true) {
        XET_ASSIGN_OR_RETURN(bool row, stmt->Step());
        if (!row) break;
        XET_ASSIGN_OR_RETURN(Row r, read(*stmt, &after));
        rows.push_back(std::move(r));
      }
    }
    for (const Row& r : rows) XET_RETURN_IF_ERROR(visit(r));
    if (rows.size() < static_cast<size_t>(page)) return Status::Ok();
  }
}

Status BindId(SqliteStatement& stmt, const int64_t& after) { return stmt.BindInt64(1, after); }

// The first column of the first row `sql` (a hash in ?1) yields, if any.
Result<std::optional<int64_t>> SeenAt(SqliteDb& db, const char* sql, const Hash& h) {
  XET_ASSIGN_OR_RETURN(ScopedStatement stmt, db.Prepare(sql));
  XET_RETURN_IF_ERROR(stmt->BindBlob(1, HashBytes(h)));
  XET_ASSIGN_OR_RETURN(bool row, stmt->Step());
  if (!row) return std::optional<int64_t>();
  return std::optional<int64_t>(stmt->ColumnInt64(0));
}

Status RunWithHash(SqliteDb& db, const char* sql, const Hash& h) {
  XET_ASSIGN_OR_RETURN(ScopedStatement stmt, db.Prepare(sql));
  XET_RETURN_IF_ERROR(stmt->BindBlob(1, HashBytes(h)));
  return stmt->Run();
}

Status AddPendingDeletion(SqliteDb& db, const std::string& key, int64_t now_ms) {
  XET_ASSIGN_OR_RETURN(ScopedStatement stmt,
                       db.Prepare("INSERT INTO gc_pending(object_key, retired_at_ms) "
                                  "VALUES(?1, ?2) ON CONFLICT DO NOTHING"));
  XET_RETURN_IF_ERROR(stmt->BindText(1, key));
  XET_RETURN_IF_ERROR(stmt->BindInt64(2, now_ms));
  return stmt->Run();
}

}  // namespace

Result<int64_t> SqliteIndex::IndexClockMs() {
  // On the writer: every write queued before has committed (and so is visible to the scans
  // that follow) when this returns, and every later one runs, and stamps, after this read.
  int64_t clock = 0;
  XET_RETURN_IF_ERROR(writer_->Submit([&](SqliteDb&) -> Status {
    clock = WallClockMs();
    return Status::Ok();
  }));
  return clock;
}

Status SqliteIndex::ForEachXorbRow(const std::function<Status(const GcXorbRow&)>& visit) {
  return PageRows<GcXorbRow, int64_t>(
      *lookups_,
      "SELECT id, hash, object_size, seen_at_ms FROM xorbs WHERE id > ?1 ORDER BY id LIMIT ?2",
      kRowPage, 0, BindId,
      [](SqliteStatement& stmt, int64_t* after) -> Result<GcXorbRow> {
        *after = stmt.ColumnInt64(0);
        GcXorbRow r;
        XET_ASSIGN_OR_RETURN(r.hash, HashColumn(stmt, 1, "xorb hash"));
        XET_ASSIGN_OR_RETURN(r.object_size, FromSqlSize(stmt.ColumnInt64(2), "xorb size"));
        r.seen_at_ms = stmt.ColumnInt64(3);
        return r;
      },
      visit);
}

Status SqliteIndex::ForEachFileRow(bool with_terms,
                                   const std::function<Status(const GcFileRow&)>& visit) {
  return PageRows<GcFileRow, int64_t>(
      with_terms ? *readers_ : *lookups_,
      with_terms ? "SELECT id, hash, seen_at_ms, terms FROM files WHERE id > ?1 ORDER BY id "
                   "LIMIT ?2"
                 : "SELECT id, hash, seen_at_ms FROM files WHERE id > ?1 ORDER BY id LIMIT ?2",
      with_terms ? kTermsPage : kRowPage, 0, BindId,
      [with_terms](SqliteStatement& stmt, int64_t* after) -> Result<GcFileRow> {
        *after = stmt.ColumnInt64(0);
        GcFileRow r;
        XET_ASSIGN_OR_RETURN(r.hash, HashColumn(stmt, 1, "file hash"));
        r.seen_at_ms = stmt.ColumnInt64(2);
        if (with_terms) {
          XET_ASSIGN_OR_RETURN(r.terms, DecodeFileTerms(stmt.ColumnBlob(3)));
        }
        return r;
      },
      visit);
}

Status SqliteIndex::ForEachShardRow(const std::function<Status(const GcShardRow&)>& visit) {
  return PageRows<GcShardRow, Hash>(
      *lookups_, "SELECT hash, seen_at_ms FROM shards WHERE hash > ?1 ORDER BY hash LIMIT ?2",
      kRowPage, Hash(),
      [](SqliteStatement& stmt, const Hash& after) { return stmt.BindBlob(1, HashBytes(after)); },
      [](SqliteStatement& stmt, Hash* after) -> Result<GcShardRow> {
        GcShardRow r;
        XET_ASSIGN_OR_RETURN(r.hash, HashColumn(stmt, 0, "shard hash"));
        r.seen_at_ms = stmt.ColumnInt64(1);
        *after = r.hash;
        return r;
      },
      visit);
}

Result<std::vector<Hash>> SqliteIndex::CollectFiles(std::span<const Hash> files, int64_t cutoff_ms,
                                                    bool dry_run) {
  std::vector<Hash> collected;
  Status st = writer_->Submit([&](SqliteDb& db) -> Status {
    collected.clear();
    for (const Hash& f : files) {
      XET_ASSIGN_OR_RETURN(std::optional<int64_t> seen,
                           SeenAt(db, "SELECT seen_at_ms FROM files WHERE hash = ?1", f));
      if (!seen || *seen >= cutoff_ms) continue;
      // An entry keeps its file visible to its bucket's scope (sqlite_bucket_index.cc), so
      // the buckets of the file's scopes are the only ones that can point at it. A scope
      // "NS/NAME" is split to find its bucket by the (ns, name) key.
      XET_ASSIGN_OR_RETURN(
          std::optional<int64_t> in_bucket,
          SeenAt(db,
                 "SELECT 1 FROM file_scopes s JOIN buckets b ON b.ns = substr(s.scope, 1, "
                 "instr(s.scope, '/') - 1) AND b.name = substr(s.scope, instr(s.scope, '/') + 1) "
                 "JOIN bucket_entries e ON e.bucket_id = b.id AND e.file_hash = s.file_hash "
                 "WHERE s.file_hash = ?1 LIMIT 1",
                 f));
      if (in_bucket) continue;
      collected.push_back(f);
      if (dry_run) continue;
      XET_RETURN_IF_ERROR(RunWithHash(db, "DELETE FROM file_scopes WHERE file_hash = ?1", f));
      XET_RETURN_IF_ERROR(RunWithHash(db, "DELETE FROM files WHERE hash = ?1", f));
    }
    return Status::Ok();
  });
  XET_RETURN_IF_ERROR(st.WithContext("gc: collect files"));
  return collected;
}

Result<std::vector<Hash>> SqliteIndex::RetireXorbs(std::span<const Hash> xorbs, int64_t cutoff_ms,
                                                   bool dry_run) {
  std::vector<Hash> retired;
  const int64_t now_ms = WallClockMs();
  Status st = writer_->Submit([&](SqliteDb& db) -> Status {
    retired.clear();
    XET_ASSIGN_OR_RETURN(ScopedStatement read,
                         db.Prepare("SELECT seen_at_ms, chunks FROM xorbs WHERE hash = ?1"));
    for (const Hash& x : xorbs) {
      XorbRecord rec;
      rec.hash = x;
      {
        XET_RETURN_IF_ERROR(read->BindBlob(1, HashBytes(x)));
        XET_ASSIGN_OR_RETURN(bool row, read->Step());
        const bool stale = row && read->ColumnInt64(0) < cutoff_ms;
        if (stale && !dry_run) {
          XET_ASSIGN_OR_RETURN(rec.chunks, DecodeChunkRows(read->ColumnBlob(1)));
        }
        read->Reset();
        if (!stale) continue;
      }
      retired.push_back(x);
      if (dry_run) continue;
      XET_ASSIGN_OR_RETURN(ScopedStatement del_chunk,
                           db.Prepare("DELETE FROM dedup_chunks WHERE chunk_hash = ?1 AND "
                                      "xorb_hash = ?2"));
      for (const Hash& c : DedupIndexedChunks(rec)) {
        XET_RETURN_IF_ERROR(del_chunk->BindBlob(1, HashBytes(c)));
        XET_RETURN_IF_ERROR(del_chunk->BindBlob(2, HashBytes(x)));
        XET_RETURN_IF_ERROR(del_chunk->Run());
        del_chunk->Reset();
      }
      XET_RETURN_IF_ERROR(RunWithHash(db, "DELETE FROM xorb_scopes WHERE xorb_hash = ?1", x));
      XET_RETURN_IF_ERROR(RunWithHash(db, "DELETE FROM xorbs WHERE hash = ?1", x));
      XET_RETURN_IF_ERROR(AddPendingDeletion(db, XorbKey(x), now_ms));
    }
    return Status::Ok();
  });
  XET_RETURN_IF_ERROR(st.WithContext("gc: retire xorbs"));
  return retired;
}

Result<std::vector<Hash>> SqliteIndex::RetireShards(std::span<const Hash> shards, int64_t cutoff_ms,
                                                    bool dry_run) {
  std::vector<Hash> retired;
  const int64_t now_ms = WallClockMs();
  Status st = writer_->Submit([&](SqliteDb& db) -> Status {
    retired.clear();
    for (const Hash& s : shards) {
      XET_ASSIGN_OR_RETURN(std::optional<int64_t> seen,
                           SeenAt(db, "SELECT seen_at_ms FROM shards WHERE hash = ?1", s));
      if (!seen || *seen >= cutoff_ms) continue;
      retired.push_back(s);
      if (dry_run) continue;
      XET_RETURN_IF_ERROR(RunWithHash(db, "DELETE FROM shards WHERE hash = ?1", s));
      XET_RETURN_IF_ERROR(AddPendingDeletion(db, ShardKey(s), now_ms));
    }
    return Status::Ok();
  });
  XET_RETURN_IF_ERROR(st.WithContext("gc: retire shards"));
  return retired;
}

Result<std::vector<std::string>> SqliteIndex::PendingDeletions(size_t limit,
                                                               int64_t retired_before_ms) {
  auto lease = lookups_->Acquire();
  XET_ASSIGN_OR_RETURN(ScopedStatement stmt,
                       lease.db().Prepare("SELECT object_key FROM gc_pending WHERE "
                                          "retired_at_ms < ?2 ORDER BY object_key LIMIT ?1"));
  XET_RETURN_IF_ERROR(stmt->BindInt64(1, SqlLimit(limit)));
  XET_RETURN_IF_ERROR(stmt->BindInt64(2, retired_before_ms));
  std::vector<std::string> keys;
  while (true) {
    XET_ASSIGN_OR_RETURN(bool row, stmt->Step());
    if (!row) return keys;
    keys.emplace_back(stmt->ColumnText(0));
  }
}

Status SqliteIndex::ForgetPendingDeletions(std::span<const std::string> keys) {
  return writer_->Submit([&](SqliteDb& db) -> Status {
    XET_ASSIGN_OR_RETURN(ScopedStatement stmt,
                         db.Prepare("DELETE FROM gc_pending WHERE object_key = ?1"));
    for (const std::string& key : keys) {
      XET_RETURN_IF_ERROR(stmt->BindText(1, key));
      XET_RETURN_IF_ERROR(stmt->Run());
      stmt->Reset();
    }
    return Status::Ok();
  });
}

}  // namespace xet
