// SqliteIndex: the bucket part of the Index contract (schema: migration 2 in sqlite_schema.cc).
//
// - A bucket's scope is "NAMESPACE/BUCKET"; its visibility rows live in file_scopes and
//   xorb_scopes like every other scope's.
// - Invariant: every file an entry of bucket B points at has a file_scopes row for B's scope.
//   addFile requires that row, copies add it, and a batch removes it for the files whose
//   last entry in B it removed or overwrote.
// - A batch is one group-commit operation (one savepoint, durable on return). Each BucketOp
//   checks everything that can make it fail before it writes, so a failing op has written
//   nothing and needs no savepoint of its own; a storage error fails the whole batch.
// - Prefix copies and moves are set-based: the matched entries are staged, renamed, in a
//   TEMP table and written back with one INSERT ... SELECT, whatever their number.
// - An explicit directory entry (kind 1) is stored at its path + "/": no valid path ends in
//   '/', so it never collides with a file, it is the first key of the directory's range
//   (listings meet it before the entries below it), and prefix copies, moves and deletes
//   take it with the rest of the range. It points at the zero hash, counts in no total and
//   makes nothing visible. A file entry written at a path removes the directory entry there.
// - A bucket's generation grows by one in every batch that changed an entry.
// - Reads that take several statements run in one read transaction (one snapshot).
#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "protocol/posix_metadata.h"
#include "store/bucket_batch_applier.h"
#include "store/bucket_keys.h"
#include "store/bucket_tree_walk.h"
#include "store/sqlite/sqlite_index.h"
#include "store/sqlite/sqlite_values.h"

namespace xet {
namespace {

// ---------------------------------------------------------------------------------------
// Shared pieces.

constexpr const char* kBucketColumns =
    "ns, name, private, created_at_ms, updated_at_ms, total_size, total_files, generation";

constexpr int64_t kFileKind = 0;
constexpr int64_t kDirectoryKind = 1;

Result<BucketRecord> ReadBucket(SqliteStatement& stmt) {
  BucketRecord b;
  b.ns = std::string(stmt.ColumnText(0));
  b.name = std::string(stmt.ColumnText(1));
  b.is_private = stmt.ColumnInt64(2) != 0;
  b.created_at_ms = stmt.ColumnInt64(3);
  b.updated_at_ms = stmt.ColumnInt64(4);
  XET_ASSIGN_OR_RETURN(b.total_size, FromSqlSize(stmt.ColumnInt64(5), "bucket total size"));
  XET_ASSIGN_OR_RETURN(b.total_files, FromSqlSize(stmt.ColumnInt64(6), "bucket file count"));
  XET_ASSIGN_OR_RETURN(b.generation, FromSqlSize(stmt.ColumnInt64(7), "bucket generation"));
  return b;
}

// The id of bucket ns/name, or nullopt.
Result<std::optional<int64_t>> FindBucketId(SqliteDb& db, std::string_view ns,
                                            std::string_view name) {
  XET_ASSIGN_OR_RETURN(ScopedStatement stmt,
                       db.Prepare("SELECT id FROM buckets WHERE ns = ?1 AND name = ?2"));
  XET_RETURN_IF_ERROR(stmt->BindText(1, ns));
  XET_RETURN_IF_ERROR(stmt->BindText(2, name));
  XET_ASSIGN_OR_RETURN(bool row, stmt->Step());
  if (!row) return std::optional<int64_t>();
  return std::optional<int64_t>(stmt->ColumnInt64(0));
}

// The id of bucket ns/name; NotFound if absent.
Result<int64_t> RequireBucketId(SqliteDb& db, std::string_view ns, std::string_view name) {
  XET_ASSIGN_OR_RETURN(std::optional<int64_t> id, FindBucketId(db, ns, name));
  if (!id) return BucketNotFound(ns, name);
  return *id;
}

// The entry columns, in the order ReadEntry expects them.
#define XET_ENTRY_COLUMNS \
  "path, file_hash, size, mtime_ms, uploaded_at_ms, content_type, sha256, kind, posix"

Result<BucketEntry> ReadEntry(SqliteStatement& stmt) {
  BucketEntry e;
  e.path = std::string(stmt.ColumnText(0));
  XET_ASSIGN_OR_RETURN(e.file_hash, HashColumn(stmt, 1, "entry file hash"));
  XET_ASSIGN_OR_RETURN(e.size, FromSqlSize(stmt.ColumnInt64(2), "entry size"));
  e.mtime_ms = stmt.ColumnInt64(3);
  e.uploaded_at_ms = stmt.ColumnInt64(4);
  e.content_type = std::string(stmt.ColumnText(5));
  if (!stmt.ColumnIsNull(6)) {
    XET_ASSIGN_OR_RETURN(e.sha256, HashColumn(stmt, 6, "entry sha256"));
  }
  if (stmt.ColumnInt64(7) == kDirectoryKind) {
    if (!e.path.ends_with('/')) return Status::Corruption("index directory entry without '/'");
    e.path.pop_back();
    e.is_directory = true;
  }
  if (!stmt.ColumnIsNull(8)) {
    auto posix = DecodePosixJson(stmt.ColumnText(8));
    if (!posix.ok()) {
      return Status::Corruption("index entry " + e.path + ": " + posix.status().message());
    }
    e.posix = std::move(*posix);
  }
  return e;
}

// The posix column's text for `posix` (nullopt: NULL).
std::optional<std::string> PosixText(const std::optional<PosixMetadata>& posix) {
  if (!posix) return std::nullopt;
  return EncodePosixJson(*posix);
}

// Binds `text` (which must outlive the statement's run; SQLITE_STATIC), or NULL.
Status BindOptionalText(SqliteStatement& stmt, int col, const std::optional<std::string>& text) {
  if (!text) return stmt.BindNull(col);
  return stmt.BindText(col, *text);
}

// The file entry at `path`, or (with `directories`, when there is none) the explicit
// directory entry of `path`.
Result<std::optional<BucketEntry>> FindEntry(SqliteDb& db, int64_t bucket_id, std::string_view path,
                                             bool directories) {
  // Without `directories` the second key is the path again. Bound SQLITE_STATIC: declared
  // before the statement, so it outlives it.
  const std::string second = directories ? MarkerKey(path) : std::string(path);
  XET_ASSIGN_OR_RETURN(ScopedStatement stmt,
                       db.Prepare("SELECT " XET_ENTRY_COLUMNS
                                  " FROM bucket_entries WHERE bucket_id = ?1 AND path IN (?2, ?3) "
                                  "ORDER BY path LIMIT 1"));
  XET_RETURN_IF_ERROR(stmt->BindInt64(1, bucket_id));
  XET_RETURN_IF_ERROR(stmt->BindText(2, path));
  XET_RETURN_IF_ERROR(stmt->BindText(3, second));
  XET_ASSIGN_OR_RETURN(bool row, stmt->Step());
  if (!row) return std::optional<BucketEntry>();
  XET_ASSIGN_OR_RETURN(BucketEntry e, ReadEntry(*stmt));
  return std::optional<BucketEntry>(std::move(e));
}

// A read transaction on a leased read connection, so that several statements see one
// snapshot. Declare it before the statements it covers: it ends (COMMIT) on destruction,
// after they have been reset.
class ReadSnapshot {
 public:
  explicit ReadSnapshot(SqliteDb& db) : db_(db) {}
  ReadSnapshot(const ReadSnapshot&) = delete;
  ReadSnapshot& operator=(const ReadSnapshot&) = delete;
  ~ReadSnapshot() {
    if (open_) (void)db_.Exec("COMMIT");
  }
  Status Begin() {
    XET_RETURN_IF_ERROR(db_.Exec("BEGIN"));
    open_ = true;
    return Status::Ok();
  }

 private:
  SqliteDb& db_;
  bool open_ = false;
};

// Rewrites every visibility row of scope `from` to scope `to`; rows that `to` already has
// are dropped instead (the primary keys would collide).
Status RenameScope(SqliteDb& db, const char* table, const std::string& from,
                   const std::string& to) {
  const std::string t(table);
  {
    XET_ASSIGN_OR_RETURN(ScopedStatement stmt,
                         db.Prepare("UPDATE OR IGNORE " + t + " SET scope = ?2 WHERE scope = ?1"));
    XET_RETURN_IF_ERROR(stmt->BindText(1, from));
    XET_RETURN_IF_ERROR(stmt->BindText(2, to));
    XET_RETURN_IF_ERROR(stmt->Run());
  }
  XET_ASSIGN_OR_RETURN(ScopedStatement stmt, db.Prepare("DELETE FROM " + t + " WHERE scope = ?1"));
  XET_RETURN_IF_ERROR(stmt->BindText(1, from));
  return stmt->Run();
}

Status DeleteScope(SqliteDb& db, const char* table, const std::string& scope) {
  XET_ASSIGN_OR_RETURN(ScopedStatement stmt,
                       db.Prepare(std::string("DELETE FROM ") + table + " WHERE scope = ?1"));
  XET_RETURN_IF_ERROR(stmt->BindText(1, scope));
  return stmt->Run();
}

// ---------------------------------------------------------------------------------------
// Batches.

// The storage steps of a batch (store/bucket_batch_applier.h) on the writer connection,
// inside the batch's savepoint.
class SqliteBatchApplier final : public BucketBatchApplier {
 public:
  SqliteBatchApplier(SqliteDb& db, int64_t bucket_id, Scope scope, int64_t now_ms)
      : BucketBatchApplier(bucket_id, std::move(scope), now_ms), db_(db) {}

 private:
  // Creates (once per connection) and empties the staging tables.
  Status Begin() override;
  Status Finish() override;
  Result<std::optional<int64_t>> FindBucketId(std::string_view ns, std::string_view name) override {
    return xet::FindBucketId(db_, ns, name);
  }
  Result<std::optional<FileFacts>> VisibleFile(const Hash& file) override;
  Result<std::optional<SourceEntry>> EntryWithFile(int64_t bucket_id, const Hash& file) override;
  Status PutEntry(const NewEntry& e) override;
  Result<uint64_t> DeleteEntryKeys(const std::string& key, const std::string& other_key) override;
  Status MakeVisible(const Hash& file) override;
  Result<int64_t> StagePrefix(int64_t source_id, const std::string& from,
                              const std::string& to) override;
  Status DeletePrefix(const std::string& from) override;
  Status WriteStaged(bool replace_sources) override;
  Status MakeStagedVisible() override;
  Status ClearStaged() override { return db_.Exec("DELETE FROM temp.bucket_batch_moved"); }
  Result<bool> EntryAtKey(const std::string& key) override;
  Result<bool> AnythingAt(const std::string& path, bool include_exact) override;
  Result<std::optional<EntryAt>> FindEntryAt(const std::string& path) override;
  Status UpdateMetadata(const std::string& key, const std::optional<PosixMetadata>& posix,
                        int64_t mtime_ms) override;

  // Records that this bucket may have lost its last entry pointing at `file_hash`.
  Status NoteLost(const Hash& file_hash);

  SqliteDb& db_;
};

Status SqliteBatchApplier::Begin() {
  XET_RETURN_IF_ERROR(
      db_.Exec("CREATE TEMP TABLE IF NOT EXISTS bucket_batch_lost("
               "file_hash BLOB PRIMARY KEY) WITHOUT ROWID;"
               "CREATE TEMP TABLE IF NOT EXISTS bucket_batch_moved("
               "path TEXT PRIMARY KEY COLLATE BINARY, file_hash BLOB NOT NULL, "
               "size INTEGER NOT NULL, mtime_ms INTEGER NOT NULL, "
               "uploaded_at_ms INTEGER NOT NULL, content_type TEXT NOT NULL, sha256 BLOB, "
               "kind INTEGER NOT NULL, posix TEXT) WITHOUT ROWID;"));
  XET_RETURN_IF_ERROR(db_.Exec("DELETE FROM temp.bucket_batch_lost"));
  return ClearStaged();
}

Status SqliteBatchApplier::NoteLost(const Hash& file_hash) {
  XET_ASSIGN_OR_RETURN(
      ScopedStatement stmt,
      db_.Prepare("INSERT OR IGNORE INTO temp.bucket_batch_lost(file_hash) VALUES(?1)"));
  XET_RETURN_IF_ERROR(stmt->BindBlob(1, HashBytes(file_hash)));
  return stmt->Run();
}

Result<std::optional<BucketBatchApplier::FileFacts>> SqliteBatchApplier::VisibleFile(
    const Hash& file) {
  // One statement: the file's record and whether this bucket's scope can see it.
  XET_ASSIGN_OR_RETURN(
      ScopedStatement stmt,
      db_.Prepare("SELECT f.size, f.sha256 FROM files f WHERE f.hash = ?1 AND EXISTS("
                  "SELECT 1 FROM file_scopes s WHERE s.file_hash = ?1 AND s.scope = ?2)"));
  XET_RETURN_IF_ERROR(stmt->BindBlob(1, HashBytes(file)));
  XET_RETURN_IF_ERROR(stmt->BindText(2, scope_));
  XET_ASSIGN_OR_RETURN(bool row, stmt->Step());
  if (!row) return std::optional<FileFacts>();
  FileFacts facts;
  facts.size = stmt->ColumnInt64(0);
  if (!stmt->ColumnIsNull(1)) {
    XET_ASSIGN_OR_RETURN(facts.sha256, HashColumn(*stmt, 1, "file sha256"));
  }
  return std::optional<FileFacts>(std::move(facts));
}

Result<std::optional<BucketBatchApplier::SourceEntry>> SqliteBatchApplier::EntryWithFile(
    int64_t bucket_id, const Hash& file) {
  XET_ASSIGN_OR_RETURN(
      ScopedStatement stmt,
      db_.Prepare("SELECT size, sha256, mtime_ms, content_type FROM bucket_entries "
                  "WHERE bucket_id = ?1 AND file_hash = ?2 AND kind = 0 LIMIT 1"));
  XET_RETURN_IF_ERROR(stmt->BindInt64(1, bucket_id));
  XET_RETURN_IF_ERROR(stmt->BindBlob(2, HashBytes(file)));
  XET_ASSIGN_OR_RETURN(bool row, stmt->Step());
  if (!row) return std::optional<SourceEntry>();
  SourceEntry s;
  s.size = stmt->ColumnInt64(0);
  if (!stmt->ColumnIsNull(1)) {
    XET_ASSIGN_OR_RETURN(s.sha256, HashColumn(*stmt, 1, "entry sha256"));
  }
  s.mtime_ms = stmt->ColumnInt64(2);
  s.content_type = std::string(stmt->ColumnText(3));
  return std::optional<SourceEntry>(std::move(s));
}

Status SqliteBatchApplier::MakeVisible(const Hash& file) {
  XET_ASSIGN_OR_RETURN(ScopedStatement vis,
                       db_.Prepare("INSERT INTO file_scopes(file_hash, scope) SELECT ?1, ?2 "
                                   "WHERE EXISTS(SELECT 1 FROM files WHERE hash = ?1) "
                                   "ON CONFLICT DO NOTHING"));
  XET_RETURN_IF_ERROR(vis->BindBlob(1, HashBytes(file)));
  XET_RETURN_IF_ERROR(vis->BindText(2, scope_));
  return vis->Run();
}

Result<uint64_t> SqliteBatchApplier::DeleteEntryKeys(const std::string& key,
                                                     const std::string& other_key) {
  XET_ASSIGN_OR_RETURN(ScopedStatement stmt,
                       db_.Prepare("DELETE FROM bucket_entries WHERE bucket_id = ?1 AND "
                                   "path IN (?2, ?3) RETURNING file_hash, size, kind"));
  XET_RETURN_IF_ERROR(stmt->BindInt64(1, bucket_id_));
  XET_RETURN_IF_ERROR(stmt->BindText(2, key));
  XET_RETURN_IF_ERROR(stmt->BindText(3, other_key));
  uint64_t removed = 0;
  while (true) {
    XET_ASSIGN_OR_RETURN(bool row, stmt->Step());
    if (!row) break;
    ++removed;
    changed_ = true;
    if (stmt->ColumnInt64(2) != kFileKind) continue;
    XET_ASSIGN_OR_RETURN(Hash old_hash, HashColumn(*stmt, 0, "entry file hash"));
    delta_files_ -= 1;
    delta_size_ -= stmt->ColumnInt64(1);
    XET_RETURN_IF_ERROR(NoteLost(old_hash));
  }
  return removed;
}

Status SqliteBatchApplier::MakeStagedVisible() {
  XET_ASSIGN_OR_RETURN(
      ScopedStatement vis,
      db_.Prepare("INSERT OR IGNORE INTO file_scopes(file_hash, scope) "
                  "SELECT DISTINCT m.file_hash, ?1 FROM temp.bucket_batch_moved m "
                  "WHERE m.kind = 0 AND EXISTS(SELECT 1 FROM files f WHERE f.hash = m.file_hash)"));
  XET_RETURN_IF_ERROR(vis->BindText(1, scope_));
  return vis->Run();
}

Result<bool> SqliteBatchApplier::EntryAtKey(const std::string& key) {
  XET_ASSIGN_OR_RETURN(
      ScopedStatement stmt,
      db_.Prepare("SELECT 1 FROM bucket_entries WHERE bucket_id = ?1 AND path = ?2"));
  XET_RETURN_IF_ERROR(stmt->BindInt64(1, bucket_id_));
  XET_RETURN_IF_ERROR(stmt->BindText(2, key));
  return stmt->Step();
}

Result<std::optional<BucketBatchApplier::EntryAt>> SqliteBatchApplier::FindEntryAt(
    const std::string& path) {
  const std::string marker = MarkerKey(path);
  XET_ASSIGN_OR_RETURN(
      ScopedStatement stmt,
      db_.Prepare("SELECT path, file_hash, kind FROM bucket_entries WHERE bucket_id = ?1 AND "
                  "path IN (?2, ?3) ORDER BY path LIMIT 1"));
  XET_RETURN_IF_ERROR(stmt->BindInt64(1, bucket_id_));
  XET_RETURN_IF_ERROR(stmt->BindText(2, path));
  XET_RETURN_IF_ERROR(stmt->BindText(3, marker));
  XET_ASSIGN_OR_RETURN(bool row, stmt->Step());
  if (!row) return std::optional<EntryAt>();
  EntryAt at;
  at.key = std::string(stmt->ColumnText(0));
  at.is_file = stmt->ColumnInt64(2) == kFileKind;
  if (at.is_file) {
    XET_ASSIGN_OR_RETURN(at.file_hash, HashColumn(*stmt, 1, "entry file hash"));
  }
  return std::optional<EntryAt>(std::move(at));
}

Status SqliteBatchApplier::UpdateMetadata(const std::string& key,
                                          const std::optional<PosixMetadata>& posix,
                                          int64_t mtime_ms) {
  const std::optional<std::string> text = PosixText(posix);
  XET_ASSIGN_OR_RETURN(ScopedStatement stmt,
                       db_.Prepare("UPDATE bucket_entries SET posix = ?3, mtime_ms = "
                                   "CASE WHEN ?4 = 0 THEN mtime_ms ELSE ?4 END "
                                   "WHERE bucket_id = ?1 AND path = ?2"));
  XET_RETURN_IF_ERROR(stmt->BindInt64(1, bucket_id_));
  XET_RETURN_IF_ERROR(stmt->BindText(2, key));
  XET_RETURN_IF_ERROR(BindOptionalText(*stmt, 3, text));
  XET_RETURN_IF_ERROR(stmt->BindInt64(4, mtime_ms));
  return stmt->Run();
}

Status SqliteBatchApplier::PutEntry(const NewEntry& e) {
  const std::string key = e.directory ? MarkerKey(*e.path) : *e.path;
  const std::optional<std::string> posix = PosixText(*e.posix);
  if (!e.directory) {  // a file replaces the directory entry at its path
    XET_ASSIGN_OR_RETURN(ScopedStatement stmt,
                         db_.Prepare("DELETE FROM bucket_entries WHERE bucket_id = ?1 AND "
                                     "path = ?2 AND kind = 1"));
    const std::string marker = MarkerKey(*e.path);
    XET_RETURN_IF_ERROR(stmt->BindInt64(1, bucket_id_));
    XET_RETURN_IF_ERROR(stmt->BindText(2, marker));
    XET_RETURN_IF_ERROR(stmt->Run());
  }
  {
    XET_ASSIGN_OR_RETURN(ScopedStatement old,
                         db_.Prepare("SELECT file_hash, size FROM bucket_entries WHERE "
                                     "bucket_id = ?1 AND path = ?2 AND kind = 0"));
    XET_RETURN_IF_ERROR(old->BindInt64(1, bucket_id_));
    XET_RETURN_IF_ERROR(old->BindText(2, key));
    XET_ASSIGN_OR_RETURN(bool row, old->Step());
    if (row) {
      XET_ASSIGN_OR_RETURN(Hash old_hash, HashColumn(*old, 0, "entry file hash"));
      delta_files_ -= 1;
      delta_size_ -= old->ColumnInt64(1);
      if (old_hash != e.file_hash) XET_RETURN_IF_ERROR(NoteLost(old_hash));
    }
  }
  XET_ASSIGN_OR_RETURN(
      ScopedStatement put,
      db_.Prepare("INSERT INTO bucket_entries(bucket_id, path, file_hash, size, mtime_ms, "
                  "uploaded_at_ms, content_type, sha256, kind, posix) "
                  "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10) "
                  "ON CONFLICT(bucket_id, path) DO UPDATE SET file_hash = excluded.file_hash, "
                  "size = excluded.size, mtime_ms = excluded.mtime_ms, "
                  "uploaded_at_ms = excluded.uploaded_at_ms, "
                  "content_type = excluded.content_type, sha256 = excluded.sha256, "
                  "kind = excluded.kind, posix = excluded.posix"));
  XET_RETURN_IF_ERROR(put->BindInt64(1, bucket_id_));
  XET_RETURN_IF_ERROR(put->BindText(2, key));
  XET_RETURN_IF_ERROR(put->BindBlob(3, HashBytes(e.file_hash)));
  XET_RETURN_IF_ERROR(put->BindInt64(4, e.size));
  XET_RETURN_IF_ERROR(put->BindInt64(5, e.mtime_ms));
  XET_RETURN_IF_ERROR(put->BindInt64(6, e.uploaded_at_ms.value_or(now_ms_)));
  XET_RETURN_IF_ERROR(put->BindText(7, e.content_type));
  if (e.sha256) {
    XET_RETURN_IF_ERROR(put->BindBlob(8, HashBytes(*e.sha256)));
  } else {
    XET_RETURN_IF_ERROR(put->BindNull(8));
  }
  XET_RETURN_IF_ERROR(put->BindInt64(9, e.directory ? kDirectoryKind : kFileKind));
  XET_RETURN_IF_ERROR(BindOptionalText(*put, 10, posix));
  XET_RETURN_IF_ERROR(put->Run());
  if (!e.directory) {
    delta_files_ += 1;
    delta_size_ += e.size;
  }
  changed_ = true;
  return Status::Ok();
}

Result<int64_t> SqliteBatchApplier::StagePrefix(int64_t source_id, const std::string& from,
                                                const std::string& to) {
  // substr() over the path as a BLOB counts bytes; `to || blob` is TEXT with those bytes.
  XET_ASSIGN_OR_RETURN(
      ScopedStatement stmt,
      db_.Prepare("INSERT INTO temp.bucket_batch_moved(path, file_hash, size, mtime_ms, "
                  "uploaded_at_ms, content_type, sha256, kind, posix) "
                  "SELECT ?5 || substr(CAST(path AS BLOB), ?6), file_hash, size, mtime_ms, ?7, "
                  "content_type, sha256, kind, posix FROM bucket_entries "
                  "WHERE bucket_id = ?1 AND path = ?2 "
                  "UNION ALL "
                  "SELECT ?5 || substr(CAST(path AS BLOB), ?6), file_hash, size, mtime_ms, ?7, "
                  "content_type, sha256, kind, posix FROM bucket_entries "
                  "WHERE bucket_id = ?1 AND path >= ?3 AND path < ?4"));
  const std::string lower = DirLower(from);
  const std::string upper = DirUpper(from);
  XET_RETURN_IF_ERROR(stmt->BindInt64(1, source_id));
  XET_RETURN_IF_ERROR(stmt->BindText(2, from));
  XET_RETURN_IF_ERROR(stmt->BindText(3, lower));
  XET_RETURN_IF_ERROR(stmt->BindText(4, upper));
  XET_RETURN_IF_ERROR(stmt->BindText(5, to));
  XET_RETURN_IF_ERROR(stmt->BindInt64(6, static_cast<int64_t>(from.size()) + 1));
  XET_RETURN_IF_ERROR(stmt->BindInt64(7, now_ms_));
  XET_RETURN_IF_ERROR(stmt->Run());
  return db_.Changes();
}

Status SqliteBatchApplier::DeletePrefix(const std::string& from) {
  {
    XET_ASSIGN_OR_RETURN(
        ScopedStatement stmt,
        db_.Prepare("DELETE FROM bucket_entries WHERE bucket_id = ?1 AND path = ?2"));
    XET_RETURN_IF_ERROR(stmt->BindInt64(1, bucket_id_));
    XET_RETURN_IF_ERROR(stmt->BindText(2, from));
    XET_RETURN_IF_ERROR(stmt->Run());
  }
  XET_ASSIGN_OR_RETURN(
      ScopedStatement stmt,
      db_.Prepare("DELETE FROM bucket_entries WHERE bucket_id = ?1 AND path >= ?2 AND path < ?3"));
  const std::string lower = DirLower(from);
  const std::string upper = DirUpper(from);
  XET_RETURN_IF_ERROR(stmt->BindInt64(1, bucket_id_));
  XET_RETURN_IF_ERROR(stmt->BindText(2, lower));
  XET_RETURN_IF_ERROR(stmt->BindText(3, upper));
  return stmt->Run();
}

Status SqliteBatchApplier::WriteStaged(bool replace_sources) {
  // CROSS JOIN keeps the staged rows outermost: one primary-key probe per staged row.
  {
    XET_ASSIGN_OR_RETURN(
        ScopedStatement stmt,
        db_.Prepare("SELECT count(*), coalesce(sum(e.size), 0) FROM temp.bucket_batch_moved m "
                    "CROSS JOIN bucket_entries e ON e.bucket_id = ?1 AND e.path = m.path "
                    "WHERE e.kind = 0"));
    XET_RETURN_IF_ERROR(stmt->BindInt64(1, bucket_id_));
    XET_ASSIGN_OR_RETURN(bool row, stmt->Step());
    if (row) {
      delta_files_ -= stmt->ColumnInt64(0);
      delta_size_ -= stmt->ColumnInt64(1);
    }
  }
  {
    XET_ASSIGN_OR_RETURN(
        ScopedStatement stmt,
        db_.Prepare("INSERT OR IGNORE INTO temp.bucket_batch_lost(file_hash) "
                    "SELECT e.file_hash FROM temp.bucket_batch_moved m CROSS JOIN bucket_entries e "
                    "ON e.bucket_id = ?1 AND e.path = m.path "
                    "WHERE e.kind = 0 AND e.file_hash <> m.file_hash"));
    XET_RETURN_IF_ERROR(stmt->BindInt64(1, bucket_id_));
    XET_RETURN_IF_ERROR(stmt->Run());
  }
  if (!replace_sources) {
    XET_ASSIGN_OR_RETURN(
        ScopedStatement stmt,
        db_.Prepare("SELECT count(*), coalesce(sum(size), 0) FROM temp.bucket_batch_moved "
                    "WHERE kind = 0"));
    XET_ASSIGN_OR_RETURN(bool row, stmt->Step());
    if (row) {
      delta_files_ += stmt->ColumnInt64(0);
      delta_size_ += stmt->ColumnInt64(1);
    }
  }
  {  // Staged files replace the directory entries at their paths.
    XET_ASSIGN_OR_RETURN(
        ScopedStatement stmt,
        db_.Prepare("DELETE FROM bucket_entries WHERE bucket_id = ?1 AND kind = 1 AND path IN ("
                    "SELECT path || '/' FROM temp.bucket_batch_moved WHERE kind = 0)"));
    XET_RETURN_IF_ERROR(stmt->BindInt64(1, bucket_id_));
    XET_RETURN_IF_ERROR(stmt->Run());
  }
  XET_ASSIGN_OR_RETURN(
      ScopedStatement stmt,
      db_.Prepare("INSERT OR REPLACE INTO bucket_entries(bucket_id, path, file_hash, size, "
                  "mtime_ms, uploaded_at_ms, content_type, sha256, kind, posix) SELECT ?1, path, "
                  "file_hash, size, mtime_ms, uploaded_at_ms, content_type, sha256, kind, posix "
                  "FROM temp.bucket_batch_moved ORDER BY path"));
  XET_RETURN_IF_ERROR(stmt->BindInt64(1, bucket_id_));
  XET_RETURN_IF_ERROR(stmt->Run());
  changed_ = true;
  return Status::Ok();
}

Result<bool> SqliteBatchApplier::AnythingAt(const std::string& path, bool include_exact) {
  const std::string lower = DirLower(path);
  const std::string upper = DirUpper(path);
  XET_ASSIGN_OR_RETURN(ScopedStatement stmt,
                       db_.Prepare("SELECT 1 FROM bucket_entries WHERE bucket_id = ?1 AND "
                                   "((?4 AND path = ?2) OR (path >= ?3 AND path < ?5)) LIMIT 1"));
  XET_RETURN_IF_ERROR(stmt->BindInt64(1, bucket_id_));
  XET_RETURN_IF_ERROR(stmt->BindText(2, path));
  XET_RETURN_IF_ERROR(stmt->BindText(3, lower));
  XET_RETURN_IF_ERROR(stmt->BindInt64(4, include_exact ? 1 : 0));
  XET_RETURN_IF_ERROR(stmt->BindText(5, upper));
  return stmt->Step();
}

Status SqliteBatchApplier::Finish() {
  {
    XET_ASSIGN_OR_RETURN(
        ScopedStatement stmt,
        db_.Prepare("DELETE FROM file_scopes WHERE scope = ?2 AND file_hash IN ("
                    "SELECT l.file_hash FROM temp.bucket_batch_lost l WHERE NOT EXISTS("
                    "SELECT 1 FROM bucket_entries e WHERE e.bucket_id = ?1 "
                    "AND e.file_hash = l.file_hash AND e.kind = 0))"));
    XET_RETURN_IF_ERROR(stmt->BindInt64(1, bucket_id_));
    XET_RETURN_IF_ERROR(stmt->BindText(2, scope_));
    XET_RETURN_IF_ERROR(stmt->Run());
  }
  XET_RETURN_IF_ERROR(db_.Exec("DELETE FROM temp.bucket_batch_lost"));
  if (!changed_) return Status::Ok();
  XET_ASSIGN_OR_RETURN(ScopedStatement stmt,
                       db_.Prepare("UPDATE buckets SET total_files = total_files + ?2, "
                                   "total_size = total_size + ?3, updated_at_ms = ?4, "
                                   "generation = generation + 1 WHERE id = ?1"));
  XET_RETURN_IF_ERROR(stmt->BindInt64(1, bucket_id_));
  XET_RETURN_IF_ERROR(stmt->BindInt64(2, delta_files_));
  XET_RETURN_IF_ERROR(stmt->BindInt64(3, delta_size_));
  XET_RETURN_IF_ERROR(stmt->BindInt64(4, now_ms_));
  return stmt->Run();
}

// ---------------------------------------------------------------------------------------
// Listings.

// One read of a listing: the walk's current range, in key order, until the walk stops it.
Status ReadTreeRange(SqliteDb& db, int64_t bucket_id, BucketTreeWalk& walk) {
#define XET_TREE_SQL(op, upper)                                                                    \
  "SELECT " XET_ENTRY_COLUMNS " FROM bucket_entries WHERE bucket_id = ?1 AND path " op " ?2" upper \
  " ORDER BY path"
  const char* sql = walk.upper()
                        ? (walk.lower_inclusive() ? XET_TREE_SQL(">=", " AND path < ?3")
                                                  : XET_TREE_SQL(">", " AND path < ?3"))
                        : (walk.lower_inclusive() ? XET_TREE_SQL(">=", "") : XET_TREE_SQL(">", ""));
#undef XET_TREE_SQL
  XET_ASSIGN_OR_RETURN(ScopedStatement stmt, db.Prepare(sql));
  XET_RETURN_IF_ERROR(stmt->BindInt64(1, bucket_id));
  XET_RETURN_IF_ERROR(stmt->BindText(2, walk.lower()));
  if (walk.upper()) XET_RETURN_IF_ERROR(stmt->BindText(3, *walk.upper()));
  const std::function<Result<BucketEntry>()> read_entry = [&] { return ReadEntry(*stmt); };
  while (true) {
    XET_ASSIGN_OR_RETURN(bool row, stmt->Step());
    if (!row) {
      walk.EndOfRange();
      return Status::Ok();
    }
    XET_ASSIGN_OR_RETURN(BucketTreeWalk::Next next,
                         walk.Offer(stmt->ColumnText(0), stmt->ColumnInt64(7) == kDirectoryKind,
                                    stmt->ColumnText(8).size(), read_entry));
    if (next != BucketTreeWalk::Next::kMore) return Status::Ok();
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------
// SqliteIndex methods.

Result<BucketRecord> SqliteIndex::CreateBucket(const std::string& ns, const std::string& name,
                                               bool is_private, int64_t now_ms) {
  Status st = writer_->Submit([&](SqliteDb& db) -> Status {
    XET_ASSIGN_OR_RETURN(
        ScopedStatement stmt,
        db.Prepare("INSERT INTO buckets(ns, name, private, created_at_ms, updated_at_ms) "
                   "VALUES(?1, ?2, ?3, ?4, ?4) ON CONFLICT(ns, name) DO NOTHING"));
    XET_RETURN_IF_ERROR(stmt->BindText(1, ns));
    XET_RETURN_IF_ERROR(stmt->BindText(2, name));
    XET_RETURN_IF_ERROR(stmt->BindInt64(3, is_private ? 1 : 0));
    XET_RETURN_IF_ERROR(stmt->BindInt64(4, now_ms));
    XET_RETURN_IF_ERROR(stmt->Run());
    if (db.Changes() == 0) {
      return Status::AlreadyExists("bucket " + BucketFullName(ns, name) + " already exists");
    }
    return Status::Ok();
  });
  XET_RETURN_IF_ERROR(st);
  return NewBucketRecord(ns, name, is_private, now_ms);
}

Result<std::optional<BucketRecord>> SqliteIndex::GetBucket(const std::string& ns,
                                                           const std::string& name) {
  auto lease = readers_->Acquire();
  XET_ASSIGN_OR_RETURN(ScopedStatement stmt,
                       lease.db().Prepare(std::string("SELECT ") + kBucketColumns +
                                          " FROM buckets WHERE ns = ?1 AND name = ?2"));
  XET_RETURN_IF_ERROR(stmt->BindText(1, ns));
  XET_RETURN_IF_ERROR(stmt->BindText(2, name));
  XET_ASSIGN_OR_RETURN(bool row, stmt->Step());
  if (!row) return std::optional<BucketRecord>();
  XET_ASSIGN_OR_RETURN(BucketRecord b, ReadBucket(*stmt));
  return std::optional<BucketRecord>(std::move(b));
}

Result<std::vector<BucketRecord>> SqliteIndex::ListBuckets(const std::string& ns,
                                                           const std::string& search,
                                                           const std::string& after, size_t limit) {
  std::vector<BucketRecord> out;
  if (limit == 0) return out;
  const auto [after_ns, after_name] = BucketListingStart(after);
  auto lease = readers_->Acquire();
  XET_ASSIGN_OR_RETURN(ScopedStatement stmt,
                       lease.db().Prepare(std::string("SELECT ") + kBucketColumns +
                                          " FROM buckets WHERE (?1 = '' OR ns = ?1) AND "
                                          "(?2 = '' OR instr(lower(name), lower(?2)) > 0) AND "
                                          "(ns, name) > (?3, ?4) ORDER BY ns, name LIMIT ?5"));
  XET_RETURN_IF_ERROR(stmt->BindText(1, ns));
  XET_RETURN_IF_ERROR(stmt->BindText(2, search));
  XET_RETURN_IF_ERROR(stmt->BindText(3, after_ns));
  XET_RETURN_IF_ERROR(stmt->BindText(4, after_name));
  XET_RETURN_IF_ERROR(stmt->BindInt64(5, SqlLimit(limit)));
  while (true) {
    XET_ASSIGN_OR_RETURN(bool row, stmt->Step());
    if (!row) break;
    XET_ASSIGN_OR_RETURN(BucketRecord b, ReadBucket(*stmt));
    out.push_back(std::move(b));
  }
  return out;
}

Status SqliteIndex::DeleteBucket(const std::string& ns, const std::string& name) {
  const Scope scope = BucketFullName(ns, name);
  return writer_->Submit([&](SqliteDb& db) -> Status {
    XET_ASSIGN_OR_RETURN(const int64_t id, RequireBucketId(db, ns, name));
    {
      XET_ASSIGN_OR_RETURN(ScopedStatement stmt,
                           db.Prepare("DELETE FROM bucket_entries WHERE bucket_id = ?1"));
      XET_RETURN_IF_ERROR(stmt->BindInt64(1, id));
      XET_RETURN_IF_ERROR(stmt->Run());
    }
    XET_RETURN_IF_ERROR(DeleteScope(db, "file_scopes", scope));
    XET_RETURN_IF_ERROR(DeleteScope(db, "xorb_scopes", scope));
    XET_ASSIGN_OR_RETURN(ScopedStatement stmt, db.Prepare("DELETE FROM buckets WHERE id = ?1"));
    XET_RETURN_IF_ERROR(stmt->BindInt64(1, id));
    return stmt->Run();
  });
}

Status SqliteIndex::MoveBucket(const std::string& from_ns, const std::string& from_name,
                               const std::string& to_ns, const std::string& to_name,
                               int64_t now_ms) {
  const Scope from = BucketFullName(from_ns, from_name);
  const Scope to = BucketFullName(to_ns, to_name);
  return writer_->Submit([&](SqliteDb& db) -> Status {
    XET_ASSIGN_OR_RETURN(const int64_t id, RequireBucketId(db, from_ns, from_name));
    XET_ASSIGN_OR_RETURN(std::optional<int64_t> taken, FindBucketId(db, to_ns, to_name));
    if (taken) return Status::AlreadyExists("bucket " + to + " already exists");
    {
      XET_ASSIGN_OR_RETURN(ScopedStatement stmt,
                           db.Prepare("UPDATE buckets SET ns = ?2, name = ?3, updated_at_ms = ?4, "
                                      "generation = generation + 1 WHERE id = ?1"));
      XET_RETURN_IF_ERROR(stmt->BindInt64(1, id));
      XET_RETURN_IF_ERROR(stmt->BindText(2, to_ns));
      XET_RETURN_IF_ERROR(stmt->BindText(3, to_name));
      XET_RETURN_IF_ERROR(stmt->BindInt64(4, now_ms));
      XET_RETURN_IF_ERROR(stmt->Run());
    }
    XET_RETURN_IF_ERROR(RenameScope(db, "file_scopes", from, to));
    XET_RETURN_IF_ERROR(RenameScope(db, "xorb_scopes", from, to));
    XET_ASSIGN_OR_RETURN(ScopedStatement stmt,
                         db.Prepare("UPDATE shards SET scope = ?2 WHERE scope = ?1"));
    XET_RETURN_IF_ERROR(stmt->BindText(1, from));
    XET_RETURN_IF_ERROR(stmt->BindText(2, to));
    return stmt->Run();
  });
}

Result<BucketBatchResult> SqliteIndex::ApplyBucketBatch(const std::string& ns,
                                                        const std::string& name,
                                                        const std::vector<BucketOp>& ops,
                                                        int64_t now_ms) {
  BucketBatchResult result;
  Status st = writer_->Submit([&](SqliteDb& db) -> Status {
    // The group committer may run this more than once: each run's result replaces the last.
    XET_ASSIGN_OR_RETURN(const int64_t id, RequireBucketId(db, ns, name));
    SqliteBatchApplier applier(db, id, BucketFullName(ns, name), now_ms);
    XET_ASSIGN_OR_RETURN(result, applier.ApplyBatch(ops));
    return Status::Ok();
  });
  XET_RETURN_IF_ERROR(st);
  return result;
}

Status SqliteIndex::ImportBucketEntries(const BucketRecord& bucket,
                                        std::span<const BucketEntry> put,
                                        std::span<const BucketEntry> remove) {
  XET_ASSIGN_OR_RETURN(const int64_t generation, ToSqlInt(bucket.generation, "bucket generation"));
  return writer_->Submit([&](SqliteDb& db) -> Status {
    {
      XET_ASSIGN_OR_RETURN(
          ScopedStatement stmt,
          db.Prepare("INSERT INTO buckets(ns, name, private, created_at_ms, updated_at_ms) "
                     "VALUES(?1, ?2, ?3, ?4, ?4) ON CONFLICT(ns, name) DO NOTHING"));
      XET_RETURN_IF_ERROR(stmt->BindText(1, bucket.ns));
      XET_RETURN_IF_ERROR(stmt->BindText(2, bucket.name));
      XET_RETURN_IF_ERROR(stmt->BindInt64(3, bucket.is_private ? 1 : 0));
      XET_RETURN_IF_ERROR(stmt->BindInt64(4, bucket.created_at_ms));
      XET_RETURN_IF_ERROR(stmt->Run());
    }
    XET_ASSIGN_OR_RETURN(const int64_t id, RequireBucketId(db, bucket.ns, bucket.name));
    SqliteBatchApplier applier(db, id, bucket.FullName(), bucket.updated_at_ms);
    XET_RETURN_IF_ERROR(applier.Import(put, remove));
    XET_ASSIGN_OR_RETURN(ScopedStatement stmt,
                         db.Prepare("UPDATE buckets SET private = ?2, updated_at_ms = ?3, "
                                    "generation = max(generation, ?4) WHERE id = ?1"));
    XET_RETURN_IF_ERROR(stmt->BindInt64(1, id));
    XET_RETURN_IF_ERROR(stmt->BindInt64(2, bucket.is_private ? 1 : 0));
    XET_RETURN_IF_ERROR(stmt->BindInt64(3, bucket.updated_at_ms));
    XET_RETURN_IF_ERROR(stmt->BindInt64(4, generation));
    return stmt->Run();
  });
}

Result<std::optional<BucketEntry>> SqliteIndex::GetBucketEntry(const std::string& ns,
                                                               const std::string& name,
                                                               const std::string& path) {
  auto lease = readers_->Acquire();
  ReadSnapshot snapshot(lease.db());
  XET_RETURN_IF_ERROR(snapshot.Begin());
  XET_ASSIGN_OR_RETURN(const int64_t id, RequireBucketId(lease.db(), ns, name));
  return FindEntry(lease.db(), id, path, /*directories=*/true);
}

Result<std::vector<BucketEntry>> SqliteIndex::GetBucketEntries(const std::string& ns,
                                                               const std::string& name,
                                                               std::span<const std::string> paths) {
  auto lease = readers_->Acquire();
  ReadSnapshot snapshot(lease.db());
  XET_RETURN_IF_ERROR(snapshot.Begin());
  XET_ASSIGN_OR_RETURN(const int64_t id, RequireBucketId(lease.db(), ns, name));
  std::vector<BucketEntry> out;
  out.reserve(paths.size());
  for (const std::string& path : paths) {
    XET_ASSIGN_OR_RETURN(std::optional<BucketEntry> e,
                         FindEntry(lease.db(), id, path, /*directories=*/true));
    if (e) out.push_back(std::move(*e));
  }
  return out;
}

Result<BucketTreePage> SqliteIndex::ListBucketTree(const std::string& ns, const std::string& name,
                                                   const std::string& prefix, bool recursive,
                                                   const std::string& cursor, size_t limit) {
  XET_ASSIGN_OR_RETURN(BucketTreeWalk walk,
                       BucketTreeWalk::Begin(prefix, recursive, cursor, limit));
  auto lease = readers_->Acquire();
  ReadSnapshot snapshot(lease.db());
  XET_RETURN_IF_ERROR(snapshot.Begin());
  XET_ASSIGN_OR_RETURN(const int64_t id, RequireBucketId(lease.db(), ns, name));
  if (!prefix.empty()) {
    XET_ASSIGN_OR_RETURN(std::optional<BucketEntry> file,
                         FindEntry(lease.db(), id, prefix, /*directories=*/false));
    if (file) return walk.FilePage(std::move(*file));  // a prefix naming a file
  }
  while (!walk.done()) XET_RETURN_IF_ERROR(ReadTreeRange(lease.db(), id, walk));
  return walk.TakePage();
}

}  // namespace xet
