#include "store/sqlite/sqlite_index.h"

#include <algorithm>
#include <cstdint>
#include <ctime>
#include <string>
#include <utility>

#include "format/merkle.h"
#include "store/index_blobs.h"
#include "store/index_support.h"
#include "store/object_store.h"
#include "store/sqlite/sqlite_rows.h"
#include "store/sqlite/sqlite_schema.h"
#include "store/sqlite/sqlite_values.h"

namespace xet {
namespace {

// Runs `sql` with a hash in ?1 and returns whether it yields a row.
Result<bool> ExistsByHash(SqliteDb& db, const char* sql, const Hash& h) {
  XET_ASSIGN_OR_RETURN(ScopedStatement stmt, db.Prepare(sql));
  XET_RETURN_IF_ERROR(stmt->BindBlob(1, HashBytes(h)));
  return stmt->Step();
}

// Runs `sql` with a hash in ?1 and the scopes (ScopesAsJson) in ?2.
Result<bool> ExistsByHashInScopes(SqliteDb& db, const char* sql, const Hash& h,
                                  const std::string& json) {
  XET_ASSIGN_OR_RETURN(ScopedStatement stmt, db.Prepare(sql));
  XET_RETURN_IF_ERROR(stmt->BindBlob(1, HashBytes(h)));
  XET_RETURN_IF_ERROR(stmt->BindText(2, json));
  return stmt->Step();
}

constexpr const char* kXorbExistsSql = "SELECT 1 FROM xorbs WHERE hash = ?1";
constexpr const char* kXorbVisibleSql =
    "SELECT 1 FROM xorb_scopes WHERE xorb_hash = ?1 AND scope IN "
    "(SELECT value FROM json_each(?2)) LIMIT 1";

// Keeps one read transaction open on a reader connection across several statements (each
// statement otherwise opens its own, and every start after a commit drops the connection's
// page cache and memory map); ends it on destruction.
class ReadTransaction {
 public:
  static Result<ReadTransaction> Begin(SqliteDb& db) {
    XET_ASSIGN_OR_RETURN(ScopedStatement begin, db.Prepare("BEGIN"));
    XET_RETURN_IF_ERROR(begin->Run());
    return ReadTransaction(&db);
  }
  ReadTransaction(ReadTransaction&& other) noexcept : db_(other.db_) { other.db_ = nullptr; }
  ReadTransaction(const ReadTransaction&) = delete;
  ReadTransaction& operator=(const ReadTransaction&) = delete;
  ReadTransaction& operator=(ReadTransaction&&) = delete;
  ~ReadTransaction() {
    if (db_ == nullptr || db_->InAutocommit()) return;
    auto end = db_->Prepare("COMMIT");  // nothing was written: this only releases the snapshot
    if (end.ok()) (void)(*end)->Run();
    if (!db_->InAutocommit()) (void)db_->Exec("ROLLBACK");
  }

 private:
  explicit ReadTransaction(SqliteDb* db) : db_(db) {}
  SqliteDb* db_;
};

constexpr const char* kTokenColumns =
    "id, name, secret_hash, permission, scopes, created_at, expires_at, revoked";

Result<TokenRecord> ReadToken(SqliteStatement& stmt) {
  TokenRecord t;
  t.id = std::string(stmt.ColumnText(0));
  t.name = std::string(stmt.ColumnText(1));
  XET_ASSIGN_OR_RETURN(t.secret_hash, HashColumn(stmt, 2, "token secret hash"));
  const int64_t perm = stmt.ColumnInt64(3);
  if (perm < 1 || perm > 3) {
    return Status::Corruption("index token " + t.id + " has permission " + std::to_string(perm));
  }
  t.permission = static_cast<Permission>(perm);
  t.scopes = DecodeScopeList(stmt.ColumnText(4));
  t.created_at = stmt.ColumnInt64(5);
  t.expires_at = stmt.ColumnInt64(6);
  t.revoked = stmt.ColumnInt64(7) != 0;
  return t;
}

}  // namespace

Result<std::unique_ptr<Index>> OpenSqliteIndex(const std::string& path) {
  XET_ASSIGN_OR_RETURN(auto index, SqliteIndex::Open(path, SqliteIndex::Options{}));
  return std::unique_ptr<Index>(std::move(index));
}

Result<std::unique_ptr<SqliteIndex>> SqliteIndex::Open(const std::string& path,
                                                       const Options& opts) {
  XET_ASSIGN_OR_RETURN(auto writer_db,
                       SqliteDb::Open(path, /*read_only=*/false, opts.busy_timeout_ms));
  XET_ASSIGN_OR_RETURN(std::string mode, writer_db->QueryText("PRAGMA journal_mode=WAL"));
  if (mode != "wal") {
    return Status::IoError("index " + path + ": cannot enable WAL (journal_mode " + mode + ")");
  }
  // The writer's page caches hold a whole large group (a 10,000-op bucket batch touches a
  // few thousand pages; a 100,000-entry directory move stages 15 MB in a TEMP table): with
  // SQLite's 2 MB default, pages are spilled and read back within one transaction.
  // temp_store=MEMORY keeps each group's statement journal (the pre-images the per-operation
  // SAVEPOINT needs to roll one operation back) in memory: on disk SQLite creates a fresh
  // temporary file per group once it passes 64 KiB and writes every pre-image to it (about
  // half of the writer's write() calls in a shard commit burst). That journal only serves a
  // rollback inside the open transaction, never crash recovery: durability is unchanged.
  XET_RETURN_IF_ERROR(
      writer_db->Exec("PRAGMA synchronous=FULL; PRAGMA foreign_keys=ON; PRAGMA cache_size=-65536; "
                      "PRAGMA temp_store=MEMORY; PRAGMA temp.cache_size=-65536;"));
  XET_RETURN_IF_ERROR(MigrateSqliteSchema(*writer_db).WithContext("index " + path));
  XET_ASSIGN_OR_RETURN(
      auto readers,
      SqliteReadPool::Open(path, opts.read_connections == 0 ? 1 : opts.read_connections,
                           opts.busy_timeout_ms, /*memory_map=*/true));
  XET_ASSIGN_OR_RETURN(
      auto lookups,
      SqliteReadPool::Open(path, opts.lookup_connections == 0 ? 1 : opts.lookup_connections,
                           opts.busy_timeout_ms, /*memory_map=*/false));
  auto writer = std::make_unique<SqliteGroupCommitter>(std::move(writer_db));
  return std::unique_ptr<SqliteIndex>(
      new SqliteIndex(std::move(readers), std::move(lookups), std::move(writer)));
}

// --- xorbs ---

Result<bool> SqliteIndex::PutXorb(const XorbRecord& xorb, const Scope& scope) {
  XET_RETURN_IF_ERROR(ToSqlInt(xorb.object_size, "xorb size").status());
  bool created = false;
  const int64_t now_ms = WallClockMs();
  Status st = writer_->Submit([&](SqliteDb& db) -> Status {
    XET_ASSIGN_OR_RETURN(created, StoreXorbRow(db, xorb, now_ms));
    return AddXorbScope(db, xorb.hash, scope);
  });
  XET_RETURN_IF_ERROR(st.WithContext("put xorb " + xorb.hash.ToHex()));
  return created;
}

Result<std::optional<XorbRecord>> SqliteIndex::GetXorb(const Hash& xorb_hash) {
  auto lease = readers_->Acquire();
  XET_ASSIGN_OR_RETURN(ScopedStatement stmt,
                       lease.db().Prepare("SELECT object_size, chunks FROM xorbs WHERE hash = ?1"));
  XET_RETURN_IF_ERROR(stmt->BindBlob(1, HashBytes(xorb_hash)));
  XET_ASSIGN_OR_RETURN(bool row, stmt->Step());
  if (!row) return std::optional<XorbRecord>();
  XorbRecord rec;
  rec.hash = xorb_hash;
  XET_ASSIGN_OR_RETURN(rec.object_size, FromSqlSize(stmt->ColumnInt64(0), "xorb size"));
  XET_ASSIGN_OR_RETURN(rec.chunks, DecodeChunkRows(stmt->ColumnBlob(1)));
  return std::optional<XorbRecord>(std::move(rec));
}

Status SqliteIndex::ForEachRecentXorb(const std::function<bool(XorbRecord)>& visit) {
  auto lease = readers_->Acquire();
  XET_ASSIGN_OR_RETURN(
      ScopedStatement stmt,
      lease.db().Prepare("SELECT hash, object_size, chunks FROM xorbs ORDER BY id DESC"));
  while (true) {
    XET_ASSIGN_OR_RETURN(bool row, stmt->Step());
    if (!row) return Status::Ok();
    XorbRecord rec;
    XET_ASSIGN_OR_RETURN(rec.hash, HashColumn(*stmt, 0, "xorb hash"));
    XET_ASSIGN_OR_RETURN(rec.object_size, FromSqlSize(stmt->ColumnInt64(1), "xorb size"));
    XET_ASSIGN_OR_RETURN(rec.chunks, DecodeChunkRows(stmt->ColumnBlob(2)));
    if (!visit(std::move(rec))) return Status::Ok();
  }
}

Result<bool> SqliteIndex::HasXorb(const Hash& xorb_hash) {
  auto lease = lookups_->Acquire();
  return ExistsByHash(lease.db(), kXorbExistsSql, xorb_hash);
}

Result<bool> SqliteIndex::XorbVisible(const Hash& xorb_hash, std::span<const Scope> scopes) {
  if (scopes.empty()) return HasXorb(xorb_hash);
  auto lease = lookups_->Acquire();
  return ExistsByHashInScopes(lease.db(), kXorbVisibleSql, xorb_hash, ScopesAsJson(scopes));
}

Result<std::vector<bool>> SqliteIndex::XorbsVisible(std::span<const Hash> xorb_hashes,
                                                    std::span<const Scope> scopes) {
  std::vector<bool> visible(xorb_hashes.size(), false);
  if (xorb_hashes.empty()) return visible;
  const std::string json = ScopesAsJson(scopes);
  auto lease = lookups_->Acquire();
  XET_ASSIGN_OR_RETURN(ReadTransaction txn, ReadTransaction::Begin(lease.db()));
  for (size_t i = 0; i < xorb_hashes.size(); ++i) {
    XET_ASSIGN_OR_RETURN(
        visible[i], scopes.empty()
                        ? ExistsByHash(lease.db(), kXorbExistsSql, xorb_hashes[i])
                        : ExistsByHashInScopes(lease.db(), kXorbVisibleSql, xorb_hashes[i], json));
  }
  return visible;
}

// --- files and shards ---

Result<ShardCommitResult> SqliteIndex::CommitShard(const ShardCommit& commit) {
  struct EncodedFile {
    const FileRecord* file;
    std::vector<uint8_t> terms;  // encoded once, outside the transaction (it may run again)
  };
  std::vector<EncodedFile> files;
  files.reserve(commit.files.size());
  for (const FileRecord& f : commit.files) {
    XET_RETURN_IF_ERROR(ToSqlInt(f.size, "file size").status());
    files.push_back({&f, EncodeFileTerms(f.terms)});
  }
  const int64_t now = static_cast<int64_t>(std::time(nullptr));
  const int64_t now_ms = WallClockMs();
  const std::string shard_key = ShardKey(commit.shard_hash);
  const std::vector<Hash> stamped_xorbs = XorbsNamedBy(commit);
  const std::string visible_json =
      commit.visible_scopes.empty() ? std::string() : ScopesAsJson(commit.visible_scopes);
  bool registered = false;
  Status st = writer_->Submit([&](SqliteDb& db) -> Status {
    for (const Hash& xorb :
         visible_json.empty() ? std::span<const Hash>() : std::span<const Hash>(stamped_xorbs)) {
      XET_ASSIGN_OR_RETURN(bool visible,
                           ExistsByHashInScopes(db, kXorbVisibleSql, xorb, visible_json));
      if (!visible) return XorbNotUploaded(xorb);
    }
    XET_RETURN_IF_ERROR(RefusePendingDeletion(db, shard_key));
    // Stamped and checked in the transaction that registers the files: a xorb gc retired
    // before this point is refused, one it would retire after sees the fresh stamp.
    for (const Hash& xorb : stamped_xorbs) {
      XET_ASSIGN_OR_RETURN(bool stored, StampXorb(db, xorb, now_ms));
      if (!stored) return Status::InvalidArgument("xorb " + xorb.ToHex() + " is not in the index");
    }
    {
      XET_ASSIGN_OR_RETURN(ScopedStatement stmt,
                           db.Prepare("INSERT INTO shards(hash, scope, created_at, seen_at_ms) "
                                      "VALUES(?1, ?2, ?3, ?4) ON CONFLICT DO NOTHING"));
      XET_RETURN_IF_ERROR(stmt->BindBlob(1, HashBytes(commit.shard_hash)));
      XET_RETURN_IF_ERROR(stmt->BindText(2, commit.scope));
      XET_RETURN_IF_ERROR(stmt->BindInt64(3, now));
      XET_RETURN_IF_ERROR(stmt->BindInt64(4, now_ms));
      XET_RETURN_IF_ERROR(stmt->Run());
      registered = db.Changes() == 1;
    }
    if (!registered) {
      XET_ASSIGN_OR_RETURN(
          ScopedStatement stmt,
          db.Prepare("UPDATE shards SET seen_at_ms = max(seen_at_ms, ?2) WHERE hash = ?1"));
      XET_RETURN_IF_ERROR(stmt->BindBlob(1, HashBytes(commit.shard_hash)));
      XET_RETURN_IF_ERROR(stmt->BindInt64(2, now_ms));
      XET_RETURN_IF_ERROR(stmt->Run());
    }
    for (const EncodedFile& ef : files) {
      XET_RETURN_IF_ERROR(StoreFileRow(db, *ef.file, ef.terms, now_ms));
      XET_RETURN_IF_ERROR(AddFileScope(db, ef.file->file_hash, commit.scope));
    }
    for (const Hash& xorb : commit.xorbs) {
      XET_RETURN_IF_ERROR(AddXorbScope(db, xorb, commit.scope));
    }
    return Status::Ok();
  });
  XET_RETURN_IF_ERROR(st.WithContext("commit shard " + commit.shard_hash.ToHex()));
  return registered ? ShardCommitResult::kRegistered : ShardCommitResult::kAlreadyExisted;
}

Result<std::optional<FileRecord>> SqliteIndex::GetFile(const Hash& file_hash) {
  auto lease = readers_->Acquire();
  XET_ASSIGN_OR_RETURN(ScopedStatement stmt,
                       lease.db().Prepare("SELECT size, terms, sha256 FROM files WHERE hash = ?1"));
  XET_RETURN_IF_ERROR(stmt->BindBlob(1, HashBytes(file_hash)));
  XET_ASSIGN_OR_RETURN(bool row, stmt->Step());
  if (!row) return std::optional<FileRecord>();
  FileRecord rec;
  rec.file_hash = file_hash;
  XET_ASSIGN_OR_RETURN(rec.size, FromSqlSize(stmt->ColumnInt64(0), "file size"));
  XET_ASSIGN_OR_RETURN(rec.terms, DecodeFileTerms(stmt->ColumnBlob(1)));
  if (!stmt->ColumnIsNull(2)) {
    XET_ASSIGN_OR_RETURN(rec.sha256, HashColumn(*stmt, 2, "file sha256"));
  }
  return std::optional<FileRecord>(std::move(rec));
}

Status SqliteIndex::ForEachRecentFile(const std::function<bool(FileRecord)>& visit) {
  auto lease = readers_->Acquire();
  XET_ASSIGN_OR_RETURN(
      ScopedStatement stmt,
      lease.db().Prepare("SELECT hash, size, terms, sha256 FROM files ORDER BY id DESC"));
  while (true) {
    XET_ASSIGN_OR_RETURN(bool row, stmt->Step());
    if (!row) return Status::Ok();
    FileRecord rec;
    XET_ASSIGN_OR_RETURN(rec.file_hash, HashColumn(*stmt, 0, "file hash"));
    XET_ASSIGN_OR_RETURN(rec.size, FromSqlSize(stmt->ColumnInt64(1), "file size"));
    XET_ASSIGN_OR_RETURN(rec.terms, DecodeFileTerms(stmt->ColumnBlob(2)));
    if (!stmt->ColumnIsNull(3)) {
      XET_ASSIGN_OR_RETURN(rec.sha256, HashColumn(*stmt, 3, "file sha256"));
    }
    if (!visit(std::move(rec))) return Status::Ok();
  }
}

Result<bool> SqliteIndex::FileVisible(const Hash& file_hash, std::span<const Scope> scopes) {
  auto lease = lookups_->Acquire();
  if (scopes.empty()) {
    return ExistsByHash(lease.db(), "SELECT 1 FROM files WHERE hash = ?1", file_hash);
  }
  return ExistsByHashInScopes(lease.db(),
                              "SELECT 1 FROM file_scopes WHERE file_hash = ?1 AND scope IN "
                              "(SELECT value FROM json_each(?2)) LIMIT 1",
                              file_hash, ScopesAsJson(scopes));
}

// --- global dedup ---

Result<std::vector<Hash>> SqliteIndex::FindXorbsWithChunk(const Hash& chunk_hash,
                                                          std::span<const Scope> scopes,
                                                          size_t limit) {
  std::vector<Hash> xorbs;
  if (limit == 0) return xorbs;
  const int64_t sql_limit = SqlLimit(limit);
  const int64_t now_ms = WallClockMs();
  std::vector<Hash> stale;  // answered xorbs whose stamp needs refreshing
  {
    auto lease = lookups_->Acquire();
    const std::string json = ScopesAsJson(scopes);
    XET_ASSIGN_OR_RETURN(
        ScopedStatement stmt,
        lease.db().Prepare(
            scopes.empty()
                ? "SELECT d.xorb_hash, x.seen_at_ms FROM dedup_chunks d JOIN xorbs x "
                  "ON x.hash = d.xorb_hash WHERE d.chunk_hash = ?1 ORDER BY d.seq DESC LIMIT ?2"
                : "SELECT d.xorb_hash, x.seen_at_ms FROM dedup_chunks d JOIN xorbs x "
                  "ON x.hash = d.xorb_hash WHERE d.chunk_hash = ?1 AND EXISTS("
                  "SELECT 1 FROM xorb_scopes s WHERE s.xorb_hash = d.xorb_hash AND s.scope IN "
                  "(SELECT value FROM json_each(?3))) ORDER BY d.seq DESC LIMIT ?2"));
    XET_RETURN_IF_ERROR(stmt->BindBlob(1, HashBytes(chunk_hash)));
    XET_RETURN_IF_ERROR(stmt->BindInt64(2, sql_limit));
    if (!scopes.empty()) XET_RETURN_IF_ERROR(stmt->BindText(3, json));
    while (true) {
      XET_ASSIGN_OR_RETURN(bool row, stmt->Step());
      if (!row) break;
      XET_ASSIGN_OR_RETURN(Hash h, HashColumn(*stmt, 0, "dedup xorb hash"));
      xorbs.push_back(h);
      if (stmt->ColumnInt64(1) < now_ms - kSeenStampRefreshMs) stale.push_back(h);
    }
  }
  if (stale.empty()) return xorbs;
  // Handing a xorb out counts as seeing it (index.h): a xorb gc retired meanwhile is left
  // out of the answer.
  std::vector<Hash> gone;
  Status st = writer_->Submit([&](SqliteDb& db) -> Status {
    gone.clear();
    for (const Hash& h : stale) {
      XET_ASSIGN_OR_RETURN(bool stored, StampXorb(db, h, now_ms));
      if (!stored) gone.push_back(h);
    }
    return Status::Ok();
  });
  XET_RETURN_IF_ERROR(st.WithContext("stamp dedup answer"));
  std::erase_if(
      xorbs, [&](const Hash& h) { return std::find(gone.begin(), gone.end(), h) != gone.end(); });
  return xorbs;
}

// --- tokens ---

Status SqliteIndex::PutToken(const TokenRecord& token) {
  if (token.id.empty()) return Status::InvalidArgument("token id is empty");
  XET_ASSIGN_OR_RETURN(const std::string scopes, EncodeScopeList(token.scopes));
  Status st = writer_->Submit([&](SqliteDb& db) -> Status {
    XET_ASSIGN_OR_RETURN(
        ScopedStatement stmt,
        db.Prepare("INSERT INTO tokens(id, name, secret_hash, permission, scopes, created_at, "
                   "expires_at, revoked) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) "
                   "ON CONFLICT(id) DO UPDATE SET name = excluded.name, "
                   "secret_hash = excluded.secret_hash, permission = excluded.permission, "
                   "scopes = excluded.scopes, created_at = excluded.created_at, "
                   "expires_at = excluded.expires_at, revoked = excluded.revoked"));
    XET_RETURN_IF_ERROR(stmt->BindText(1, token.id));
    XET_RETURN_IF_ERROR(stmt->BindText(2, token.name));
    XET_RETURN_IF_ERROR(stmt->BindBlob(3, HashBytes(token.secret_hash)));
    XET_RETURN_IF_ERROR(stmt->BindInt64(4, static_cast<int64_t>(token.permission)));
    XET_RETURN_IF_ERROR(stmt->BindText(5, scopes));
    XET_RETURN_IF_ERROR(stmt->BindInt64(6, token.created_at));
    XET_RETURN_IF_ERROR(stmt->BindInt64(7, token.expires_at));
    XET_RETURN_IF_ERROR(stmt->BindInt64(8, token.revoked ? 1 : 0));
    return stmt->Run();
  });
  return st.WithContext("put token " + token.id);
}

Result<std::optional<TokenRecord>> SqliteIndex::FindTokenBySecretHash(const Hash& secret_hash) {
  auto lease = lookups_->Acquire();
  XET_ASSIGN_OR_RETURN(ScopedStatement stmt,
                       lease.db().Prepare(std::string("SELECT ") + kTokenColumns +
                                          " FROM tokens WHERE secret_hash = ?1"));
  XET_RETURN_IF_ERROR(stmt->BindBlob(1, HashBytes(secret_hash)));
  XET_ASSIGN_OR_RETURN(bool row, stmt->Step());
  if (!row) return std::optional<TokenRecord>();
  XET_ASSIGN_OR_RETURN(TokenRecord t, ReadToken(*stmt));
  return std::optional<TokenRecord>(std::move(t));
}

Result<std::vector<TokenRecord>> SqliteIndex::ListTokens() {
  auto lease = lookups_->Acquire();
  XET_ASSIGN_OR_RETURN(ScopedStatement stmt,
                       lease.db().Prepare(std::string("SELECT ") + kTokenColumns +
                                          " FROM tokens ORDER BY created_at, id"));
  std::vector<TokenRecord> tokens;
  while (true) {
    XET_ASSIGN_OR_RETURN(bool row, stmt->Step());
    if (!row) break;
    XET_ASSIGN_OR_RETURN(TokenRecord t, ReadToken(*stmt));
    tokens.push_back(std::move(t));
  }
  return tokens;
}

Status SqliteIndex::RevokeToken(const std::string& id) {
  return writer_->Submit([&](SqliteDb& db) -> Status {
    XET_ASSIGN_OR_RETURN(ScopedStatement stmt,
                         db.Prepare("UPDATE tokens SET revoked = 1 WHERE id = ?1"));
    XET_RETURN_IF_ERROR(stmt->BindText(1, id));
    XET_RETURN_IF_ERROR(stmt->Run());
    if (db.Changes() == 0) return Status::NotFound("no token with id " + id);
    return Status::Ok();
  });
}

}  // namespace xet
