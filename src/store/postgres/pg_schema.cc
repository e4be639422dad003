#include "store/postgres/pg_schema.h"

#include <array>
#include <string>

#include "store/schema_version.h"

namespace xet {
namespace {

// Append only: never edit a migration that has shipped.
constexpr std::array<const char*, 2> kPgMigrations = {
    // 1: the whole index as of SQLite schema 3.
    R"sql(
CREATE TABLE xorbs(
  id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  hash BYTEA NOT NULL UNIQUE CHECK(length(hash) = 32),
  object_size BIGINT NOT NULL CHECK(object_size >= 0),
  chunks BYTEA NOT NULL
);
CREATE TABLE xorb_scopes(
  xorb_hash BYTEA NOT NULL REFERENCES xorbs(hash),
  scope TEXT COLLATE "C" NOT NULL,
  PRIMARY KEY(xorb_hash, scope)
);
CREATE INDEX xorb_scopes_by_scope ON xorb_scopes(scope);
CREATE TABLE dedup_chunks(
  chunk_hash BYTEA NOT NULL,
  xorb_hash BYTEA NOT NULL REFERENCES xorbs(hash),
  seq BIGINT NOT NULL,
  PRIMARY KEY(chunk_hash, xorb_hash)
);
CREATE INDEX dedup_chunks_by_recency ON dedup_chunks(chunk_hash, seq DESC);
CREATE TABLE files(
  id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  hash BYTEA NOT NULL UNIQUE CHECK(length(hash) = 32),
  size BIGINT NOT NULL CHECK(size >= 0),
  terms BYTEA NOT NULL,
  sha256 BYTEA
);
CREATE TABLE file_scopes(
  file_hash BYTEA NOT NULL REFERENCES files(hash),
  scope TEXT COLLATE "C" NOT NULL,
  PRIMARY KEY(file_hash, scope)
);
CREATE INDEX file_scopes_by_scope ON file_scopes(scope);
CREATE TABLE shards(
  hash BYTEA PRIMARY KEY CHECK(length(hash) = 32),
  scope TEXT COLLATE "C" NOT NULL,
  created_at BIGINT NOT NULL
);
CREATE INDEX shards_by_scope ON shards(scope);
CREATE TABLE tokens(
  id TEXT COLLATE "C" PRIMARY KEY,
  name TEXT NOT NULL,
  secret_hash BYTEA NOT NULL UNIQUE,
  permission SMALLINT NOT NULL,
  scopes TEXT NOT NULL,
  created_at BIGINT NOT NULL,
  expires_at BIGINT NOT NULL,
  revoked BOOLEAN NOT NULL DEFAULT false
);
CREATE TABLE buckets(
  id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  ns TEXT COLLATE "C" NOT NULL,
  name TEXT COLLATE "C" NOT NULL,
  private BOOLEAN NOT NULL,
  created_at_ms BIGINT NOT NULL,
  updated_at_ms BIGINT NOT NULL,
  total_size BIGINT NOT NULL DEFAULT 0,
  total_files BIGINT NOT NULL DEFAULT 0,
  generation BIGINT NOT NULL DEFAULT 0,
  UNIQUE(ns, name)
);
CREATE TABLE bucket_entries(
  bucket_id BIGINT NOT NULL,
  path BYTEA NOT NULL,
  kind SMALLINT NOT NULL,
  file_hash BYTEA NOT NULL,
  size BIGINT NOT NULL,
  mtime_ms BIGINT NOT NULL,
  uploaded_at_ms BIGINT NOT NULL,
  content_type BYTEA NOT NULL,
  sha256 BYTEA,
  posix BYTEA,
  PRIMARY KEY(bucket_id, path)
);
CREATE INDEX bucket_entries_by_file ON bucket_entries(bucket_id, file_hash);
)sql",
    // 2: garbage collection (index.h, "operator tools"): as SQLite schema 4. Rows that exist
    // at the upgrade count as seen then (the column's default at the ALTER, then dropped).
    R"sql(
ALTER TABLE xorbs ADD COLUMN seen_at_ms BIGINT NOT NULL
  DEFAULT (extract(epoch from now()) * 1000)::bigint;
ALTER TABLE xorbs ALTER COLUMN seen_at_ms DROP DEFAULT;
ALTER TABLE files ADD COLUMN seen_at_ms BIGINT NOT NULL
  DEFAULT (extract(epoch from now()) * 1000)::bigint;
ALTER TABLE files ALTER COLUMN seen_at_ms DROP DEFAULT;
ALTER TABLE shards ADD COLUMN seen_at_ms BIGINT NOT NULL
  DEFAULT (extract(epoch from now()) * 1000)::bigint;
ALTER TABLE shards ALTER COLUMN seen_at_ms DROP DEFAULT;
CREATE TABLE gc_pending(
  object_key TEXT COLLATE "C" PRIMARY KEY,
  retired_at_ms BIGINT NOT NULL
);
)sql",
};

// Any constant: the key of the advisory lock that serializes migrations across nodes.
constexpr const char* kMigrationLockSql = "SELECT pg_advisory_xact_lock(7836452071)";

Status MigrateInTransaction(PgConnection& conn) {
  XET_RETURN_IF_ERROR(conn.ExecSimple(kMigrationLockSql));
  XET_RETURN_IF_ERROR(
      conn.ExecSimple("CREATE TABLE IF NOT EXISTS schema_version(version BIGINT NOT NULL)"));
  XET_ASSIGN_OR_RETURN(PgResult rows, conn.Exec("SELECT version FROM schema_version"));
  if (rows.rows() > 1) return Status::Internal("index schema_version holds more than one row");
  const int64_t version = rows.rows() == 1 ? rows.Int(0, 0) : 0;
  const int64_t known = static_cast<int64_t>(kPgMigrations.size());
  XET_RETURN_IF_ERROR(CheckSchemaVersion(version, known));
  for (int64_t i = version; i < known; ++i) {
    XET_RETURN_IF_ERROR(conn.ExecSimple(kPgMigrations[static_cast<size_t>(i)])
                            .WithContext("index migration " + std::to_string(i + 1)));
  }
  if (rows.rows() == 0) {
    XET_RETURN_IF_ERROR(
        conn.Exec("INSERT INTO schema_version(version) VALUES($1)", PgParams().Int(known))
            .status());
  } else if (version != known) {
    XET_RETURN_IF_ERROR(
        conn.Exec("UPDATE schema_version SET version = $1", PgParams().Int(known)).status());
  }
  return Status::Ok();
}

}  // namespace

int PostgresSchemaVersion() { return static_cast<int>(kPgMigrations.size()); }

Status MigratePostgresSchema(PgConnection& conn) {
  XET_RETURN_IF_ERROR(conn.ExecSimple("BEGIN ISOLATION LEVEL READ COMMITTED"));
  Status st = MigrateInTransaction(conn);
  if (!st.ok()) {
    (void)conn.ExecSimple("ROLLBACK");
    return st;
  }
  return conn.ExecSimple("COMMIT");
}

}  // namespace xet
