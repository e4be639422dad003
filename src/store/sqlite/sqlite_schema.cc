#include "store/sqlite/sqlite_schema.h"

#include <array>
#include <string>

#include "store/schema_version.h"

namespace xet {
namespace {

// Append only: never edit a migration that has shipped.
constexpr std::array<const char*, 4> kMigrations = {
    // 1: initial schema.
    R"sql(
CREATE TABLE xorbs(
  id INTEGER PRIMARY KEY,
  hash BLOB NOT NULL UNIQUE CHECK(length(hash) = 32),
  object_size INTEGER NOT NULL,
  chunks BLOB NOT NULL
);
CREATE TABLE xorb_scopes(
  xorb_hash BLOB NOT NULL REFERENCES xorbs(hash),
  scope TEXT NOT NULL,
  PRIMARY KEY(xorb_hash, scope)
) WITHOUT ROWID;
CREATE TABLE dedup_chunks(
  chunk_hash BLOB NOT NULL,
  xorb_hash BLOB NOT NULL REFERENCES xorbs(hash),
  seq INTEGER NOT NULL,
  PRIMARY KEY(chunk_hash, xorb_hash)
) WITHOUT ROWID;
CREATE INDEX dedup_chunks_by_recency ON dedup_chunks(chunk_hash, seq DESC);
CREATE TABLE files(
  id INTEGER PRIMARY KEY,
  hash BLOB NOT NULL UNIQUE CHECK(length(hash) = 32),
  size INTEGER NOT NULL,
  terms BLOB NOT NULL,
  sha256 BLOB
);
CREATE TABLE file_scopes(
  file_hash BLOB NOT NULL REFERENCES files(hash),
  scope TEXT NOT NULL,
  PRIMARY KEY(file_hash, scope)
) WITHOUT ROWID;
CREATE TABLE shards(
  hash BLOB PRIMARY KEY CHECK(length(hash) = 32),
  scope TEXT NOT NULL,
  created_at INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE tokens(
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  secret_hash BLOB NOT NULL UNIQUE,
  permission INTEGER NOT NULL,
  scopes TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  revoked INTEGER NOT NULL DEFAULT 0
);
)sql",
    // 2: buckets and their entries. Paths are TEXT compared bytewise (BINARY collation on a
    // UTF-8 database is memcmp), so "a/b" sorts as bytes do and a directory's entries are one
    // contiguous key range [dir + "/", dir + "0"). An entry keeps a copy of its file's size and
    // SHA-256 so listings never read the files table. No FOREIGN KEY clauses on entries: the
    // index keeps them consistent itself, and an FK makes every entry write open a statement
    // journal. The scope indexes serve DeleteBucket and MoveBucket, which rewrite every
    // visibility row of one scope.
    R"sql(
CREATE TABLE buckets(
  id INTEGER PRIMARY KEY,
  ns TEXT NOT NULL,
  name TEXT NOT NULL,
  private INTEGER NOT NULL,
  created_at_ms INTEGER NOT NULL,
  updated_at_ms INTEGER NOT NULL,
  total_size INTEGER NOT NULL DEFAULT 0,
  total_files INTEGER NOT NULL DEFAULT 0,
  UNIQUE(ns, name)
);
CREATE TABLE bucket_entries(
  bucket_id INTEGER NOT NULL,
  path TEXT NOT NULL COLLATE BINARY,
  file_hash BLOB NOT NULL,
  size INTEGER NOT NULL,
  mtime_ms INTEGER NOT NULL,
  uploaded_at_ms INTEGER NOT NULL,
  content_type TEXT NOT NULL,
  sha256 BLOB,
  PRIMARY KEY(bucket_id, path)
) WITHOUT ROWID;
CREATE INDEX bucket_entries_by_file ON bucket_entries(bucket_id, file_hash);
CREATE INDEX file_scopes_by_scope ON file_scopes(scope);
CREATE INDEX xorb_scopes_by_scope ON xorb_scopes(scope);
CREATE INDEX shards_by_scope ON shards(scope);
)sql",
    // 3: POSIX metadata (xetstore extension). kind 0 is a file entry, 1 an explicit directory
    // entry, stored at its path + "/" (the first key of the directory's range, so a listing
    // meets it before anything below it); posix is the entry's "posix" JSON object, or NULL.
    // A bucket's generation grows with every batch that changed an entry.
    R"sql(
ALTER TABLE buckets ADD COLUMN generation INTEGER NOT NULL DEFAULT 0;
ALTER TABLE bucket_entries ADD COLUMN kind INTEGER NOT NULL DEFAULT 0;
ALTER TABLE bucket_entries ADD COLUMN posix TEXT;
)sql",
    // 4: garbage collection (index.h, "operator tools"). seen_at_ms is when a row was last
    // stored, registered or handed out (unix ms); rows that exist at the upgrade count as
    // seen then, so they get a full grace period. gc_pending holds the object keys whose rows
    // gc removed and whose objects it has not yet confirmed deleted.
    R"sql(
ALTER TABLE xorbs ADD COLUMN seen_at_ms INTEGER NOT NULL DEFAULT 0;
ALTER TABLE files ADD COLUMN seen_at_ms INTEGER NOT NULL DEFAULT 0;
ALTER TABLE shards ADD COLUMN seen_at_ms INTEGER NOT NULL DEFAULT 0;
UPDATE xorbs SET seen_at_ms = CAST(strftime('%s', 'now') AS INTEGER) * 1000;
UPDATE files SET seen_at_ms = CAST(strftime('%s', 'now') AS INTEGER) * 1000;
UPDATE shards SET seen_at_ms = CAST(strftime('%s', 'now') AS INTEGER) * 1000;
CREATE TABLE gc_pending(
  object_key TEXT PRIMARY KEY,
  retired_at_ms INTEGER NOT NULL
) WITHOUT ROWID;
)sql",
};

Status MigrateInTransaction(SqliteDb& db) {
  XET_RETURN_IF_ERROR(
      db.Exec("CREATE TABLE IF NOT EXISTS schema_version(version INTEGER NOT NULL)"));
  int64_t version = 0;
  bool have_row = false;
  {
    XET_ASSIGN_OR_RETURN(ScopedStatement stmt, db.Prepare("SELECT version FROM schema_version"));
    XET_ASSIGN_OR_RETURN(bool row, stmt->Step());
    if (row) {
      have_row = true;
      version = stmt->ColumnInt64(0);
    }
  }
  const int64_t known = static_cast<int64_t>(kMigrations.size());
  XET_RETURN_IF_ERROR(CheckSchemaVersion(version, known));
  for (int64_t i = version; i < known; ++i) {
    XET_RETURN_IF_ERROR(db.Exec(kMigrations[static_cast<size_t>(i)])
                            .WithContext("index migration " + std::to_string(i + 1)));
  }
  if (!have_row) {
    XET_RETURN_IF_ERROR(
        db.Exec("INSERT INTO schema_version(version) VALUES(" + std::to_string(known) + ")"));
  } else if (version != known) {
    XET_RETURN_IF_ERROR(db.Exec("UPDATE schema_version SET version = " + std::to_string(known)));
  }
  return Status::Ok();
}

}  // namespace

int SqliteSchemaVersion() { return static_cast<int>(kMigrations.size()); }

Status MigrateSqliteSchema(SqliteDb& db) {
  XET_RETURN_IF_ERROR(db.Exec("BEGIN IMMEDIATE"));
  Status st = MigrateInTransaction(db);
  if (!st.ok()) {
    (void)db.Exec("ROLLBACK");
    return st;
  }
  return db.Exec("COMMIT");
}

}  // namespace xet
