// The PostgreSQL index schema and its migrations.
//
// Migrations are an ordered list; `schema_version` holds the number applied.
// MigratePostgresSchema applies the missing ones, in order, in one transaction that first
// takes a transaction-scoped advisory lock, so nodes starting together migrate once and
// the others wait and then find the schema current. A database newer than this binary is
// refused (Internal), as is one whose schema_version table is malformed.
//
// Tables (hashes, paths, content types, POSIX metadata and record blobs are BYTEA: any bytes,
// compared bytewise; names and scopes are TEXT COLLATE "C"; packed record blobs as in
// store/index_blobs.h):
//   xorbs(id identity, hash UNIQUE, object_size, chunks)
//   xorb_scopes(xorb_hash -> xorbs.hash, scope)               visibility
//   dedup_chunks(chunk_hash, xorb_hash -> xorbs.hash, seq)    seq = xorbs.id (recency)
//   files(id identity, hash UNIQUE, size, terms, sha256 NULL)
//   file_scopes(file_hash -> files.hash, scope)               visibility
//   shards(hash PRIMARY KEY, scope, created_at)               idempotency of CommitShard
//   tokens(id PRIMARY KEY, name, secret_hash UNIQUE, permission, scopes ('\n'-separated),
//          created_at, expires_at, revoked)
//   buckets(id identity, ns, name, private, created/updated_at_ms, total_size, total_files,
//           generation, UNIQUE(ns, name))
//   bucket_entries(bucket_id, path, kind, file_hash, size, mtime_ms, uploaded_at_ms,
//                  content_type, sha256 NULL, posix NULL; PRIMARY KEY(bucket_id, path))
//       kind 0: a file entry at its path; kind 1: an explicit directory entry at its path +
//       "/" (store/bucket_keys.h); posix: the entry's "posix" JSON.
//   gc_pending(object_key PRIMARY KEY, retired_at_ms)         index.h, "operator tools"
// Functions: xet_commit_shard (PostgresIndex::CommitShard in one statement), xet_hash_hex
// (Hash::ToHex, for its messages), xet_stamp_slack_ms (how old a xorb stamp may be before a
// shard commit renews it; PostgresIndex::IndexClockMs subtracts it).
#pragma once

#include "common/status.h"
#include "store/postgres/pg_connection.h"

namespace xet {

// The number of migrations this binary knows (the schema version it produces).
int PostgresSchemaVersion();

// Brings the schema up to date on `conn` (no transaction open).
Status MigratePostgresSchema(PgConnection& conn);

// SQL for the database server's clock in unix milliseconds: what the seen_at_ms stamps
// (migration 2) are written with, so the nodes' own clocks never matter.
inline constexpr const char* kPgClockMsSql =
    "(extract(epoch from clock_timestamp()) * 1000)::bigint";

}  // namespace xet
