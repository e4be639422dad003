// PostgresIndex: the Index contract on a PostgreSQL database, shared by any number of
// `xetstore serve` nodes.
//
// - Connections: a bounded PgPool (pg_pool.h); every statement is a prepared statement of
//   its connection with binary parameters and results (pg_connection.h). The schema is
//   migrated at open (pg_schema.h).
// - Durability: every mutating call is one transaction, committed (synchronous_commit as
//   the server is configured; the default waits for the WAL flush) before it returns.
// - Isolation and retries, per operation (RunTransaction retries 40001 and 40P01 and lost
//   connections before COMMIT, with backoff; policy in PgRetryPolicy):
//   * PutXorb, CommitShard: READ COMMITTED. Everything they write is content-addressed
//     (INSERT ... ON CONFLICT DO NOTHING on unique hashes and (hash, scope) keys), so two
//     nodes registering the same xorb, file or shard converge on one row; rows are inserted
//     in hash order, so concurrent commits lock in the same order (a deadlock that slips
//     through is retried). The xorb foreign keys make "every xorb a shard lists is stored"
//     hold at commit, not just when it was checked. CommitShard is one statement, one round
//     trip: the function xet_commit_shard (pg_schema.cc, migrations 3, 4) runs its steps.
//   * ApplyBucketBatch, MoveBucket, DeleteBucket: READ COMMITTED, and the bucket's row is
//     locked first (SELECT ... FOR UPDATE). Every writer of a bucket's entries holds that
//     lock until it commits, so batches of one bucket run one after another and each
//     statement after the lock sees every earlier batch: the same result as running them
//     serially, with no serialization failures to retry. (REPEATABLE READ would take its
//     snapshot before the lock wait and fail every waiter with 40001 after each commit: under
//     contention batches would starve.) Nothing is half-applied: a batch is one transaction.
//   * CreateBucket, PutToken, RevokeToken: one statement each (READ COMMITTED); unique keys
//     decide races.
//   * Reads of one statement run on their own (autocommit); reads of several statements
//     (GetBucketEntry/Entries, ListBucketTree, ForEachRecent*) run in one REPEATABLE READ
//     READ ONLY transaction, i.e. one snapshot.
// - Records are packed blobs (store/index_blobs.h): GetFile of a 100,000-term file is one
//   row. Batched writes send arrays (unnest) instead of one statement per row.
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "common/result.h"
#include "store/index.h"
#include "store/postgres/pg_pool.h"

namespace xet {

class PostgresIndex final : public Index {
 public:
  struct Options {
    size_t max_connections = kDefaultPostgresConnections;
    PgRetryPolicy retry;
  };

  // `url`: a libpq connection URI ("postgres://user:pass@host:port/db?...") or key=value
  // string. Connects, migrates the schema, and keeps up to opts.max_connections open.
  static Result<std::unique_ptr<PostgresIndex>> Open(const std::string& url, const Options& opts);

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

  // Buckets (postgres_bucket_index.cc).
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

  // Operator tools: gc/fsck (postgres_operator_tools.cc).
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

  // Migration (postgres_migration.cc; ImportBucketEntries with the buckets).
  Result<std::vector<ExportedXorb>> ExportXorbs(int64_t after_row_id, size_t limit) override;
  Result<std::vector<ExportedFile>> ExportFiles(int64_t after_row_id, size_t limit) override;
  Result<std::vector<ExportedShard>> ExportShards(const Hash& after, size_t limit) override;
  Status ImportXorbs(std::span<const ExportedXorb> xorbs) override;
  Status ImportFiles(std::span<const ExportedFile> files) override;
  Status ImportShards(std::span<const ExportedShard> shards) override;
  Status ImportBucketEntries(const BucketRecord& bucket, std::span<const BucketEntry> put,
                             std::span<const BucketEntry> remove) override;

  PgPool& pool() { return *pool_; }

 private:
  explicit PostgresIndex(std::unique_ptr<PgPool> pool) : pool_(std::move(pool)) {}

  std::unique_ptr<PgPool> pool_;
};

}  // namespace xet
