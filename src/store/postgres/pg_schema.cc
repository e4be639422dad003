#include "store/postgres/pg_schema.h"

#include <array>
#include <string>

#include "store/schema_version.h"

namespace xet {
namespace {

// Append only: never edit a migration that has shipped.
constexpr std::array<const char*, 5> kPgMigrations = {
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
    // 3: CommitShard in one statement, i.e. one round trip (postgres_index.cc): the
    // statements its transaction ran, in the same order, as one function. A PL/pgSQL function
    // is VOLATILE, so under READ COMMITTED each query in it takes a fresh snapshot, as the
    // separate statements did: the gc_pending check sees a retirement that committed while
    // the shard row's insert waited for it. Refusals are raised (rolling everything back)
    // with SQLSTATEs of class XS (pg_connection.h). The clock is kPgClockMsSql's.
    // xet_hash_hex is Hash::ToHex: each 8-byte word, bytes reversed.
    R"sql(
CREATE OR REPLACE FUNCTION xet_hash_hex(h BYTEA) RETURNS TEXT
LANGUAGE sql IMMUTABLE STRICT AS $fn$
  SELECT string_agg(encode(substr(h, 8 * (i / 8) + 8 - i % 8, 1), 'hex'), '' ORDER BY i)
  FROM generate_series(0, 31) AS i
$fn$;
CREATE OR REPLACE FUNCTION xet_commit_shard(
  p_shard BYTEA, p_shard_key TEXT, p_scope TEXT, p_created_at BIGINT, p_named BYTEA[],
  p_files BYTEA[], p_sizes BIGINT[], p_terms BYTEA[], p_shas BYTEA[], p_xorbs BYTEA[])
RETURNS BOOLEAN LANGUAGE plpgsql AS $fn$
DECLARE
  v_missing BYTEA;
  v_registered BOOLEAN;
BEGIN
  -- Set per connection (pg_connection.cc), but a pooler in transaction mode drops it.
  IF current_setting('transaction_isolation') <> 'read committed' THEN
    RAISE EXCEPTION USING ERRCODE = 'XS500',
      MESSAGE = 'xet_commit_shard needs READ COMMITTED, not ' ||
                current_setting('transaction_isolation') ||
                ': set default_transaction_isolation for the role';
  END IF;
  -- Every xorb the shard names, locked (in hash order, the order every committer shares:
  -- an UPDATE alone locks in scan order, which row versions moved by earlier stamps make
  -- differ between transactions) and stamped: one gc retired before this point is refused,
  -- one it would retire after sees the fresh stamp.
  PERFORM 1 FROM xorbs WHERE hash = ANY(p_named) ORDER BY hash FOR NO KEY UPDATE;
  WITH stamped AS (
    UPDATE xorbs SET seen_at_ms = GREATEST(seen_at_ms,
                                           (extract(epoch from clock_timestamp()) * 1000)::bigint)
    WHERE hash = ANY(p_named) RETURNING hash)
  SELECT u.h INTO v_missing FROM unnest(p_named) WITH ORDINALITY AS u(h, i)
  WHERE NOT EXISTS(SELECT 1 FROM stamped s WHERE s.hash = u.h) ORDER BY u.i LIMIT 1;
  IF v_missing IS NOT NULL THEN
    RAISE EXCEPTION USING ERRCODE = 'XS400',
      MESSAGE = 'xorb ' || xet_hash_hex(v_missing) || ' is not in the index';
  END IF;
  INSERT INTO shards(hash, scope, created_at, seen_at_ms)
  VALUES(p_shard, p_scope, p_created_at, (extract(epoch from clock_timestamp()) * 1000)::bigint)
  ON CONFLICT DO NOTHING;
  v_registered := FOUND;
  IF NOT v_registered THEN
    UPDATE shards SET seen_at_ms = GREATEST(seen_at_ms,
                                            (extract(epoch from clock_timestamp()) * 1000)::bigint)
    WHERE hash = p_shard;
  END IF;
  -- After the shard row is inserted or locked: a retirement that committed first is seen.
  IF EXISTS(SELECT 1 FROM gc_pending WHERE object_key = p_shard_key) THEN
    RAISE EXCEPTION USING ERRCODE = 'XS503',
      MESSAGE = p_shard_key || ' is being deleted by gc; retry';
  END IF;
  INSERT INTO files(hash, size, terms, sha256, seen_at_ms)
  SELECT h, s, t, sh, (extract(epoch from clock_timestamp()) * 1000)::bigint
  FROM unnest(p_files, p_sizes, p_terms, p_shas) AS u(h, s, t, sh)
  ON CONFLICT(hash) DO UPDATE SET seen_at_ms = GREATEST(files.seen_at_ms, excluded.seen_at_ms);
  INSERT INTO file_scopes(file_hash, scope)
  SELECT h, p_scope FROM unnest(p_files) AS h ON CONFLICT DO NOTHING;
  INSERT INTO xorb_scopes(xorb_hash, scope)
  SELECT h, p_scope FROM unnest(p_xorbs) AS h ON CONFLICT DO NOTHING;
  RETURN v_registered;
END
$fn$;
)sql",
    // 4: shard commits leave fresh xorb stamps alone. Migration 3 locked and stamped every
    // xorb a shard names, so concurrent commits naming the same xorbs queued on those rows,
    // each behind the previous one's WAL flush. Now a stamp newer than xet_stamp_slack_ms()
    // is left as it is and its row neither locked nor written; an older one is locked and
    // stamped as before. That is safe because PostgresIndex::IndexClockMs subtracts the
    // same slack (postgres_operator_tools.cc): a stamp this function leaves alone is at
    // least its clock - slack, which is at least the cutoff of any gc whose clock was read
    // while it ran or before, and stamps only grow, so no retirement selects the row. The
    // other statements are migration 3's, with one clock for the whole call.
    R"sql(
CREATE OR REPLACE FUNCTION xet_stamp_slack_ms() RETURNS BIGINT
LANGUAGE sql IMMUTABLE AS 'SELECT 250::bigint';
CREATE OR REPLACE FUNCTION xet_commit_shard(
  p_shard BYTEA, p_shard_key TEXT, p_scope TEXT, p_created_at BIGINT, p_named BYTEA[],
  p_files BYTEA[], p_sizes BIGINT[], p_terms BYTEA[], p_shas BYTEA[], p_xorbs BYTEA[])
RETURNS BOOLEAN LANGUAGE plpgsql AS $fn$
DECLARE
  v_missing BYTEA;
  v_registered BOOLEAN;
  v_now BIGINT := (extract(epoch from clock_timestamp()) * 1000)::bigint;
  v_fresh BIGINT := v_now - xet_stamp_slack_ms();
BEGIN
  -- Set per connection (pg_connection.cc), but a pooler in transaction mode drops it.
  IF current_setting('transaction_isolation') <> 'read committed' THEN
    RAISE EXCEPTION USING ERRCODE = 'XS500',
      MESSAGE = 'xet_commit_shard needs READ COMMITTED, not ' ||
                current_setting('transaction_isolation') ||
                ': set default_transaction_isolation for the role';
  END IF;
  -- The named xorbs with an old stamp, locked in hash order (the order every committer
  -- shares) and stamped: one gc retired before this point is missing below, one it would
  -- retire after sees the fresh stamp. The locks re-check the stamp on the newest version.
  PERFORM 1 FROM xorbs WHERE hash = ANY(p_named) AND seen_at_ms < v_fresh
  ORDER BY hash FOR NO KEY UPDATE;
  UPDATE xorbs SET seen_at_ms = GREATEST(seen_at_ms, v_now)
  WHERE hash = ANY(p_named) AND seen_at_ms < v_fresh;
  SELECT u.h INTO v_missing FROM unnest(p_named) WITH ORDINALITY AS u(h, i)
  WHERE NOT EXISTS(SELECT 1 FROM xorbs x WHERE x.hash = u.h) ORDER BY u.i LIMIT 1;
  IF v_missing IS NOT NULL THEN
    RAISE EXCEPTION USING ERRCODE = 'XS400',
      MESSAGE = 'xorb ' || xet_hash_hex(v_missing) || ' is not in the index';
  END IF;
  INSERT INTO shards(hash, scope, created_at, seen_at_ms)
  VALUES(p_shard, p_scope, p_created_at, v_now)
  ON CONFLICT DO NOTHING;
  v_registered := FOUND;
  IF NOT v_registered THEN
    UPDATE shards SET seen_at_ms = GREATEST(seen_at_ms, v_now) WHERE hash = p_shard;
  END IF;
  -- After the shard row is inserted or locked: a retirement that committed first is seen.
  IF EXISTS(SELECT 1 FROM gc_pending WHERE object_key = p_shard_key) THEN
    RAISE EXCEPTION USING ERRCODE = 'XS503',
      MESSAGE = p_shard_key || ' is being deleted by gc; retry';
  END IF;
  INSERT INTO files(hash, size, terms, sha256, seen_at_ms)
  SELECT h, s, t, sh, v_now
  FROM unnest(p_files, p_sizes, p_terms, p_shas) AS u(h, s, t, sh)
  ON CONFLICT(hash) DO UPDATE SET seen_at_ms = GREATEST(files.seen_at_ms, excluded.seen_at_ms);
  INSERT INTO file_scopes(file_hash, scope)
  SELECT h, p_scope FROM unnest(p_files) AS h ON CONFLICT DO NOTHING;
  INSERT INTO xorb_scopes(xorb_hash, scope)
  SELECT h, p_scope FROM unnest(p_xorbs) AS h ON CONFLICT DO NOTHING;
  RETURN v_registered;
END
$fn$;
)sql",
    // 5: the uploader's visibility checked in the commit (index.h, ShardCommit::
    // visible_scopes), so a node need not ask for it in a round trip of its own first
    // (shard_ingest.cc). An overload: nodes still running the previous version keep calling
    // migration 4's function during a rolling upgrade. Its message is XorbNotUploaded's
    // (index_support.h); p_named is in hash order, so it names the first such xorb in it.
    R"sql(
CREATE OR REPLACE FUNCTION xet_commit_shard(
  p_shard BYTEA, p_shard_key TEXT, p_scope TEXT, p_created_at BIGINT, p_named BYTEA[],
  p_files BYTEA[], p_sizes BIGINT[], p_terms BYTEA[], p_shas BYTEA[], p_xorbs BYTEA[],
  p_visible_scopes TEXT[])
RETURNS BOOLEAN LANGUAGE plpgsql AS $fn$
DECLARE
  v_invisible BYTEA;
BEGIN
  IF cardinality(p_visible_scopes) > 0 THEN
    SELECT u.h INTO v_invisible FROM unnest(p_named) WITH ORDINALITY AS u(h, i)
    WHERE NOT EXISTS(SELECT 1 FROM xorb_scopes s
                     WHERE s.xorb_hash = u.h AND s.scope = ANY(p_visible_scopes))
    ORDER BY u.i LIMIT 1;
    IF v_invisible IS NOT NULL THEN
      RAISE EXCEPTION USING ERRCODE = 'XS400',
        MESSAGE = 'references xorb ' || xet_hash_hex(v_invisible) ||
                  ' which was not uploaded; upload xorbs before the shard';
    END IF;
  END IF;
  RETURN xet_commit_shard(p_shard, p_shard_key, p_scope, p_created_at, p_named, p_files,
                          p_sizes, p_terms, p_shas, p_xorbs);
END
$fn$;
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
