#include "store/postgres/postgres_index.h"

#include <algorithm>
#include <cstdint>
#include <ctime>
#include <string>
#include <utility>

#include "format/merkle.h"
#include "store/index_blobs.h"
#include "store/index_support.h"
#include "store/object_store.h"
#include "store/postgres/pg_schema.h"
#include "store/postgres/pg_values.h"

namespace xet {
namespace {

// Rows ForEachRecent* reads per round trip.
constexpr int64_t kRecentPage = 256;

std::vector<std::string> ScopeArray(std::span<const Scope> scopes) {
  return std::vector<std::string>(scopes.begin(), scopes.end());
}

Result<XorbRecord> ReadXorbRow(const PgResult& r, int row, int col) {
  XorbRecord rec;
  XET_ASSIGN_OR_RETURN(rec.hash, r.HashAt(row, col, "xorb hash"));
  XET_ASSIGN_OR_RETURN(rec.object_size, r.SizeAt(row, col + 1, "xorb size"));
  XET_ASSIGN_OR_RETURN(rec.chunks, DecodeChunkRows(r.Bytes(row, col + 2)));
  return rec;
}

Result<FileRecord> ReadFileRow(const PgResult& r, int row, int col) {
  FileRecord rec;
  XET_ASSIGN_OR_RETURN(rec.file_hash, r.HashAt(row, col, "file hash"));
  XET_ASSIGN_OR_RETURN(rec.size, r.SizeAt(row, col + 1, "file size"));
  XET_ASSIGN_OR_RETURN(rec.terms, DecodeFileTerms(r.Bytes(row, col + 2)));
  if (!r.IsNull(row, col + 3)) {
    XET_ASSIGN_OR_RETURN(rec.sha256, r.HashAt(row, col + 3, "file sha256"));
  }
  return rec;
}

// Unavailable: `key`'s object is pending deletion by gc (index.h, "operator tools").
Status PendingDeletion(const std::string& key) {
  return Status::Unavailable(key + " is being deleted by gc; retry");
}

Status RefusePendingDeletion(PgConnection& conn, const std::string& key) {
  XET_ASSIGN_OR_RETURN(PgResult r, conn.Exec("SELECT 1 FROM gc_pending WHERE object_key = $1",
                                             PgParams().Text(key)));
  return r.rows() > 0 ? PendingDeletion(key) : Status::Ok();
}

// Raises the stamps of `xorbs` to the database clock, locking their rows until the
// transaction ends; returns those that exist.
Result<std::vector<Hash>> StampXorbs(PgConnection& conn, std::span<const Hash> xorbs) {
  XET_ASSIGN_OR_RETURN(
      PgResult r, conn.Exec(std::string("UPDATE xorbs SET seen_at_ms = GREATEST(seen_at_ms, ") +
                                kPgClockMsSql + ") WHERE hash = ANY($1::bytea[]) RETURNING hash",
                            PgParams().HashArray(xorbs)));
  std::vector<Hash> stamped;
  for (int row = 0; row < r.rows(); ++row) {
    XET_ASSIGN_OR_RETURN(Hash h, r.HashAt(row, 0, "xorb hash"));
    stamped.push_back(h);
  }
  return stamped;
}

constexpr const char* kPgTokenColumns =
    "id, name, secret_hash, permission, scopes, created_at, expires_at, revoked";

Result<TokenRecord> ReadTokenRow(const PgResult& r, int row) {
  TokenRecord t;
  t.id = std::string(r.Text(row, 0));
  t.name = std::string(r.Text(row, 1));
  XET_ASSIGN_OR_RETURN(t.secret_hash, r.HashAt(row, 2, "token secret hash"));
  const int64_t perm = r.Int(row, 3);
  if (perm < 1 || perm > 3) {
    return Status::Corruption("index token " + t.id + " has permission " + std::to_string(perm));
  }
  t.permission = static_cast<Permission>(perm);
  t.scopes = DecodeScopeList(r.Text(row, 4));
  t.created_at = r.Int(row, 5);
  t.expires_at = r.Int(row, 6);
  t.revoked = r.Bool(row, 7);
  return t;
}

// Pages through `sql` (ids below $1, newest first, at most $2 rows; the id in column 0) in
// one read-only snapshot, handing each row to `visit` until it returns false. A retried
// attempt resumes after the last visited id.
Status ForEachRecent(PgPool& pool, const std::string& sql,
                     const std::function<Result<bool>(const PgResult&, int)>& visit) {
  int64_t below = INT64_MAX;
  return pool.RunTransaction(
      PgIsolation::kRepeatableRead, /*read_only=*/true, [&](PgConnection& conn) -> Status {
        while (true) {
          XET_ASSIGN_OR_RETURN(PgResult r, conn.Exec(sql, PgParams().Int(below).Int(kRecentPage)));
          for (int i = 0; i < r.rows(); ++i) {
            below = r.Int(i, 0);
            XET_ASSIGN_OR_RETURN(bool more, visit(r, i));
            if (!more) return Status::Ok();
          }
          if (r.rows() < kRecentPage) return Status::Ok();
        }
      });
}

}  // namespace

Result<std::unique_ptr<Index>> OpenPostgresIndex(const std::string& url, size_t max_connections) {
  PostgresIndex::Options opts;
  opts.max_connections = max_connections;
  XET_ASSIGN_OR_RETURN(auto index, PostgresIndex::Open(url, opts));
  return std::unique_ptr<Index>(std::move(index));
}

Result<std::unique_ptr<PostgresIndex>> PostgresIndex::Open(const std::string& url,
                                                           const Options& opts) {
  XET_ASSIGN_OR_RETURN(auto pool, PgPool::Open(url, opts.max_connections));
  pool->policy() = opts.retry;
  {
    XET_ASSIGN_OR_RETURN(PgLease lease, pool->Acquire());
    XET_RETURN_IF_ERROR(MigratePostgresSchema(lease.conn()).WithContext("postgres index"));
  }
  return std::unique_ptr<PostgresIndex>(new PostgresIndex(std::move(pool)));
}

// --- xorbs ---

Result<bool> PostgresIndex::PutXorb(const XorbRecord& xorb, const Scope& scope) {
  XET_ASSIGN_OR_RETURN(const int64_t object_size, ToPgInt(xorb.object_size, "xorb size"));
  const std::vector<uint8_t> chunks = EncodeChunkRows(xorb.chunks);
  const std::vector<Hash> eligible = DedupIndexedChunks(xorb);
  bool created = false;
  const std::string key = XorbKey(xorb.hash);
  Status st =
      pool_->RunTransaction(PgIsolation::kReadCommitted, false, [&](PgConnection& conn) -> Status {
        XET_ASSIGN_OR_RETURN(
            PgResult ins,
            conn.Exec(std::string("INSERT INTO xorbs(hash, object_size, chunks, seen_at_ms) "
                                  "VALUES($1, $2, $3, ") +
                          kPgClockMsSql + ") ON CONFLICT(hash) DO NOTHING RETURNING id",
                      PgParams().Hash(xorb.hash).Int(object_size).Bytes(chunks)));
        created = ins.rows() == 1;
        if (!created) {
          XET_ASSIGN_OR_RETURN(const std::vector<Hash> stamped, StampXorbs(conn, {&xorb.hash, 1}));
          if (stamped.empty()) return PendingDeletion(key);  // gc retired it meanwhile
        } else if (!eligible.empty()) {
          XET_RETURN_IF_ERROR(
              conn.Exec("INSERT INTO dedup_chunks(chunk_hash, xorb_hash, seq) "
                        "SELECT c, $2, $3 FROM unnest($1::bytea[]) c ON CONFLICT DO NOTHING",
                        PgParams().HashArray(eligible).Hash(xorb.hash).Int(ins.Int(0, 0)))
                  .status());
        }
        // After the row is inserted or locked: a retirement that committed first is seen.
        XET_RETURN_IF_ERROR(RefusePendingDeletion(conn, key));
        return conn
            .Exec("INSERT INTO xorb_scopes(xorb_hash, scope) VALUES($1, $2) ON CONFLICT DO NOTHING",
                  PgParams().Hash(xorb.hash).Text(scope))
            .status();
      });
  XET_RETURN_IF_ERROR(st.WithContext("put xorb " + xorb.hash.ToHex()));
  return created;
}

Result<std::optional<XorbRecord>> PostgresIndex::GetXorb(const Hash& xorb_hash) {
  XET_ASSIGN_OR_RETURN(
      PgResult r, pool_->ExecOnce("SELECT hash, object_size, chunks FROM xorbs WHERE hash = $1",
                                  PgParams().Hash(xorb_hash)));
  if (r.rows() == 0) return std::optional<XorbRecord>();
  XET_ASSIGN_OR_RETURN(XorbRecord rec, ReadXorbRow(r, 0, 0));
  return std::optional<XorbRecord>(std::move(rec));
}

Status PostgresIndex::ForEachRecentXorb(const std::function<bool(XorbRecord)>& visit) {
  return ForEachRecent(*pool_,
                       "SELECT id, hash, object_size, chunks FROM xorbs WHERE id < $1 "
                       "ORDER BY id DESC LIMIT $2",
                       [&](const PgResult& r, int row) -> Result<bool> {
                         XET_ASSIGN_OR_RETURN(XorbRecord rec, ReadXorbRow(r, row, 1));
                         return visit(std::move(rec));
                       });
}

Result<bool> PostgresIndex::HasXorb(const Hash& xorb_hash) {
  XET_ASSIGN_OR_RETURN(PgResult r, pool_->ExecOnce("SELECT 1 FROM xorbs WHERE hash = $1",
                                                   PgParams().Hash(xorb_hash)));
  return r.rows() > 0;
}

Result<bool> PostgresIndex::XorbVisible(const Hash& xorb_hash, std::span<const Scope> scopes) {
  if (scopes.empty()) return HasXorb(xorb_hash);
  const std::vector<std::string> scope_array = ScopeArray(scopes);
  XET_ASSIGN_OR_RETURN(PgResult r,
                       pool_->ExecOnce("SELECT 1 FROM xorb_scopes WHERE xorb_hash = $1 "
                                       "AND scope = ANY($2::text[]) LIMIT 1",
                                       PgParams().Hash(xorb_hash).TextArray(scope_array)));
  return r.rows() > 0;
}

Result<std::vector<bool>> PostgresIndex::XorbsVisible(std::span<const Hash> xorb_hashes,
                                                      std::span<const Scope> scopes) {
  std::vector<bool> visible(xorb_hashes.size(), false);
  if (xorb_hashes.empty()) return visible;
  const std::vector<std::string> scope_array = ScopeArray(scopes);
  PgParams params;
  params.HashArray(xorb_hashes);
  std::string sql;
  if (scopes.empty()) {
    sql =
        "SELECT x.i FROM unnest($1::bytea[]) WITH ORDINALITY AS x(h, i) "
        "WHERE EXISTS(SELECT 1 FROM xorbs WHERE hash = x.h)";
  } else {
    sql =
        "SELECT x.i FROM unnest($1::bytea[]) WITH ORDINALITY AS x(h, i) "
        "WHERE EXISTS(SELECT 1 FROM xorb_scopes s WHERE s.xorb_hash = x.h "
        "AND s.scope = ANY($2::text[]))";
    params.TextArray(scope_array);
  }
  XET_ASSIGN_OR_RETURN(PgResult r, pool_->ExecOnce(sql, params));
  for (int row = 0; row < r.rows(); ++row) {
    const int64_t i = r.Int(row, 0);
    if (i < 1 || static_cast<size_t>(i) > visible.size()) {
      return Status::Internal("postgres: ordinality out of range");
    }
    visible[static_cast<size_t>(i - 1)] = true;
  }
  return visible;
}

// --- files and shards ---

Result<ShardCommitResult> PostgresIndex::CommitShard(const ShardCommit& commit) {
  // Files in hash order (the lock order every committer shares), encoded once.
  std::vector<const FileRecord*> files;
  files.reserve(commit.files.size());
  for (const FileRecord& f : commit.files) files.push_back(&f);
  std::sort(files.begin(), files.end(), [](const FileRecord* a, const FileRecord* b) {
    return std::lexicographical_compare(a->file_hash.data(), a->file_hash.data() + 32,
                                        b->file_hash.data(), b->file_hash.data() + 32);
  });
  // Each file once: the upsert below may not touch one row twice.
  files.erase(std::unique(files.begin(), files.end(),
                          [](const FileRecord* a, const FileRecord* b) {
                            return a->file_hash == b->file_hash;
                          }),
              files.end());
  std::vector<Hash> hashes;
  std::vector<int64_t> sizes;
  std::vector<std::optional<std::vector<uint8_t>>> terms, shas;
  for (const FileRecord* f : files) {
    XET_ASSIGN_OR_RETURN(const int64_t size, ToPgInt(f->size, "file size"));
    hashes.push_back(f->file_hash);
    sizes.push_back(size);
    terms.emplace_back(EncodeFileTerms(f->terms));
    if (f->sha256) {
      shas.emplace_back(std::vector<uint8_t>(f->sha256->data(), f->sha256->data() + 32));
    } else {
      shas.emplace_back(std::nullopt);
    }
  }
  const int64_t now = static_cast<int64_t>(std::time(nullptr));
  // One statement (pg_schema.cc, migrations 3 to 5): the whole transaction in one round trip, in
  // an implicit transaction of its own (READ COMMITTED: pg_connection.cc). Retried after a
  // deadlock or a lost connection, which is safe even when the lost attempt did commit: the
  // commit is idempotent (the retry finds the shard registered: kAlreadyExisted).
  auto r = pool_->ExecOnce(
      "SELECT xet_commit_shard($1, $2, $3, $4, $5::bytea[], $6::bytea[], "
      "$7::int8[], $8::bytea[], $9::bytea[], $10::bytea[], $11::text[])",
      PgParams()
          .Hash(commit.shard_hash)
          .Text(ShardKey(commit.shard_hash))
          .Text(commit.scope)
          .Int(now)
          .HashArray(XorbsNamedBy(commit))
          .HashArray(hashes)
          .IntArray(sizes)
          .OptBytesArray(terms)
          .OptBytesArray(shas)
          .HashArray(SortedUniqueHashes(commit.xorbs))
          .TextArray(ScopeArray(commit.visible_scopes)));
  if (!r.ok()) return r.status().WithContext("commit shard " + commit.shard_hash.ToHex());
  const bool registered = r->rows() == 1 && r->Bool(0, 0);
  return registered ? ShardCommitResult::kRegistered : ShardCommitResult::kAlreadyExisted;
}

Result<std::optional<FileRecord>> PostgresIndex::GetFile(const Hash& file_hash) {
  XET_ASSIGN_OR_RETURN(
      PgResult r, pool_->ExecOnce("SELECT hash, size, terms, sha256 FROM files WHERE hash = $1",
                                  PgParams().Hash(file_hash)));
  if (r.rows() == 0) return std::optional<FileRecord>();
  XET_ASSIGN_OR_RETURN(FileRecord rec, ReadFileRow(r, 0, 0));
  return std::optional<FileRecord>(std::move(rec));
}

Status PostgresIndex::ForEachRecentFile(const std::function<bool(FileRecord)>& visit) {
  return ForEachRecent(*pool_,
                       "SELECT id, hash, size, terms, sha256 FROM files WHERE id < $1 "
                       "ORDER BY id DESC LIMIT $2",
                       [&](const PgResult& r, int row) -> Result<bool> {
                         XET_ASSIGN_OR_RETURN(FileRecord rec, ReadFileRow(r, row, 1));
                         return visit(std::move(rec));
                       });
}

Result<bool> PostgresIndex::FileVisible(const Hash& file_hash, std::span<const Scope> scopes) {
  if (scopes.empty()) {
    XET_ASSIGN_OR_RETURN(PgResult r, pool_->ExecOnce("SELECT 1 FROM files WHERE hash = $1",
                                                     PgParams().Hash(file_hash)));
    return r.rows() > 0;
  }
  const std::vector<std::string> scope_array = ScopeArray(scopes);
  XET_ASSIGN_OR_RETURN(PgResult r,
                       pool_->ExecOnce("SELECT 1 FROM file_scopes WHERE file_hash = $1 "
                                       "AND scope = ANY($2::text[]) LIMIT 1",
                                       PgParams().Hash(file_hash).TextArray(scope_array)));
  return r.rows() > 0;
}

// --- global dedup ---

Result<std::vector<Hash>> PostgresIndex::FindXorbsWithChunk(const Hash& chunk_hash,
                                                            std::span<const Scope> scopes,
                                                            size_t limit) {
  std::vector<Hash> xorbs;
  if (limit == 0) return xorbs;
  const std::vector<std::string> scope_array = ScopeArray(scopes);
  PgParams params;
  params.Hash(chunk_hash).Int(PgLimit(limit));
  // Column 1: whether the xorb's stamp needs refreshing.
  std::string sql = std::string("SELECT d.xorb_hash, x.seen_at_ms < ") + kPgClockMsSql + " - " +
                    std::to_string(kSeenStampRefreshMs) +
                    " FROM dedup_chunks d JOIN xorbs x ON x.hash = d.xorb_hash "
                    "WHERE d.chunk_hash = $1 ";
  if (!scopes.empty()) {
    sql +=
        "AND EXISTS(SELECT 1 FROM xorb_scopes s WHERE s.xorb_hash = d.xorb_hash AND "
        "s.scope = ANY($3::text[])) ";
    params.TextArray(scope_array);
  }
  sql += "ORDER BY d.seq DESC LIMIT $2";
  XET_ASSIGN_OR_RETURN(PgResult r, pool_->ExecOnce(sql, params));
  std::vector<Hash> stale;
  for (int row = 0; row < r.rows(); ++row) {
    XET_ASSIGN_OR_RETURN(Hash h, r.HashAt(row, 0, "dedup xorb hash"));
    xorbs.push_back(h);
    if (r.Bool(row, 1)) stale.push_back(h);
  }
  if (stale.empty()) return xorbs;
  // Handing a xorb out counts as seeing it (index.h): one gc retired meanwhile is left out.
  std::vector<Hash> stamped;
  Status st =
      pool_->RunTransaction(PgIsolation::kReadCommitted, false, [&](PgConnection& conn) -> Status {
        XET_ASSIGN_OR_RETURN(stamped, StampXorbs(conn, SortedUniqueHashes(stale)));
        return Status::Ok();
      });
  XET_RETURN_IF_ERROR(st.WithContext("stamp dedup answer"));
  stamped = SortedUniqueHashes(std::move(stamped));
  std::erase_if(xorbs, [&](const Hash& h) {
    return std::find(stale.begin(), stale.end(), h) != stale.end() &&
           std::find(stamped.begin(), stamped.end(), h) == stamped.end();
  });
  return xorbs;
}

// --- tokens ---

Status PostgresIndex::PutToken(const TokenRecord& token) {
  if (token.id.empty()) return Status::InvalidArgument("token id is empty");
  XET_ASSIGN_OR_RETURN(const std::string scopes, EncodeScopeList(token.scopes));
  auto r =
      pool_->ExecOnce(std::string("INSERT INTO tokens(") + kPgTokenColumns +
                          ") VALUES($1, $2, $3, $4, $5, $6, $7, $8) "
                          "ON CONFLICT(id) DO UPDATE SET name = excluded.name, "
                          "secret_hash = excluded.secret_hash, permission = excluded.permission, "
                          "scopes = excluded.scopes, created_at = excluded.created_at, "
                          "expires_at = excluded.expires_at, revoked = excluded.revoked",
                      PgParams()
                          .Text(token.id)
                          .Text(token.name)
                          .Hash(token.secret_hash)
                          .Int(static_cast<int64_t>(token.permission))
                          .Text(scopes)
                          .Int(token.created_at)
                          .Int(token.expires_at)
                          .Bool(token.revoked));
  if (r.status().code() == Status::Code::kAlreadyExists) {
    return Status::InvalidArgument("put token " + token.id +
                                   ": another token has the same secret hash");
  }
  return r.status().WithContext("put token " + token.id);
}

Result<std::optional<TokenRecord>> PostgresIndex::FindTokenBySecretHash(const Hash& secret_hash) {
  XET_ASSIGN_OR_RETURN(PgResult r, pool_->ExecOnce(std::string("SELECT ") + kPgTokenColumns +
                                                       " FROM tokens WHERE secret_hash = $1",
                                                   PgParams().Hash(secret_hash)));
  if (r.rows() == 0) return std::optional<TokenRecord>();
  XET_ASSIGN_OR_RETURN(TokenRecord t, ReadTokenRow(r, 0));
  return std::optional<TokenRecord>(std::move(t));
}

Result<std::vector<TokenRecord>> PostgresIndex::ListTokens() {
  XET_ASSIGN_OR_RETURN(PgResult r, pool_->ExecOnce(std::string("SELECT ") + kPgTokenColumns +
                                                       " FROM tokens ORDER BY created_at, id",
                                                   PgParams()));
  std::vector<TokenRecord> tokens;
  for (int row = 0; row < r.rows(); ++row) {
    XET_ASSIGN_OR_RETURN(TokenRecord t, ReadTokenRow(r, row));
    tokens.push_back(std::move(t));
  }
  return tokens;
}

Status PostgresIndex::RevokeToken(const std::string& id) {
  XET_ASSIGN_OR_RETURN(PgResult r, pool_->ExecOnce("UPDATE tokens SET revoked = true WHERE id = $1",
                                                   PgParams().Text(id)));
  if (r.Affected() == 0) return Status::NotFound("no token with id " + id);
  return Status::Ok();
}

}  // namespace xet
