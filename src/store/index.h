// Index: the metadata store of the CAS (xorbs, files, dedup chunk index, visibility,
// shards, tokens).
//
// Contract for every implementation (SQLite now, PostgreSQL later):
// - Every mutating call is one durable transaction: when it returns OK the change survives
//   a crash or power loss; when it returns an error nothing of it is visible.
// - Thread-safe: any number of threads may call any method concurrently. Implementations
//   may group concurrent commits into one transaction (group commit) as long as each
//   caller's result is durable before its call returns.
// - Lookups that take `scopes` only return what one of those scopes can see; an empty
//   `scopes` list means "all scopes" and is used only for admin callers.
// Errors: NotFound is never used for "absent" in lookups (they return nullopt/false);
// IoError/Corruption/Internal for storage failures.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "common/result.h"
#include "store/index_records.h"

namespace xet {

// What CommitShard registers, all in one transaction.
struct ShardCommit {
  Hash shard_hash;                // hash of the shard bytes as uploaded (idempotency key)
  Scope scope;                    // the uploader's scope: files become visible to it
  std::vector<FileRecord> files;  // validated by the caller
  std::vector<Hash> xorbs;        // xorbs the shard lists in its CAS section (visibility)
};

enum class ShardCommitResult { kAlreadyExisted = 0, kRegistered = 1 };

class Index {
 public:
  virtual ~Index() = default;

  // --- xorbs ---
  // Records a validated, stored xorb and makes it visible to `scope`. Also records the
  // xorb's global-dedup-eligible chunks (hash % 1024 == 0 in the last 8 bytes, and chunk 0)
  // in the dedup chunk index. Returns true if the xorb was new (its metadata was written),
  // false if it was already known (only visibility may have been added).
  virtual Result<bool> PutXorb(const XorbRecord& xorb, const Scope& scope) = 0;
  virtual Result<std::optional<XorbRecord>> GetXorb(const Hash& xorb_hash) = 0;
  // Existence only, cheaper than GetXorb.
  virtual Result<bool> HasXorb(const Hash& xorb_hash) = 0;
  virtual Result<bool> XorbVisible(const Hash& xorb_hash, std::span<const Scope> scopes) = 0;

  // --- files and shards ---
  // Registers a shard's files and xorb visibility for commit.scope. Files already known
  // keep their stored record (content addressing); visibility is added. Idempotent: a
  // shard hash already registered returns kAlreadyExisted (visibility is still ensured).
  virtual Result<ShardCommitResult> CommitShard(const ShardCommit& commit) = 0;
  virtual Result<std::optional<FileRecord>> GetFile(const Hash& file_hash) = 0;
  virtual Result<bool> FileVisible(const Hash& file_hash, std::span<const Scope> scopes) = 0;

  // --- global dedup ---
  // Xorbs holding `chunk_hash` as an eligible chunk that one of `scopes` can see, at most
  // `limit`, most recently added first.
  virtual Result<std::vector<Hash>> FindXorbsWithChunk(const Hash& chunk_hash,
                                                       std::span<const Scope> scopes,
                                                       size_t limit) = 0;

  // --- tokens ---
  virtual Status PutToken(const TokenRecord& token) = 0;
  virtual Result<std::optional<TokenRecord>> FindTokenBySecretHash(const Hash& secret_hash) = 0;
  virtual Result<std::vector<TokenRecord>> ListTokens() = 0;
  // Marks the token revoked. NotFound if no token has this id.
  virtual Status RevokeToken(const std::string& id) = 0;
};

// The embedded default: one SQLite database file (WAL, synchronous=FULL, schema migrations
// tracked in a version table), created if missing.
Result<std::unique_ptr<Index>> OpenSqliteIndex(const std::string& path);

}  // namespace xet
