// The SQLite index schema and its migrations.
//
// Migrations are an ordered list; the database records in `schema_version` the number of
// migrations applied. MigrateSqliteSchema applies the missing ones, in order, inside one
// BEGIN IMMEDIATE transaction (so concurrent openers serialize and a crash leaves either
// the old or the new schema), and is a no-op on an up-to-date database. A database newer
// than this binary is refused.
//
// Tables (hashes are 32-byte BLOBs; packed record blobs are little-endian):
//   xorbs(id INTEGER PRIMARY KEY, hash BLOB UNIQUE, object_size, chunks BLOB)
//       chunks: one 40-byte record per chunk: hash[32] compressed_end:u32 uncompressed_end:u32
//   xorb_scopes(xorb_hash -> xorbs.hash, scope TEXT)           visibility
//   dedup_chunks(chunk_hash, xorb_hash -> xorbs.hash, seq)     seq = xorbs.id (recency)
//   files(id INTEGER PRIMARY KEY, hash BLOB UNIQUE, size, terms BLOB, sha256 BLOB NULL)
//       terms: one 44-byte record per term:
//              xorb_hash[32] chunk_start:u32 chunk_end:u32 unpacked_bytes:u32
//   file_scopes(file_hash -> files.hash, scope TEXT)           visibility
//   shards(hash BLOB PRIMARY KEY, scope TEXT, created_at)      idempotency of CommitShard
//   tokens(id TEXT PRIMARY KEY, name, secret_hash BLOB UNIQUE, permission, scopes TEXT
//          ('\n'-separated), created_at, expires_at, revoked)
#pragma once

#include "common/status.h"
#include "store/sqlite/sqlite_db.h"

namespace xet {

// The number of migrations this binary knows (the schema version it produces).
int SqliteSchemaVersion();

// Brings the schema of `db` (a read-write connection, no transaction open) up to date.
Status MigrateSqliteSchema(SqliteDb& db);

}  // namespace xet
