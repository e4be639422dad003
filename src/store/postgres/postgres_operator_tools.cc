// PostgresIndex: the operator tools of index.h ("operator tools: gc/fsck").
//
// Removals run in READ COMMITTED transactions that lock what they remove first (SELECT ...
// FOR UPDATE re-checks its WHERE clause on the newest version of a row it waited for), so
// they serialize with the writers that keep a row alive:
// - RetireXorbs locks the xorb rows whose stamp is old; PutXorb and CommitShard stamp xorbs
//   with an UPDATE of the same rows (CommitShard only those older than the stamp slack, which
//   IndexClockMs subtracts, so no cutoff reaches the others): whichever locks first wins. A stamp
//   that lands first makes the row fail the re-check (kept); a retirement that lands first leaves
//   the stamping UPDATE no row (PutXorb: Unavailable, CommitShard: "xorb H is not in the index").
// - CollectFiles locks the file rows, then (FOR SHARE) the rows of the buckets whose scopes
//   see those files. ApplyBucketBatch, MoveBucket and DeleteBucket lock their bucket's row
//   FOR UPDATE before touching its entries, so no entry of those buckets can appear until
//   the collection commits; files that a bucket not locked can see are kept.
#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>

#include "store/index_blobs.h"
#include "store/index_support.h"
#include "store/object_store.h"
#include "store/postgres/pg_schema.h"
#include "store/postgres/pg_values.h"
#include "store/postgres/postgres_index.h"

namespace xet {
namespace {

// Joins bucket b to scope s.scope ("NS/NAME") through the (ns, name) key.
constexpr const char* kBucketOfScope =
    "b.ns = split_part(s.scope, '/', 1) AND b.name = substr(s.scope, strpos(s.scope, '/') + 1)";

// Rows a listing reads per query; file rows with their terms (up to megabytes each) fewer.
constexpr int64_t kRowPage = 1000;
constexpr int64_t kTermsPage = 64;

Result<std::vector<Hash>> HashColumn0(const PgResult& r, const char* what) {
  std::vector<Hash> out;
  for (int row = 0; row < r.rows(); ++row) {
    XET_ASSIGN_OR_RETURN(Hash h, r.HashAt(row, 0, what));
    out.push_back(h);
  }
  return out;
}

Status AddPendingDeletions(PgConnection& conn, const std::vector<std::string>& keys) {
  if (keys.empty()) return Status::Ok();
  return conn
      .Exec(std::string("INSERT INTO gc_pending(object_key, retired_at_ms) SELECT k, ") +
                kPgClockMsSql + " FROM unnest($1::text[]) k ON CONFLICT DO NOTHING",
            PgParams().TextArray(keys))
      .status();
}

}  // namespace

Result<int64_t> PostgresIndex::IndexClockMs() {
  // A transaction in progress may already have stamped rows with its (earlier) clock and
  // commit after this returns: the oldest such start bounds the value. A shard commit also
  // leaves stamps up to the slack old alone (pg_schema.cc, migration 4), so the slack is
  // subtracted; sleeping it first keeps everything stamped before this call older than the
  // value returned (with no grace, gc still frees what was let go just before it started).
  XET_RETURN_IF_ERROR(
      pool_->ExecOnce("SELECT pg_sleep(xet_stamp_slack_ms() / 1000.0)", PgParams()).status());
  XET_ASSIGN_OR_RETURN(
      PgResult r,
      pool_->ExecOnce(std::string("SELECT LEAST(") + kPgClockMsSql +
                          ", COALESCE((SELECT (extract(epoch from min(xact_start)) * 1000)::bigint "
                          "FROM pg_stat_activity WHERE xact_start IS NOT NULL "
                          "AND pid <> pg_backend_pid() AND datname = current_database()), " +
                          kPgClockMsSql + ")) - xet_stamp_slack_ms()",
                      PgParams()));
  return r.Int(0, 0);
}

Status PostgresIndex::ForEachXorbRow(const std::function<Status(const GcXorbRow&)>& visit) {
  int64_t after = 0;
  while (true) {
    XET_ASSIGN_OR_RETURN(PgResult r, pool_->ExecOnce("SELECT id, hash, object_size, seen_at_ms "
                                                     "FROM xorbs WHERE id > $1 ORDER BY id "
                                                     "LIMIT $2",
                                                     PgParams().Int(after).Int(kRowPage)));
    for (int row = 0; row < r.rows(); ++row) {
      after = r.Int(row, 0);
      GcXorbRow x;
      XET_ASSIGN_OR_RETURN(x.hash, r.HashAt(row, 1, "xorb hash"));
      XET_ASSIGN_OR_RETURN(x.object_size, r.SizeAt(row, 2, "xorb size"));
      x.seen_at_ms = r.Int(row, 3);
      XET_RETURN_IF_ERROR(visit(x));
    }
    if (r.rows() < kRowPage) return Status::Ok();
  }
}

Status PostgresIndex::ForEachFileRow(bool with_terms,
                                     const std::function<Status(const GcFileRow&)>& visit) {
  const std::string sql = std::string("SELECT id, hash, seen_at_ms") +
                          (with_terms ? ", terms" : "") +
                          " FROM files WHERE id > $1 ORDER BY id LIMIT $2";
  const int64_t page = with_terms ? kTermsPage : kRowPage;
  int64_t after = 0;
  while (true) {
    XET_ASSIGN_OR_RETURN(PgResult r, pool_->ExecOnce(sql, PgParams().Int(after).Int(page)));
    for (int row = 0; row < r.rows(); ++row) {
      after = r.Int(row, 0);
      GcFileRow f;
      XET_ASSIGN_OR_RETURN(f.hash, r.HashAt(row, 1, "file hash"));
      f.seen_at_ms = r.Int(row, 2);
      if (with_terms) {
        XET_ASSIGN_OR_RETURN(f.terms, DecodeFileTerms(r.Bytes(row, 3)));
      }
      XET_RETURN_IF_ERROR(visit(f));
    }
    if (r.rows() < page) return Status::Ok();
  }
}

Status PostgresIndex::ForEachShardRow(const std::function<Status(const GcShardRow&)>& visit) {
  Hash after;  // all zeros: before every SHA-256
  while (true) {
    XET_ASSIGN_OR_RETURN(PgResult r,
                         pool_->ExecOnce("SELECT hash, seen_at_ms FROM shards WHERE hash > $1 "
                                         "ORDER BY hash LIMIT $2",
                                         PgParams().Hash(after).Int(kRowPage)));
    for (int row = 0; row < r.rows(); ++row) {
      GcShardRow s;
      XET_ASSIGN_OR_RETURN(s.hash, r.HashAt(row, 0, "shard hash"));
      s.seen_at_ms = r.Int(row, 1);
      after = s.hash;
      XET_RETURN_IF_ERROR(visit(s));
    }
    if (r.rows() < kRowPage) return Status::Ok();
  }
}

Result<std::vector<Hash>> PostgresIndex::CollectFiles(std::span<const Hash> files,
                                                      int64_t cutoff_ms, bool dry_run) {
  const std::vector<Hash> sorted = SortedUniqueHashes({files.begin(), files.end()});
  std::vector<Hash> collected;
  Status st = pool_->RunTransaction(
      PgIsolation::kReadCommitted, dry_run, [&](PgConnection& conn) -> Status {
        const std::string lock = dry_run ? "" : " FOR UPDATE";
        XET_ASSIGN_OR_RETURN(
            PgResult stale,
            conn.Exec("SELECT hash FROM files WHERE hash = ANY($1::bytea[]) AND seen_at_ms < $2 "
                      "ORDER BY hash" +
                          lock,
                      PgParams().HashArray(sorted).Int(cutoff_ms)));
        XET_ASSIGN_OR_RETURN(std::vector<Hash> candidates, HashColumn0(stale, "file hash"));
        if (candidates.empty()) {
          collected.clear();
          return Status::Ok();
        }
        XET_ASSIGN_OR_RETURN(
            PgResult buckets,
            conn.Exec("SELECT b.id FROM buckets b JOIN (SELECT DISTINCT scope FROM file_scopes "
                      "WHERE file_hash = ANY($1::bytea[])) s ON " +
                          std::string(kBucketOfScope) + " ORDER BY b.id" +
                          std::string(dry_run ? "" : " FOR SHARE OF b"),
                      PgParams().HashArray(candidates)));
        std::vector<int64_t> locked;
        for (int row = 0; row < buckets.rows(); ++row) locked.push_back(buckets.Int(row, 0));
        // A file goes when no bucket whose scope sees it has an entry for it, and every such
        // bucket is locked (one renamed in between is not: keep the file for the next run).
        XET_ASSIGN_OR_RETURN(
            PgResult free,
            conn.Exec("SELECT c FROM unnest($1::bytea[]) c WHERE NOT EXISTS(SELECT 1 FROM "
                      "file_scopes s JOIN buckets b ON " +
                          std::string(kBucketOfScope) +
                          " "
                          "WHERE s.file_hash = c AND (b.id <> ALL($2::int8[]) OR EXISTS(SELECT 1 "
                          "FROM bucket_entries e WHERE e.bucket_id = b.id AND e.file_hash = c)))",
                      PgParams().HashArray(candidates).IntArray(locked)));
        XET_ASSIGN_OR_RETURN(collected, HashColumn0(free, "file hash"));
        if (dry_run || collected.empty()) return Status::Ok();
        XET_RETURN_IF_ERROR(conn.Exec("DELETE FROM file_scopes WHERE file_hash = ANY($1::bytea[])",
                                      PgParams().HashArray(collected))
                                .status());
        return conn
            .Exec("DELETE FROM files WHERE hash = ANY($1::bytea[])",
                  PgParams().HashArray(collected))
            .status();
      });
  XET_RETURN_IF_ERROR(st.WithContext("gc: collect files"));
  return collected;
}

Result<std::vector<Hash>> PostgresIndex::RetireXorbs(std::span<const Hash> xorbs, int64_t cutoff_ms,
                                                     bool dry_run) {
  const std::vector<Hash> sorted = SortedUniqueHashes({xorbs.begin(), xorbs.end()});
  std::vector<Hash> retired;
  Status st = pool_->RunTransaction(
      PgIsolation::kReadCommitted, dry_run, [&](PgConnection& conn) -> Status {
        XET_ASSIGN_OR_RETURN(
            PgResult stale,
            conn.Exec("SELECT hash, chunks FROM xorbs WHERE hash = ANY($1::bytea[]) AND "
                      "seen_at_ms < $2 ORDER BY hash" +
                          std::string(dry_run ? "" : " FOR UPDATE"),
                      PgParams().HashArray(sorted).Int(cutoff_ms)));
        XET_ASSIGN_OR_RETURN(retired, HashColumn0(stale, "xorb hash"));
        if (dry_run || retired.empty()) return Status::Ok();
        std::vector<Hash> chunk_of, xorb_of;  // the dedup rows to delete, as pairs
        std::vector<std::string> keys;
        for (int row = 0; row < stale.rows(); ++row) {
          XorbRecord rec;
          rec.hash = retired[static_cast<size_t>(row)];
          XET_ASSIGN_OR_RETURN(rec.chunks, DecodeChunkRows(stale.Bytes(row, 1)));
          for (const Hash& c : DedupIndexedChunks(rec)) {
            chunk_of.push_back(c);
            xorb_of.push_back(rec.hash);
          }
          keys.push_back(XorbKey(rec.hash));
        }
        if (!chunk_of.empty()) {
          XET_RETURN_IF_ERROR(
              conn.Exec("DELETE FROM dedup_chunks d USING unnest($1::bytea[], $2::bytea[]) "
                        "AS p(c, x) WHERE d.chunk_hash = p.c AND d.xorb_hash = p.x",
                        PgParams().HashArray(chunk_of).HashArray(xorb_of))
                  .status());
        }
        XET_RETURN_IF_ERROR(conn.Exec("DELETE FROM xorb_scopes WHERE xorb_hash = ANY($1::bytea[])",
                                      PgParams().HashArray(retired))
                                .status());
        XET_RETURN_IF_ERROR(conn.Exec("DELETE FROM xorbs WHERE hash = ANY($1::bytea[])",
                                      PgParams().HashArray(retired))
                                .status());
        return AddPendingDeletions(conn, keys);
      });
  XET_RETURN_IF_ERROR(st.WithContext("gc: retire xorbs"));
  return retired;
}

Result<std::vector<Hash>> PostgresIndex::RetireShards(std::span<const Hash> shards,
                                                      int64_t cutoff_ms, bool dry_run) {
  const std::vector<Hash> sorted = SortedUniqueHashes({shards.begin(), shards.end()});
  std::vector<Hash> retired;
  Status st = pool_->RunTransaction(
      PgIsolation::kReadCommitted, dry_run, [&](PgConnection& conn) -> Status {
        XET_ASSIGN_OR_RETURN(
            PgResult stale,
            conn.Exec("SELECT hash FROM shards WHERE hash = ANY($1::bytea[]) AND seen_at_ms < $2 "
                      "ORDER BY hash" +
                          std::string(dry_run ? "" : " FOR UPDATE"),
                      PgParams().HashArray(sorted).Int(cutoff_ms)));
        XET_ASSIGN_OR_RETURN(retired, HashColumn0(stale, "shard hash"));
        if (dry_run || retired.empty()) return Status::Ok();
        std::vector<std::string> keys;
        for (const Hash& h : retired) keys.push_back(ShardKey(h));
        XET_RETURN_IF_ERROR(conn.Exec("DELETE FROM shards WHERE hash = ANY($1::bytea[])",
                                      PgParams().HashArray(retired))
                                .status());
        return AddPendingDeletions(conn, keys);
      });
  XET_RETURN_IF_ERROR(st.WithContext("gc: retire shards"));
  return retired;
}

Result<std::vector<std::string>> PostgresIndex::PendingDeletions(size_t limit,
                                                                 int64_t retired_before_ms) {
  const int64_t sql_limit = PgLimit(limit);
  XET_ASSIGN_OR_RETURN(PgResult r,
                       pool_->ExecOnce("SELECT object_key FROM gc_pending WHERE retired_at_ms < $2 "
                                       "ORDER BY object_key LIMIT $1",
                                       PgParams().Int(sql_limit).Int(retired_before_ms)));
  std::vector<std::string> keys;
  for (int row = 0; row < r.rows(); ++row) keys.emplace_back(r.Text(row, 0));
  return keys;
}

Status PostgresIndex::ForgetPendingDeletions(std::span<const std::string> keys) {
  if (keys.empty()) return Status::Ok();
  return pool_
      ->ExecOnce("DELETE FROM gc_pending WHERE object_key = ANY($1::text[])",
                 PgParams().TextArray(keys))
      .status();
}

}  // namespace xet
