// PostgresIndex: the bucket part of the Index contract, the same semantics as
// store/sqlite/sqlite_bucket_index.cc (whose header comment states the invariants), on
// PostgreSQL:
// - A batch is one READ COMMITTED transaction that first locks the bucket's row (FOR
//   UPDATE): batches of one bucket run one after another, each seeing all the earlier ones
//   (a deadlock is retried from scratch by PgPool::RunTransaction).
// - Each BucketOp checks everything that can make it fail before it writes, so a failing op
//   has written nothing; a storage error fails the whole batch.
// - Prefix copies and moves are set-based through a session TEMP table (ON COMMIT DELETE
//   ROWS), whatever the number of entries.
// - Entry keys are BYTEA (bytewise order, any bytes); explicit directory entries live at
//   path + "/" (store/bucket_keys.h).
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
#include "store/postgres/pg_values.h"
#include "store/postgres/postgres_index.h"

namespace xet {
namespace {

constexpr int64_t kPgFileKind = 0;
constexpr int64_t kPgDirectoryKind = 1;

#define XET_PG_BUCKET_COLUMNS \
  "ns, name, private, created_at_ms, updated_at_ms, total_size, total_files, generation"
#define XET_PG_ENTRY_COLUMNS \
  "path, file_hash, size, mtime_ms, uploaded_at_ms, content_type, sha256, kind, posix"

Result<BucketRecord> ReadBucketRow(const PgResult& r, int row) {
  BucketRecord b;
  b.ns = std::string(r.Text(row, 0));
  b.name = std::string(r.Text(row, 1));
  b.is_private = r.Bool(row, 2);
  b.created_at_ms = r.Int(row, 3);
  b.updated_at_ms = r.Int(row, 4);
  XET_ASSIGN_OR_RETURN(b.total_size, r.SizeAt(row, 5, "bucket total size"));
  XET_ASSIGN_OR_RETURN(b.total_files, r.SizeAt(row, 6, "bucket file count"));
  XET_ASSIGN_OR_RETURN(b.generation, r.SizeAt(row, 7, "bucket generation"));
  return b;
}

Result<BucketEntry> ReadEntryRow(const PgResult& r, int row) {
  BucketEntry e;
  e.path = std::string(r.Text(row, 0));
  XET_ASSIGN_OR_RETURN(e.file_hash, r.HashAt(row, 1, "entry file hash"));
  XET_ASSIGN_OR_RETURN(e.size, r.SizeAt(row, 2, "entry size"));
  e.mtime_ms = r.Int(row, 3);
  e.uploaded_at_ms = r.Int(row, 4);
  e.content_type = std::string(r.Text(row, 5));
  if (!r.IsNull(row, 6)) {
    XET_ASSIGN_OR_RETURN(e.sha256, r.HashAt(row, 6, "entry sha256"));
  }
  if (r.Int(row, 7) == kPgDirectoryKind) {
    if (!e.path.ends_with('/')) return Status::Corruption("index directory entry without '/'");
    e.path.pop_back();
    e.is_directory = true;
  }
  if (!r.IsNull(row, 8)) {
    auto posix = DecodePosixJson(r.Text(row, 8));
    if (!posix.ok()) {
      return Status::Corruption("index entry " + e.path + ": " + posix.status().message());
    }
    e.posix = std::move(*posix);
  }
  return e;
}

std::optional<std::string> PosixBytes(const std::optional<PosixMetadata>& posix) {
  if (!posix) return std::nullopt;
  return EncodePosixJson(*posix);
}

// The id of bucket ns/name, or nullopt; `lock`: and lock its row until the transaction ends.
Result<std::optional<int64_t>> FindBucketRow(PgConnection& conn, std::string_view ns,
                                             std::string_view name, bool lock) {
  XET_ASSIGN_OR_RETURN(
      PgResult r, conn.Exec(lock ? "SELECT id FROM buckets WHERE ns = $1 AND name = $2 FOR UPDATE"
                                 : "SELECT id FROM buckets WHERE ns = $1 AND name = $2",
                            PgParams().Text(ns).Text(name)));
  if (r.rows() == 0) return std::optional<int64_t>();
  return std::optional<int64_t>(r.Int(0, 0));
}

Result<int64_t> RequireBucketRow(PgConnection& conn, std::string_view ns, std::string_view name,
                                 bool lock) {
  XET_ASSIGN_OR_RETURN(std::optional<int64_t> id, FindBucketRow(conn, ns, name, lock));
  if (!id) return BucketNotFound(ns, name);
  return *id;
}

// The file entry at `path`, or (with `directories`, when there is none) the explicit
// directory entry of `path`.
Result<std::optional<BucketEntry>> FindEntryRow(PgConnection& conn, int64_t bucket_id,
                                                std::string_view path, bool directories) {
  const std::string second = directories ? MarkerKey(path) : std::string(path);
  XET_ASSIGN_OR_RETURN(PgResult r,
                       conn.Exec("SELECT " XET_PG_ENTRY_COLUMNS
                                 " FROM bucket_entries WHERE bucket_id = $1 AND path IN ($2, $3) "
                                 "ORDER BY path LIMIT 1",
                                 PgParams().Int(bucket_id).Bytes(path).Bytes(second)));
  if (r.rows() == 0) return std::optional<BucketEntry>();
  XET_ASSIGN_OR_RETURN(BucketEntry e, ReadEntryRow(r, 0));
  return std::optional<BucketEntry>(std::move(e));
}

// Rewrites every visibility row of scope `from` to `to` in `table` (keyed by `hash_column`);
// rows `to` already has are dropped instead. Both names are constants of this file.
Status RenameScopeRows(PgConnection& conn, const char* table, const char* hash_column,
                       const std::string& from, const std::string& to) {
  const std::string t(table), h(hash_column);
  XET_RETURN_IF_ERROR(conn.Exec("UPDATE " + t +
                                    " SET scope = $2 WHERE scope = $1 AND NOT EXISTS("
                                    "SELECT 1 FROM " +
                                    t + " o WHERE o." + h + " = " + t + "." + h +
                                    " AND o.scope = $2)",
                                PgParams().Text(from).Text(to))
                          .status());
  return conn.Exec("DELETE FROM " + t + " WHERE scope = $1", PgParams().Text(from)).status();
}

// ---------------------------------------------------------------------------------------
// Batches: the storage steps of store/bucket_batch_applier.h on PostgreSQL.

class PgBatchApplier final : public BucketBatchApplier {
 public:
  PgBatchApplier(PgConnection& conn, int64_t bucket_id, Scope scope, int64_t now_ms)
      : BucketBatchApplier(bucket_id, std::move(scope), now_ms), conn_(conn) {}

 private:
  Status Begin() override;
  Status Finish() override;
  Result<std::optional<int64_t>> FindBucketId(std::string_view ns, std::string_view name) override {
    return FindBucketRow(conn_, ns, name, /*lock=*/false);
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
  Status ClearStaged() override { return conn_.Exec("DELETE FROM pg_temp.batch_moved").status(); }
  Result<bool> EntryAtKey(const std::string& key) override;
  Result<bool> AnythingAt(const std::string& path, bool include_exact) override;
  Result<std::optional<EntryAt>> FindEntryAt(const std::string& path) override;
  Status UpdateMetadata(const std::string& key, const std::optional<PosixMetadata>& posix,
                        int64_t mtime_ms) override;

  PgConnection& conn_;
};

Status PgBatchApplier::Begin() {
  XET_RETURN_IF_ERROR(
      conn_.ExecSimple("CREATE TEMP TABLE IF NOT EXISTS batch_lost(file_hash BYTEA PRIMARY KEY) "
                       "ON COMMIT DELETE ROWS;"
                       "CREATE TEMP TABLE IF NOT EXISTS batch_moved(path BYTEA PRIMARY KEY, "
                       "file_hash BYTEA NOT NULL, size BIGINT NOT NULL, mtime_ms BIGINT NOT NULL, "
                       "uploaded_at_ms BIGINT NOT NULL, content_type BYTEA NOT NULL, sha256 BYTEA, "
                       "kind SMALLINT NOT NULL, posix BYTEA) ON COMMIT DELETE ROWS;"));
  XET_RETURN_IF_ERROR(conn_.Exec("DELETE FROM pg_temp.batch_lost").status());
  return ClearStaged();
}

Result<std::optional<BucketBatchApplier::FileFacts>> PgBatchApplier::VisibleFile(const Hash& file) {
  XET_ASSIGN_OR_RETURN(
      PgResult r, conn_.Exec("SELECT f.size, f.sha256 FROM files f WHERE f.hash = $1 AND EXISTS("
                             "SELECT 1 FROM file_scopes s WHERE s.file_hash = $1 AND s.scope = $2)",
                             PgParams().Hash(file).Text(scope_)));
  if (r.rows() == 0) return std::optional<FileFacts>();
  FileFacts facts;
  facts.size = r.Int(0, 0);
  if (!r.IsNull(0, 1)) {
    XET_ASSIGN_OR_RETURN(facts.sha256, r.HashAt(0, 1, "file sha256"));
  }
  return std::optional<FileFacts>(std::move(facts));
}

Result<std::optional<BucketBatchApplier::SourceEntry>> PgBatchApplier::EntryWithFile(
    int64_t bucket_id, const Hash& file) {
  XET_ASSIGN_OR_RETURN(PgResult r,
                       conn_.Exec("SELECT size, sha256, mtime_ms, content_type FROM bucket_entries "
                                  "WHERE bucket_id = $1 AND file_hash = $2 AND kind = 0 LIMIT 1",
                                  PgParams().Int(bucket_id).Hash(file)));
  if (r.rows() == 0) return std::optional<SourceEntry>();
  SourceEntry s;
  s.size = r.Int(0, 0);
  if (!r.IsNull(0, 1)) {
    XET_ASSIGN_OR_RETURN(s.sha256, r.HashAt(0, 1, "entry sha256"));
  }
  s.mtime_ms = r.Int(0, 2);
  s.content_type = std::string(r.Text(0, 3));
  return std::optional<SourceEntry>(std::move(s));
}

Status PgBatchApplier::MakeVisible(const Hash& file) {
  return conn_
      .Exec(
          "INSERT INTO file_scopes(file_hash, scope) SELECT $1, $2 "
          "WHERE EXISTS(SELECT 1 FROM files WHERE hash = $1) ON CONFLICT DO NOTHING",
          PgParams().Hash(file).Text(scope_))
      .status();
}

Result<uint64_t> PgBatchApplier::DeleteEntryKeys(const std::string& key,
                                                 const std::string& other_key) {
  // A removed file entry's file may have lost its last entry here.
  XET_ASSIGN_OR_RETURN(
      PgResult r,
      conn_.Exec("WITH del AS (DELETE FROM bucket_entries WHERE bucket_id = $1 AND "
                 "path IN ($2, $3) RETURNING file_hash, size, kind), "
                 "lost AS (INSERT INTO pg_temp.batch_lost(file_hash) SELECT file_hash FROM del "
                 "WHERE kind = 0 ON CONFLICT DO NOTHING) SELECT size, kind FROM del",
                 PgParams().Int(bucket_id_).Bytes(key).Bytes(other_key)));
  for (int row = 0; row < r.rows(); ++row) {
    changed_ = true;
    if (r.Int(row, 1) != kPgFileKind) continue;
    delta_files_ -= 1;
    delta_size_ -= r.Int(row, 0);
  }
  return static_cast<uint64_t>(r.rows());
}

Status PgBatchApplier::MakeStagedVisible() {
  return conn_
      .Exec(
          "INSERT INTO file_scopes(file_hash, scope) "
          "SELECT DISTINCT m.file_hash, $1::text FROM pg_temp.batch_moved m "
          "WHERE m.kind = 0 AND EXISTS(SELECT 1 FROM files f WHERE f.hash = m.file_hash) "
          "ON CONFLICT DO NOTHING",
          PgParams().Text(scope_))
      .status();
}

Result<bool> PgBatchApplier::EntryAtKey(const std::string& key) {
  XET_ASSIGN_OR_RETURN(PgResult r,
                       conn_.Exec("SELECT 1 FROM bucket_entries WHERE bucket_id = $1 AND path = $2",
                                  PgParams().Int(bucket_id_).Bytes(key)));
  return r.rows() > 0;
}

Result<std::optional<BucketBatchApplier::EntryAt>> PgBatchApplier::FindEntryAt(
    const std::string& path) {
  XET_ASSIGN_OR_RETURN(
      PgResult r, conn_.Exec("SELECT path, file_hash, kind FROM bucket_entries WHERE bucket_id = "
                             "$1 AND path IN ($2, $3) ORDER BY path LIMIT 1",
                             PgParams().Int(bucket_id_).Bytes(path).Bytes(MarkerKey(path))));
  if (r.rows() == 0) return std::optional<EntryAt>();
  EntryAt at;
  at.key = std::string(r.Text(0, 0));
  at.is_file = r.Int(0, 2) == kPgFileKind;
  if (at.is_file) {
    XET_ASSIGN_OR_RETURN(at.file_hash, r.HashAt(0, 1, "entry file hash"));
  }
  return std::optional<EntryAt>(std::move(at));
}

Status PgBatchApplier::UpdateMetadata(const std::string& key,
                                      const std::optional<PosixMetadata>& posix, int64_t mtime_ms) {
  return conn_
      .Exec(
          "UPDATE bucket_entries SET posix = $3, mtime_ms = "
          "CASE WHEN $4 = 0 THEN mtime_ms ELSE $4 END WHERE bucket_id = $1 AND path = $2",
          PgParams().Int(bucket_id_).Bytes(key).OptBytes(PosixBytes(posix)).Int(mtime_ms))
      .status();
}

Status PgBatchApplier::PutEntry(const NewEntry& e) {
  // One round trip: every part of the statement sees the entries as they were before it, so
  // `old` is the file entry being replaced, whose file may have lost its last entry here. A
  // file also replaces the directory entry at its path ($11).
  const std::string key = e.directory ? MarkerKey(*e.path) : *e.path;
  XET_ASSIGN_OR_RETURN(
      PgResult old,
      conn_.Exec("WITH old AS (SELECT file_hash, size FROM bucket_entries WHERE "
                 "bucket_id = $1 AND path = $2 AND kind = 0), "
                 "marker AS (DELETE FROM bucket_entries WHERE $11 AND bucket_id = $1 AND "
                 "path = $12 AND kind = 1), "
                 "lost AS (INSERT INTO pg_temp.batch_lost(file_hash) SELECT file_hash FROM old "
                 "WHERE file_hash <> $3 ON CONFLICT DO NOTHING), "
                 "put AS (INSERT INTO bucket_entries(bucket_id, path, file_hash, size, mtime_ms, "
                 "uploaded_at_ms, content_type, sha256, kind, posix) "
                 "VALUES($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) "
                 "ON CONFLICT(bucket_id, path) DO UPDATE SET file_hash = excluded.file_hash, "
                 "size = excluded.size, mtime_ms = excluded.mtime_ms, "
                 "uploaded_at_ms = excluded.uploaded_at_ms, "
                 "content_type = excluded.content_type, sha256 = excluded.sha256, "
                 "kind = excluded.kind, posix = excluded.posix) "
                 "SELECT size FROM old",
                 PgParams()
                     .Int(bucket_id_)
                     .Bytes(key)
                     .Hash(e.file_hash)
                     .Int(e.size)
                     .Int(e.mtime_ms)
                     .Int(e.uploaded_at_ms.value_or(now_ms_))
                     .Bytes(e.content_type)
                     .OptHash(e.sha256)
                     .Int(e.directory ? kPgDirectoryKind : kPgFileKind)
                     .OptBytes(PosixBytes(*e.posix))
                     .Bool(!e.directory)
                     .Bytes(MarkerKey(*e.path))));
  if (old.rows() > 0) {
    delta_files_ -= 1;
    delta_size_ -= old.Int(0, 0);
  }
  if (!e.directory) {
    delta_files_ += 1;
    delta_size_ += e.size;
  }
  changed_ = true;
  return Status::Ok();
}

Result<int64_t> PgBatchApplier::StagePrefix(int64_t source_id, const std::string& from,
                                            const std::string& to) {
  XET_ASSIGN_OR_RETURN(
      PgResult r,
      conn_.Exec("INSERT INTO pg_temp.batch_moved(path, file_hash, size, mtime_ms, "
                 "uploaded_at_ms, content_type, sha256, kind, posix) "
                 "SELECT $5 || substring(path from $6::int), file_hash, size, mtime_ms, $7, "
                 "content_type, sha256, kind, posix FROM bucket_entries "
                 "WHERE bucket_id = $1 AND (path = $2 OR (path >= $3 AND path < $4))",
                 PgParams()
                     .Int(source_id)
                     .Bytes(from)
                     .Bytes(DirLower(from))
                     .Bytes(DirUpper(from))
                     .Bytes(to)
                     .Int(static_cast<int64_t>(from.size()) + 1)
                     .Int(now_ms_)));
  return r.Affected();
}

Status PgBatchApplier::DeletePrefix(const std::string& from) {
  return conn_
      .Exec(
          "DELETE FROM bucket_entries WHERE bucket_id = $1 AND "
          "(path = $2 OR (path >= $3 AND path < $4))",
          PgParams().Int(bucket_id_).Bytes(from).Bytes(DirLower(from)).Bytes(DirUpper(from)))
      .status();
}

Status PgBatchApplier::WriteStaged(bool replace_sources) {
  {
    XET_ASSIGN_OR_RETURN(
        PgResult r,
        conn_.Exec("SELECT count(*), coalesce(sum(e.size), 0)::bigint FROM pg_temp.batch_moved m "
                   "JOIN bucket_entries e ON e.bucket_id = $1 AND e.path = m.path "
                   "WHERE e.kind = 0",
                   PgParams().Int(bucket_id_)));
    delta_files_ -= r.Int(0, 0);
    delta_size_ -= r.Int(0, 1);
  }
  XET_RETURN_IF_ERROR(
      conn_
          .Exec("INSERT INTO pg_temp.batch_lost(file_hash) SELECT e.file_hash "
                "FROM pg_temp.batch_moved m JOIN bucket_entries e "
                "ON e.bucket_id = $1 AND e.path = m.path "
                "WHERE e.kind = 0 AND e.file_hash <> m.file_hash ON CONFLICT DO NOTHING",
                PgParams().Int(bucket_id_))
          .status());
  if (!replace_sources) {
    XET_ASSIGN_OR_RETURN(PgResult r, conn_.Exec("SELECT count(*), coalesce(sum(size), 0)::bigint "
                                                "FROM pg_temp.batch_moved WHERE kind = 0"));
    delta_files_ += r.Int(0, 0);
    delta_size_ += r.Int(0, 1);
  }
  // Staged files replace the directory entries at their paths.
  XET_RETURN_IF_ERROR(
      conn_
          .Exec("DELETE FROM bucket_entries WHERE bucket_id = $1 AND kind = 1 AND path IN ("
                "SELECT path || '\\x2f'::bytea FROM pg_temp.batch_moved WHERE kind = 0)",
                PgParams().Int(bucket_id_))
          .status());
  XET_RETURN_IF_ERROR(
      conn_
          .Exec("INSERT INTO bucket_entries(bucket_id, path, file_hash, size, mtime_ms, "
                "uploaded_at_ms, content_type, sha256, kind, posix) SELECT $1, path, "
                "file_hash, size, mtime_ms, uploaded_at_ms, content_type, sha256, kind, posix "
                "FROM pg_temp.batch_moved ORDER BY path "
                "ON CONFLICT(bucket_id, path) DO UPDATE SET file_hash = excluded.file_hash, "
                "size = excluded.size, mtime_ms = excluded.mtime_ms, "
                "uploaded_at_ms = excluded.uploaded_at_ms, "
                "content_type = excluded.content_type, sha256 = excluded.sha256, "
                "kind = excluded.kind, posix = excluded.posix",
                PgParams().Int(bucket_id_))
          .status());
  changed_ = true;
  return Status::Ok();
}

Result<bool> PgBatchApplier::AnythingAt(const std::string& path, bool include_exact) {
  XET_ASSIGN_OR_RETURN(PgResult r,
                       conn_.Exec("SELECT 1 FROM bucket_entries WHERE bucket_id = $1 AND "
                                  "(($4 AND path = $2) OR (path >= $3 AND path < $5)) LIMIT 1",
                                  PgParams()
                                      .Int(bucket_id_)
                                      .Bytes(path)
                                      .Bytes(DirLower(path))
                                      .Bool(include_exact)
                                      .Bytes(DirUpper(path))));
  return r.rows() > 0;
}

Status PgBatchApplier::Finish() {
  XET_RETURN_IF_ERROR(conn_
                          .Exec("DELETE FROM file_scopes WHERE scope = $2 AND file_hash IN ("
                                "SELECT l.file_hash FROM pg_temp.batch_lost l WHERE NOT EXISTS("
                                "SELECT 1 FROM bucket_entries e WHERE e.bucket_id = $1 "
                                "AND e.file_hash = l.file_hash AND e.kind = 0))",
                                PgParams().Int(bucket_id_).Text(scope_))
                          .status());
  XET_RETURN_IF_ERROR(conn_.Exec("DELETE FROM pg_temp.batch_lost").status());
  if (!changed_) return Status::Ok();
  return conn_
      .Exec(
          "UPDATE buckets SET total_files = total_files + $2, "
          "total_size = total_size + $3, updated_at_ms = $4, "
          "generation = generation + 1 WHERE id = $1",
          PgParams().Int(bucket_id_).Int(delta_files_).Int(delta_size_).Int(now_ms_))
      .status();
}

// ---------------------------------------------------------------------------------------
// Listings.

// One read of a listing: at most `rows_per_read` rows of the walk's current range, in key
// order, from its lower bound inclusive (the walk passes over an exclusive bound's row), so
// that the bounds are plain index range conditions.
Status ReadTreeRange(PgConnection& conn, int64_t bucket_id, int64_t rows_per_read,
                     BucketTreeWalk& walk) {
  PgParams params;
  params.Int(bucket_id).Bytes(walk.lower()).Int(rows_per_read);
  if (walk.upper()) params.Bytes(*walk.upper());
  XET_ASSIGN_OR_RETURN(PgResult r,
                       conn.Exec(walk.upper() ? "SELECT " XET_PG_ENTRY_COLUMNS
                                                " FROM bucket_entries WHERE bucket_id = $1 AND "
                                                "path >= $2 AND path < $4 ORDER BY path LIMIT $3"
                                              : "SELECT " XET_PG_ENTRY_COLUMNS
                                                " FROM bucket_entries WHERE bucket_id = $1 AND "
                                                "path >= $2 ORDER BY path LIMIT $3",
                                 params));
  int row = 0;
  const std::function<Result<BucketEntry>()> read_entry = [&] { return ReadEntryRow(r, row); };
  for (; row < r.rows(); ++row) {
    XET_ASSIGN_OR_RETURN(BucketTreeWalk::Next next,
                         walk.Offer(r.Text(row, 0), r.Int(row, 7) == kPgDirectoryKind,
                                    r.IsNull(row, 8) ? 0 : r.Text(row, 8).size(), read_entry));
    if (next != BucketTreeWalk::Next::kMore) return Status::Ok();
  }
  if (r.rows() < rows_per_read) {
    walk.EndOfRange();
  } else {
    walk.ContinueAfter(r.Text(r.rows() - 1, 0));
  }
  return Status::Ok();
}

}  // namespace

// ---------------------------------------------------------------------------------------
// PostgresIndex methods.

Result<BucketRecord> PostgresIndex::CreateBucket(const std::string& ns, const std::string& name,
                                                 bool is_private, int64_t now_ms) {
  Status st =
      pool_->RunTransaction(PgIsolation::kReadCommitted, false, [&](PgConnection& conn) -> Status {
        XET_ASSIGN_OR_RETURN(
            PgResult r,
            conn.Exec("INSERT INTO buckets(ns, name, private, created_at_ms, updated_at_ms) "
                      "VALUES($1, $2, $3, $4, $4) ON CONFLICT(ns, name) DO NOTHING",
                      PgParams().Text(ns).Text(name).Bool(is_private).Int(now_ms)));
        if (r.Affected() == 0) {
          return Status::AlreadyExists("bucket " + BucketFullName(ns, name) + " already exists");
        }
        return Status::Ok();
      });
  XET_RETURN_IF_ERROR(st);
  return NewBucketRecord(ns, name, is_private, now_ms);
}

Result<std::optional<BucketRecord>> PostgresIndex::GetBucket(const std::string& ns,
                                                             const std::string& name) {
  XET_ASSIGN_OR_RETURN(PgResult r, pool_->ExecOnce("SELECT " XET_PG_BUCKET_COLUMNS
                                                   " FROM buckets WHERE ns = $1 AND name = $2",
                                                   PgParams().Text(ns).Text(name)));
  if (r.rows() == 0) return std::optional<BucketRecord>();
  XET_ASSIGN_OR_RETURN(BucketRecord b, ReadBucketRow(r, 0));
  return std::optional<BucketRecord>(std::move(b));
}

Result<std::vector<BucketRecord>> PostgresIndex::ListBuckets(const std::string& ns,
                                                             const std::string& search,
                                                             const std::string& after,
                                                             size_t limit) {
  std::vector<BucketRecord> out;
  if (limit == 0) return out;
  const auto [after_ns, after_name] = BucketListingStart(after);
  XET_ASSIGN_OR_RETURN(
      PgResult r,
      pool_->ExecOnce(
          "SELECT " XET_PG_BUCKET_COLUMNS " FROM buckets WHERE ($1 = '' OR ns = $1) AND "
          "($2 = '' OR strpos(lower(name), lower($2 COLLATE \"C\")) > 0) AND "
          "(ns, name) > ($3 COLLATE \"C\", $4 COLLATE \"C\") "
          "ORDER BY ns, name LIMIT $5",
          PgParams().Text(ns).Text(search).Text(after_ns).Text(after_name).Int(PgLimit(limit))));
  for (int row = 0; row < r.rows(); ++row) {
    XET_ASSIGN_OR_RETURN(BucketRecord b, ReadBucketRow(r, row));
    out.push_back(std::move(b));
  }
  return out;
}

Status PostgresIndex::DeleteBucket(const std::string& ns, const std::string& name) {
  const Scope scope = BucketFullName(ns, name);
  return pool_->RunTransaction(
      PgIsolation::kReadCommitted, false, [&](PgConnection& conn) -> Status {
        XET_ASSIGN_OR_RETURN(const int64_t id, RequireBucketRow(conn, ns, name, /*lock=*/true));
        XET_RETURN_IF_ERROR(
            conn.Exec("DELETE FROM bucket_entries WHERE bucket_id = $1", PgParams().Int(id))
                .status());
        XET_RETURN_IF_ERROR(
            conn.Exec("DELETE FROM file_scopes WHERE scope = $1", PgParams().Text(scope)).status());
        XET_RETURN_IF_ERROR(
            conn.Exec("DELETE FROM xorb_scopes WHERE scope = $1", PgParams().Text(scope)).status());
        return conn.Exec("DELETE FROM buckets WHERE id = $1", PgParams().Int(id)).status();
      });
}

Status PostgresIndex::MoveBucket(const std::string& from_ns, const std::string& from_name,
                                 const std::string& to_ns, const std::string& to_name,
                                 int64_t now_ms) {
  const Scope from = BucketFullName(from_ns, from_name);
  const Scope to = BucketFullName(to_ns, to_name);
  Status st =
      pool_->RunTransaction(PgIsolation::kReadCommitted, false, [&](PgConnection& conn) -> Status {
        XET_ASSIGN_OR_RETURN(const int64_t id,
                             RequireBucketRow(conn, from_ns, from_name, /*lock=*/true));
        XET_ASSIGN_OR_RETURN(std::optional<int64_t> taken,
                             FindBucketRow(conn, to_ns, to_name, /*lock=*/false));
        if (taken) return Status::AlreadyExists("bucket " + to + " already exists");
        XET_RETURN_IF_ERROR(conn.Exec("UPDATE buckets SET ns = $2, name = $3, updated_at_ms = $4, "
                                      "generation = generation + 1 WHERE id = $1",
                                      PgParams().Int(id).Text(to_ns).Text(to_name).Int(now_ms))
                                .status());
        XET_RETURN_IF_ERROR(RenameScopeRows(conn, "file_scopes", "file_hash", from, to));
        XET_RETURN_IF_ERROR(RenameScopeRows(conn, "xorb_scopes", "xorb_hash", from, to));
        return conn
            .Exec("UPDATE shards SET scope = $2 WHERE scope = $1", PgParams().Text(from).Text(to))
            .status();
      });
  if (st.code() == Status::Code::kAlreadyExists) {
    return Status::AlreadyExists("bucket " + to + " already exists");
  }
  return st;
}

Result<BucketBatchResult> PostgresIndex::ApplyBucketBatch(const std::string& ns,
                                                          const std::string& name,
                                                          const std::vector<BucketOp>& ops,
                                                          int64_t now_ms) {
  BucketBatchResult result;
  Status st =
      pool_->RunTransaction(PgIsolation::kReadCommitted, false, [&](PgConnection& conn) -> Status {
        // The row lock first: every batch of this bucket holds it until it commits, so each
        // statement after it (READ COMMITTED) sees every earlier batch and none of a later one.
        XET_ASSIGN_OR_RETURN(const int64_t id, RequireBucketRow(conn, ns, name, /*lock=*/true));
        PgBatchApplier applier(conn, id, BucketFullName(ns, name), now_ms);
        XET_ASSIGN_OR_RETURN(result, applier.ApplyBatch(ops));
        return Status::Ok();
      });
  XET_RETURN_IF_ERROR(st);
  return result;
}

Status PostgresIndex::ImportBucketEntries(const BucketRecord& bucket,
                                          std::span<const BucketEntry> put,
                                          std::span<const BucketEntry> remove) {
  XET_ASSIGN_OR_RETURN(const int64_t generation, ToPgInt(bucket.generation, "bucket generation"));
  return pool_->RunTransaction(
      PgIsolation::kReadCommitted, false, [&](PgConnection& conn) -> Status {
        XET_RETURN_IF_ERROR(
            conn.Exec("INSERT INTO buckets(ns, name, private, created_at_ms, updated_at_ms) "
                      "VALUES($1, $2, $3, $4, $4) ON CONFLICT(ns, name) DO NOTHING",
                      PgParams()
                          .Text(bucket.ns)
                          .Text(bucket.name)
                          .Bool(bucket.is_private)
                          .Int(bucket.created_at_ms))
                .status());
        // The row lock first, as in ApplyBucketBatch.
        XET_ASSIGN_OR_RETURN(const int64_t id,
                             RequireBucketRow(conn, bucket.ns, bucket.name, /*lock=*/true));
        PgBatchApplier applier(conn, id, bucket.FullName(), bucket.updated_at_ms);
        XET_RETURN_IF_ERROR(applier.Import(put, remove));
        return conn
            .Exec(
                "UPDATE buckets SET private = $2, updated_at_ms = $3, "
                "generation = GREATEST(generation, $4) WHERE id = $1",
                PgParams()
                    .Int(id)
                    .Bool(bucket.is_private)
                    .Int(bucket.updated_at_ms)
                    .Int(generation))
            .status();
      });
}

Result<std::optional<BucketEntry>> PostgresIndex::GetBucketEntry(const std::string& ns,
                                                                 const std::string& name,
                                                                 const std::string& path) {
  std::optional<BucketEntry> out;
  Status st =
      pool_->RunTransaction(PgIsolation::kRepeatableRead, true, [&](PgConnection& conn) -> Status {
        XET_ASSIGN_OR_RETURN(const int64_t id, RequireBucketRow(conn, ns, name, false));
        XET_ASSIGN_OR_RETURN(out, FindEntryRow(conn, id, path, /*directories=*/true));
        return Status::Ok();
      });
  XET_RETURN_IF_ERROR(st);
  return out;
}

Result<std::vector<BucketEntry>> PostgresIndex::GetBucketEntries(
    const std::string& ns, const std::string& name, std::span<const std::string> paths) {
  std::vector<BucketEntry> out;
  Status st =
      pool_->RunTransaction(PgIsolation::kRepeatableRead, true, [&](PgConnection& conn) -> Status {
        out.clear();
        out.reserve(paths.size());
        XET_ASSIGN_OR_RETURN(const int64_t id, RequireBucketRow(conn, ns, name, false));
        if (paths.empty()) return Status::Ok();
        // FindEntryRow for every path at once, in the order given.
        XET_ASSIGN_OR_RETURN(
            PgResult r,
            conn.Exec("SELECT e.* FROM unnest($2::bytea[]) WITH ORDINALITY AS p(want, i) "
                      "CROSS JOIN LATERAL (SELECT " XET_PG_ENTRY_COLUMNS
                      " FROM bucket_entries WHERE bucket_id = $1 AND "
                      "path IN (p.want, p.want || '\\x2f'::bytea) ORDER BY path LIMIT 1) e "
                      "ORDER BY p.i",
                      PgParams().Int(id).BytesArray(paths)));
        for (int row = 0; row < r.rows(); ++row) {
          XET_ASSIGN_OR_RETURN(BucketEntry e, ReadEntryRow(r, row));
          out.push_back(std::move(e));
        }
        return Status::Ok();
      });
  XET_RETURN_IF_ERROR(st);
  return out;
}

Result<BucketTreePage> PostgresIndex::ListBucketTree(const std::string& ns, const std::string& name,
                                                     const std::string& prefix, bool recursive,
                                                     const std::string& cursor, size_t limit) {
  XET_ASSIGN_OR_RETURN(const BucketTreeWalk start,
                       BucketTreeWalk::Begin(prefix, recursive, cursor, limit));
  // Every row read becomes an item, except the listed directory's own entry and an exclusive
  // lower bound's row: a page needs at most limit + 3 rows (the last one only proves that
  // more follow).
  const int64_t rows_per_read = static_cast<int64_t>(std::min<size_t>(limit, size_t{1} << 20)) + 3;
  BucketTreePage page;
  Status st =
      pool_->RunTransaction(PgIsolation::kRepeatableRead, true, [&](PgConnection& conn) -> Status {
        BucketTreeWalk walk = start;  // a retried transaction starts over
        XET_ASSIGN_OR_RETURN(const int64_t id, RequireBucketRow(conn, ns, name, false));
        if (!prefix.empty()) {
          XET_ASSIGN_OR_RETURN(std::optional<BucketEntry> file,
                               FindEntryRow(conn, id, prefix, /*directories=*/false));
          if (file) {  // a prefix naming a file
            page = walk.FilePage(std::move(*file));
            return Status::Ok();
          }
        }
        while (!walk.done()) XET_RETURN_IF_ERROR(ReadTreeRange(conn, id, rows_per_read, walk));
        page = walk.TakePage();
        return Status::Ok();
      });
  XET_RETURN_IF_ERROR(st);
  return page;
}

}  // namespace xet
