// SqliteIndex: the Index contract on one SQLite database file.
//
// - WAL journal, synchronous=FULL (every COMMIT fsyncs the WAL), foreign keys on,
//   busy_timeout set; the schema is migrated at open (sqlite_schema.h).
// - Reads: a pool of read-only connections (SqliteReadPool), each with cached prepared
//   statements; WAL lets them run concurrently with each other and with the writer.
// - Writes: one read-write connection owned by a SqliteGroupCommitter, which commits the
//   operations of concurrent callers in one transaction with a savepoint each: one fsync
//   per group, per-operation success or failure, each caller's result durable on return.
// - Records are stored as packed blobs (index_blobs.h): GetFile of a 100,000-term file is
//   one row read and one memcpy.
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "common/result.h"
#include "store/index.h"
#include "store/sqlite/sqlite_group_commit.h"
#include "store/sqlite/sqlite_read_pool.h"

namespace xet {

class SqliteIndex final : public Index {
 public:
  struct Options {
    size_t read_connections = 4;    // memory-mapped: records and listings
    size_t lookup_connections = 4;  // not mapped: existence, visibility and token lookups
    int busy_timeout_ms = 10000;
  };

  static Result<std::unique_ptr<SqliteIndex>> Open(const std::string& path, const Options& opts);

  Result<bool> PutXorb(const XorbRecord& xorb, const Scope& scope) override;
  Result<std::optional<XorbRecord>> GetXorb(const Hash& xorb_hash) override;
  Result<bool> HasXorb(const Hash& xorb_hash) override;
  Result<bool> XorbVisible(const Hash& xorb_hash, std::span<const Scope> scopes) override;
  Status ForEachRecentXorb(const std::function<bool(XorbRecord)>& visit) override;
  Result<std::vector<bool>> XorbsVisible(std::span<const Hash> xorb_hashes,
                                         std::span<const Scope> scopes) override;

  Result<ShardCommitResult> CommitShard(const ShardCommit& commit) override;
  Result<std::optional<FileRecord>> GetFile(const Hash& file_hash) override;
  Result<bool> FileVisible(const Hash& file_hash, std::span<const Scope> scopes) override;
  Status ForEachRecentFile(const std::function<bool(FileRecord)>& visit) override;

  Result<std::vector<Hash>> FindXorbsWithChunk(const Hash& chunk_hash,
                                               std::span<const Scope> scopes,
                                               size_t limit) override;

  // Buckets (sqlite_bucket_index.cc).
  Result<BucketRecord> CreateBucket(const std::string& ns, const std::string& name, bool is_private,
                                    int64_t now_ms) override;
  Result<std::optional<BucketRecord>> GetBucket(const std::string& ns,
                                                const std::string& name) override;
  Result<std::vector<BucketRecord>> ListBuckets(const std::string& ns, const std::string& search,
                                                const std::string& after, size_t limit) override;
  Status DeleteBucket(const std::string& ns, const std::string& name) override;
  Status MoveBucket(const std::string& from_ns, const std::string& from_name,
                    const std::string& to_ns, const std::string& to_name, int64_t now_ms) override;
  Result<BucketBatchResult> ApplyBucketBatch(const std::string& ns, const std::string& name,
                                             const std::vector<BucketOp>& ops,
                                             int64_t now_ms) override;
  Result<std::optional<BucketEntry>> GetBucketEntry(const std::string& ns, const std::string& name,
                                                    const std::string& path) override;
  Result<std::vector<BucketEntry>> GetBucketEntries(const std::string& ns, const std::string& name,
                                                    std::span<const std::string> paths) override;
  Result<BucketTreePage> ListBucketTree(const std::string& ns, const std::string& name,
                                        const std::string& prefix, bool recursive,
                                        const std::string& cursor, size_t limit) override;

  Status PutToken(const TokenRecord& token) override;
  Result<std::optional<TokenRecord>> FindTokenBySecretHash(const Hash& secret_hash) override;
  Result<std::vector<TokenRecord>> ListTokens() override;
  Status RevokeToken(const std::string& id) override;

  // Operator tools: gc/fsck (sqlite_operator_tools.cc).
  Result<int64_t> IndexClockMs() override;
  Status ForEachXorbRow(const std::function<Status(const GcXorbRow&)>& visit) override;
  Status ForEachFileRow(bool with_terms,
                        const std::function<Status(const GcFileRow&)>& visit) override;
  Status ForEachShardRow(const std::function<Status(const GcShardRow&)>& visit) override;
  Result<std::vector<Hash>> CollectFiles(std::span<const Hash> files, int64_t cutoff_ms,
                                         bool dry_run) override;
  Result<std::vector<Hash>> RetireXorbs(std::span<const Hash> xorbs, int64_t cutoff_ms,
                                        bool dry_run) override;
  Result<std::vector<Hash>> RetireShards(std::span<const Hash> shards, int64_t cutoff_ms,
                                         bool dry_run) override;
  Result<std::vector<std::string>> PendingDeletions(size_t limit,
                                                    int64_t retired_before_ms) override;
  Status ForgetPendingDeletions(std::span<const std::string> keys) override;

  // Migration (sqlite_migration.cc; ImportBucketEntries with the buckets).
  Result<std::vector<ExportedXorb>> ExportXorbs(int64_t after_row_id, size_t limit) override;
  Result<std::vector<ExportedFile>> ExportFiles(int64_t after_row_id, size_t limit) override;
  Result<std::vector<ExportedShard>> ExportShards(const Hash& after, size_t limit) override;
  Status ImportXorbs(std::span<const ExportedXorb> xorbs) override;
  Status ImportFiles(std::span<const ExportedFile> files) override;
  Status ImportShards(std::span<const ExportedShard> shards) override;
  Status ImportBucketEntries(const BucketRecord& bucket, std::span<const BucketEntry> put,
                             std::span<const BucketEntry> remove) override;

  // Group-commit counters (committed transactions, operations in them).
  SqliteGroupCommitter::Stats WriteStats() const { return writer_->stats(); }

 private:
  SqliteIndex(std::unique_ptr<SqliteReadPool> readers, std::unique_ptr<SqliteReadPool> lookups,
              std::unique_ptr<SqliteGroupCommitter> writer)
      : readers_(std::move(readers)), lookups_(std::move(lookups)), writer_(std::move(writer)) {}

  // Declared in this order so the writer drains and stops before the readers close.
  // readers_ map the database file (records of up to megabytes); lookups_ do not (point
  // queries, where remapping after every commit costs more than the mapping saves; see
  // SqliteReadPool::Open).
  std::unique_ptr<SqliteReadPool> readers_;
  std::unique_ptr<SqliteReadPool> lookups_;
  std::unique_ptr<SqliteGroupCommitter> writer_;
};

}  // namespace xet
