// Index: the metadata store of the CAS (xorbs, files, dedup chunk index, visibility,
// shards, tokens) and of the buckets on top of it (buckets, entries).
//
// Contract for every implementation (SQLite, PostgreSQL):
// - Every mutating call is one durable transaction: when it returns OK the change survives
//   a crash or power loss; when it returns an error nothing of it is visible.
// - Thread-safe: any number of threads may call any method concurrently. Implementations
//   may group concurrent commits into one transaction (group commit) as long as each
//   caller's result is durable before its call returns.
// - Lookups that take `scopes` only return what one of those scopes can see; an empty
//   `scopes` list means "all scopes" and is used only for admin callers.
// Errors: NotFound is never used for "absent" in lookups (they return nullopt/false);
// IoError/Corruption/Internal for storage failures.
// Every backend passes the contract suites of tests/store/index_contract.h.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "common/result.h"
#include "store/bucket_records.h"
#include "store/index_records.h"

namespace xet {

// What CommitShard registers, all in one transaction.
struct ShardCommit {
  Hash shard_hash;                // hash of the shard bytes as uploaded (idempotency key)
  Scope scope;                    // the uploader's scope: files become visible to it
  std::vector<FileRecord> files;  // validated by the caller
  std::vector<Hash> xorbs;        // xorbs the shard lists in its CAS section (visibility)
  // The uploader's read scopes. When non-empty, every xorb the shard names must be visible
  // to one of them (XorbVisible), checked in the commit's transaction. Empty: no check
  // (admins, and fsck re-registering a stored shard).
  std::vector<Scope> visible_scopes = {};
};

enum class ShardCommitResult { kAlreadyExisted = 0, kRegistered = 1 };

// A listing page ends early (with a cursor) once its items' POSIX metadata, as encoded,
// reaches this many bytes: a page of 10,000 entries with 128 KiB of metadata each would
// otherwise cost over a gigabyte to build and send.
inline constexpr size_t kMaxListingPosixBytes = 16 << 20;

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
  // XorbVisible for each of `xorb_hashes` (element i answers xorb_hashes[i]), read from one
  // snapshot: one lookup for the many xorbs a shard references.
  virtual Result<std::vector<bool>> XorbsVisible(std::span<const Hash> xorb_hashes,
                                                 std::span<const Scope> scopes) = 0;

  // Hands `visit` the records of the most recently stored xorbs, newest first, until it
  // returns false or every xorb was visited: what a server warms its caches with at start.
  // Reads one snapshot. The default visits none (an index that cannot scan cheaply).
  virtual Status ForEachRecentXorb(const std::function<bool(XorbRecord)>& visit) {
    (void)visit;
    return Status::Ok();
  }

  // --- files and shards ---
  // Registers a shard's files and xorb visibility for commit.scope. Files already known
  // keep their stored record (content addressing); visibility is added. Idempotent: a
  // shard hash already registered returns kAlreadyExisted (visibility is still ensured).
  // InvalidArgument, registering nothing, if a xorb of commit.xorbs is not stored, or if a
  // xorb the shard names is not visible to commit.visible_scopes (XorbNotUploaded's
  // message, naming the first such xorb in hash order).
  virtual Result<ShardCommitResult> CommitShard(const ShardCommit& commit) = 0;
  virtual Result<std::optional<FileRecord>> GetFile(const Hash& file_hash) = 0;
  virtual Result<bool> FileVisible(const Hash& file_hash, std::span<const Scope> scopes) = 0;
  // ForEachRecentXorb for file records: newest registered first.
  virtual Status ForEachRecentFile(const std::function<bool(FileRecord)>& visit) {
    (void)visit;
    return Status::Ok();
  }

  // --- global dedup ---
  // Xorbs holding `chunk_hash` as an eligible chunk that one of `scopes` can see, at most
  // `limit`, most recently added first.
  virtual Result<std::vector<Hash>> FindXorbsWithChunk(const Hash& chunk_hash,
                                                       std::span<const Scope> scopes,
                                                       size_t limit) = 0;

  // --- buckets ---
  // Creates an empty bucket. AlreadyExists if NAMESPACE/BUCKET is taken. The caller has
  // validated the names (protocol/bucket_path.h).
  virtual Result<BucketRecord> CreateBucket(const std::string& ns, const std::string& name,
                                            bool is_private, int64_t now_ms) = 0;
  virtual Result<std::optional<BucketRecord>> GetBucket(const std::string& ns,
                                                        const std::string& name) = 0;
  // Buckets of `ns` (every namespace when empty) whose name contains `search` (when not
  // empty; ASCII case-insensitive), ordered by (namespace, name), starting after `after`
  // ("NAMESPACE/BUCKET", or empty for the first page), at most `limit`.
  virtual Result<std::vector<BucketRecord>> ListBuckets(const std::string& ns,
                                                        const std::string& search,
                                                        const std::string& after, size_t limit) = 0;
  // Deletes the bucket, its entries and every visibility its scope held. NotFound if absent.
  virtual Status DeleteBucket(const std::string& ns, const std::string& name) = 0;
  // Renames NAMESPACE/BUCKET `from` to `to` (entries and visibility follow, one
  // transaction; the generation grows by one). NotFound if `from` is absent, AlreadyExists if `to`
  // is taken.
  virtual Status MoveBucket(const std::string& from_ns, const std::string& from_name,
                            const std::string& to_ns, const std::string& to_name,
                            int64_t now_ms) = 0;
  // Applies `ops` in order to bucket NAMESPACE/BUCKET in ONE durable transaction: the
  // operations that fail (unknown or invisible file, missing copy source, ...) are reported
  // in the result and change nothing; the rest are committed together, so no reader ever
  // sees part of a batch. Entries whose last reference to a file is removed or overwritten
  // take that file's visibility to the bucket's scope with them. Updates the bucket's
  // totals and updated_at, and adds one to its generation when an entry changed. NotFound if
  // the bucket is absent.
  virtual Result<BucketBatchResult> ApplyBucketBatch(const std::string& ns, const std::string& name,
                                                     const std::vector<BucketOp>& ops,
                                                     int64_t now_ms) = 0;
  // The entry at `path`, if any: the file entry, else the explicit directory entry of `path`
  // (is_directory). NotFound if the bucket is absent.
  virtual Result<std::optional<BucketEntry>> GetBucketEntry(const std::string& ns,
                                                            const std::string& name,
                                                            const std::string& path) = 0;
  // Entries at `paths` as GetBucketEntry finds them (absent paths are skipped), in the order
  // given, from one snapshot. NotFound if the bucket is absent.
  virtual Result<std::vector<BucketEntry>> GetBucketEntries(const std::string& ns,
                                                            const std::string& name,
                                                            std::span<const std::string> paths) = 0;
  // Lists entries under directory `prefix` ("" = the root; no trailing '/'), ordered by path
  // (bytewise; a directory sorts as its path + "/"). recursive: every file and explicit
  // directory entry below; otherwise the files directly in `prefix` and one item per
  // subdirectory (with its explicit entry if it has one). `prefix`'s own directory entry is
  // not an item. At most `limit` items (InvalidArgument if 0; fewer, with a cursor, once the
  // page's POSIX metadata reaches kMaxListingPosixBytes), continuing from
  // `cursor` (from a previous page of the same listing; InvalidArgument if it is malformed
  // or belongs to another listing); next_cursor is set only when more items follow. Pages
  // are consistent with each other only as far as the bucket did not change in between. A
  // prefix that names a file lists that file alone. NotFound if the bucket is absent.
  virtual Result<BucketTreePage> ListBucketTree(const std::string& ns, const std::string& name,
                                                const std::string& prefix, bool recursive,
                                                const std::string& cursor, size_t limit) = 0;

  // --- tokens ---
  // Stores `token`, replacing the token with the same id. InvalidArgument if the id is
  // empty, a scope is empty or holds a newline, or another token has the same secret_hash.
  virtual Status PutToken(const TokenRecord& token) = 0;
  virtual Result<std::optional<TokenRecord>> FindTokenBySecretHash(const Hash& secret_hash) = 0;
  // Every token (revoked ones included), ordered by (created_at, id).
  virtual Result<std::vector<TokenRecord>> ListTokens() = 0;
  // Marks the token revoked. NotFound if no token has this id.
  virtual Status RevokeToken(const std::string& id) = 0;

  // --- operator tools: gc/fsck ---
  // What `xetstore gc` and `xetstore fsck` (store/ops/) use; never the request paths. The
  // listings page through the index in id (or hash) order, a page per query, without one
  // long snapshot: rows added while one runs may or may not be visited, rows removed by
  // another caller may still be.
  //
  // Liveness stamps: every xorb, file and shard row carries `seen_at_ms`, the index clock
  // (IndexClockMs) when the row was last stored, registered or handed out:
  // - PutXorb stamps its xorb;
  // - CommitShard stamps its shard, its files, and every xorb its CAS section or its files'
  //   terms name (PostgreSQL: unless that xorb's stamp is within the slack of the clock, which
  //   IndexClockMs subtracts, so it counts as taken now); it checks, in the transaction that
  //   registers the files, that each of those xorbs is stored (InvalidArgument "xorb H is not
  //   stored" otherwise), so a file never references a xorb that RetireXorbs removed;
  // - FindXorbsWithChunk stamps the xorbs it answers whose stamp is older than
  //   kSeenStampRefreshMs (a dedup answer protects its xorbs for the grace period).
  // Retired objects: RetireXorbs/RetireShards remove the rows of what they retire and record
  // its object key as pending deletion in the same transaction. Until ForgetPendingDeletions
  // drops the key (after the object was deleted), PutXorb of that xorb and CommitShard of that
  // shard fail with Unavailable ("being deleted by gc; retry"): a re-upload can never land
  // between gc's row deletion and its object deletion and be left without its object.

  static constexpr int64_t kSeenStampRefreshMs = 60'000;

  struct GcXorbRow {
    Hash hash;
    uint64_t object_size = 0;
    int64_t seen_at_ms = 0;
  };
  struct GcFileRow {
    Hash hash;
    int64_t seen_at_ms = 0;
    std::vector<FileTerm> terms;  // only when asked for
  };
  struct GcShardRow {
    Hash hash;
    int64_t seen_at_ms = 0;
  };

  // The clock the stamps are written with, in unix milliseconds (PostgreSQL: the database
  // server's, so nodes' clocks do not matter; SQLite: this machine's), read so that every
  // write not yet committed when it returns stamps at or after the value returned: a gc
  // whose cutoff is at most this value, and whose scans start after it returns, sees every
  // row a stamp older than the cutoff protects. PostgreSQL: at most the start of the oldest
  // transaction in progress (stamps are taken while a transaction runs, before it commits;
  // the sessions must be visible in pg_stat_activity, i.e. of the same role or with
  // pg_read_all_stats), less the stamp slack CommitShard leaves stamps alone within, read
  // after sleeping that slack (250 ms); SQLite: read by the single writer, after every write
  // queued before.
  virtual Result<int64_t> IndexClockMs() = 0;
  // Every xorb, file (with its terms when `with_terms`) and shard row; stops at (and
  // returns) the first error `visit` returns.
  virtual Status ForEachXorbRow(const std::function<Status(const GcXorbRow&)>& visit) = 0;
  virtual Status ForEachFileRow(bool with_terms,
                                const std::function<Status(const GcFileRow&)>& visit) = 0;
  virtual Status ForEachShardRow(const std::function<Status(const GcShardRow&)>& visit) = 0;
  // Of `files`, those whose stamp is older than `cutoff_ms` and that no bucket entry points
  // at lose their record and all their visibility, in one transaction (atomic with respect
  // to ApplyBucketBatch: an entry added concurrently either keeps the file or fails as "file
  // not found"). Returns the files removed; with `dry_run` the files that would be, changing
  // nothing.
  virtual Result<std::vector<Hash>> CollectFiles(std::span<const Hash> files, int64_t cutoff_ms,
                                                 bool dry_run) = 0;
  // Of `xorbs`, those whose stamp is older than `cutoff_ms` lose their record, visibility and
  // dedup rows, and their object keys become pending deletions, in one transaction. The
  // caller has established that no file references them (a reference registered later
  // stamps the xorb, which keeps it). Returns the xorbs retired (dry_run: would be).
  virtual Result<std::vector<Hash>> RetireXorbs(std::span<const Hash> xorbs, int64_t cutoff_ms,
                                                bool dry_run) = 0;
  // As RetireXorbs for shard rows (the caller has established their files are gone).
  virtual Result<std::vector<Hash>> RetireShards(std::span<const Hash> shards, int64_t cutoff_ms,
                                                 bool dry_run) = 0;
  // Object keys pending deletion that were retired before `retired_before_ms` (index clock;
  // at most `limit`, in key order), and their removal once the objects are deleted.
  virtual Result<std::vector<std::string>> PendingDeletions(size_t limit,
                                                            int64_t retired_before_ms) = 0;
  virtual Status ForgetPendingDeletions(std::span<const std::string> keys) = 0;

  // --- migration: what `xetstore migrate` (store/ops/deployment_migrator.h) copies ---
  // Rows as stored, to copy an index to another backend. The exports page through the index
  // (xorbs and files in the order they were stored, after the row id `after_row_id`, 0 for
  // the first page; shards in hash order after `after`), a page per query, at most `limit`
  // rows: rows stored while a copy runs are met by a later page or a later run. The imports
  // write one page in one durable transaction, idempotently: a row already present keeps its
  // record (content addressing) and gains the scopes and the newer stamp; a new row gets the
  // stamp given (and a xorb its dedup chunk rows, as PutXorb). They fail with Unavailable
  // for a key pending deletion, like PutXorb and CommitShard.

  struct ExportedXorb {
    int64_t row_id = 0;  // the exporting index's, only a cursor
    XorbRecord record;
    int64_t seen_at_ms = 0;
    std::vector<Scope> scopes;  // every scope that can see it
  };
  struct ExportedFile {
    int64_t row_id = 0;
    FileRecord record;
    int64_t seen_at_ms = 0;
    std::vector<Scope> scopes;
  };
  struct ExportedShard {
    Hash hash;
    Scope scope;             // the uploader's
    int64_t created_at = 0;  // unix seconds
    int64_t seen_at_ms = 0;
  };

  virtual Result<std::vector<ExportedXorb>> ExportXorbs(int64_t after_row_id, size_t limit) = 0;
  virtual Result<std::vector<ExportedFile>> ExportFiles(int64_t after_row_id, size_t limit) = 0;
  virtual Result<std::vector<ExportedShard>> ExportShards(const Hash& after, size_t limit) = 0;
  virtual Status ImportXorbs(std::span<const ExportedXorb> xorbs) = 0;
  // InvalidArgument ("xorb H is not in the index"), importing nothing, if a term names a
  // xorb that is not stored: xorbs are imported first.
  virtual Status ImportFiles(std::span<const ExportedFile> files) = 0;
  virtual Status ImportShards(std::span<const ExportedShard> shards) = 0;
  // Brings bucket bucket.FullName() to a copy's state, in one durable transaction: creates it
  // if absent (with bucket.created_at_ms and is_private), removes the entries `remove` names
  // (by path and is_directory: exactly that entry, nothing else), then writes each of `put`
  // exactly as given (uploaded_at_ms included; a file entry replaces the directory entry at
  // its path, as in a batch), giving each file entry's file the bucket's scope. Totals follow
  // the entries; a file that lost its last entry loses the bucket's visibility, as in a batch.
  // Then is_private and updated_at_ms are set from `bucket`, and the generation to at least
  // bucket.generation (and past the old one if an entry changed). InvalidArgument ("file H
  // of PATH is not in the index"), changing nothing, if a file entry (other than the empty
  // file's) names an unregistered file: files are imported first.
  virtual Status ImportBucketEntries(const BucketRecord& bucket, std::span<const BucketEntry> put,
                                     std::span<const BucketEntry> remove) = 0;
};

// The embedded default: one SQLite database file (WAL, synchronous=FULL, schema migrations
// tracked in a version table), created if missing.
Result<std::unique_ptr<Index>> OpenSqliteIndex(const std::string& path);

// The scale-out backend: a PostgreSQL database shared by any number of nodes. `url` is a
// libpq connection URI ("postgres://user:pass@host:port/db") or key=value string. The schema
// is created or migrated at open; a database newer than this binary is refused. At most
// `max_connections` connections are open at once (callers beyond them wait).
inline constexpr size_t kDefaultPostgresConnections = 16;
Result<std::unique_ptr<Index>> OpenPostgresIndex(
    const std::string& url, size_t max_connections = kDefaultPostgresConnections);

}  // namespace xet
