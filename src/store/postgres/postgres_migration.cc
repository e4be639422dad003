// PostgresIndex: the migration exports and imports of index.h ("migration"). An export is one
// statement (scopes aggregated per row); an import writes its page with array parameters
// (unnest), a few statements per page rather than per row, in one READ COMMITTED
// transaction: everything it writes is content-addressed, as in PutXorb and CommitShard.
#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "store/index_blobs.h"
#include "store/index_support.h"
#include "store/object_store.h"
#include "store/postgres/pg_schema.h"
#include "store/postgres/pg_values.h"
#include "store/postgres/postgres_index.h"

namespace xet {
namespace {

// The scopes column (string_agg(scope, E'\n'), NULL for none) of `row`.
std::vector<Scope> ScopesAt(const PgResult& r, int row, int col) {
  if (r.IsNull(row, col)) return {};
  return DecodeScopeList(r.Text(row, col));
}

// Unavailable if one of `keys` is pending deletion by gc, as PutXorb and CommitShard.
Status RefusePendingDeletions(PgConnection& conn, const std::vector<std::string>& keys) {
  XET_ASSIGN_OR_RETURN(
      PgResult r, conn.Exec("SELECT object_key FROM gc_pending WHERE object_key = ANY($1::text[]) "
                            "LIMIT 1",
                            PgParams().TextArray(keys)));
  if (r.rows() == 0) return Status::Ok();
  return Status::Unavailable(std::string(r.Text(0, 0)) + " is being deleted by gc; retry");
}

// The rows of one export query, each read by `read`.
template <typename Row>
Result<std::vector<Row>> ExportRows(PgPool& pool, const std::string& sql, const PgParams& params,
                                    Result<Row> (*read)(const PgResult&, int)) {
  XET_ASSIGN_OR_RETURN(PgResult r, pool.ExecOnce(sql, params));
  std::vector<Row> out;
  out.reserve(static_cast<size_t>(r.rows()));
  for (int row = 0; row < r.rows(); ++row) {
    XET_ASSIGN_OR_RETURN(Row x, read(r, row));
    out.push_back(std::move(x));
  }
  return out;
}

// (hash, scope) pairs, for an unnest into a *_scopes table.
struct ScopePairs {
  std::vector<Hash> hashes;
  std::vector<std::string> scopes;
  void Add(const Hash& h, const std::vector<Scope>& of) {
    for (const Scope& s : of) {
      hashes.push_back(h);
      scopes.push_back(s);
    }
  }
};

}  // namespace

Result<std::vector<Index::ExportedXorb>> PostgresIndex::ExportXorbs(int64_t after_row_id,
                                                                    size_t limit) {
  return ExportRows<ExportedXorb>(
      *pool_,
      "SELECT x.id, x.hash, x.object_size, x.chunks, x.seen_at_ms, "
      "(SELECT string_agg(s.scope, E'\\n' ORDER BY s.scope) FROM xorb_scopes s "
      "WHERE s.xorb_hash = x.hash) FROM xorbs x WHERE x.id > $1 ORDER BY x.id LIMIT $2",
      PgParams().Int(after_row_id).Int(PgLimit(limit)),
      [](const PgResult& r, int row) -> Result<ExportedXorb> {
        ExportedXorb x;
        x.row_id = r.Int(row, 0);
        XET_ASSIGN_OR_RETURN(x.record.hash, r.HashAt(row, 1, "xorb hash"));
        XET_ASSIGN_OR_RETURN(x.record.object_size, r.SizeAt(row, 2, "xorb size"));
        XET_ASSIGN_OR_RETURN(x.record.chunks, DecodeChunkRows(r.Bytes(row, 3)));
        x.seen_at_ms = r.Int(row, 4);
        x.scopes = ScopesAt(r, row, 5);
        return x;
      });
}

Result<std::vector<Index::ExportedFile>> PostgresIndex::ExportFiles(int64_t after_row_id,
                                                                    size_t limit) {
  return ExportRows<ExportedFile>(
      *pool_,
      "SELECT f.id, f.hash, f.size, f.terms, f.sha256, f.seen_at_ms, "
      "(SELECT string_agg(s.scope, E'\\n' ORDER BY s.scope) FROM file_scopes s "
      "WHERE s.file_hash = f.hash) FROM files f WHERE f.id > $1 ORDER BY f.id LIMIT $2",
      PgParams().Int(after_row_id).Int(PgLimit(limit)),
      [](const PgResult& r, int row) -> Result<ExportedFile> {
        ExportedFile f;
        f.row_id = r.Int(row, 0);
        XET_ASSIGN_OR_RETURN(f.record.file_hash, r.HashAt(row, 1, "file hash"));
        XET_ASSIGN_OR_RETURN(f.record.size, r.SizeAt(row, 2, "file size"));
        XET_ASSIGN_OR_RETURN(f.record.terms, DecodeFileTerms(r.Bytes(row, 3)));
        if (!r.IsNull(row, 4)) {
          XET_ASSIGN_OR_RETURN(f.record.sha256, r.HashAt(row, 4, "file sha256"));
        }
        f.seen_at_ms = r.Int(row, 5);
        f.scopes = ScopesAt(r, row, 6);
        return f;
      });
}

Result<std::vector<Index::ExportedShard>> PostgresIndex::ExportShards(const Hash& after,
                                                                      size_t limit) {
  return ExportRows<ExportedShard>(
      *pool_,
      "SELECT hash, scope, created_at, seen_at_ms FROM shards WHERE hash > $1 ORDER BY hash "
      "LIMIT $2",
      PgParams().Hash(after).Int(PgLimit(limit)),
      [](const PgResult& r, int row) -> Result<ExportedShard> {
        ExportedShard s;
        XET_ASSIGN_OR_RETURN(s.hash, r.HashAt(row, 0, "shard hash"));
        s.scope = std::string(r.Text(row, 1));
        s.created_at = r.Int(row, 2);
        s.seen_at_ms = r.Int(row, 3);
        return s;
      });
}

Status PostgresIndex::ImportXorbs(std::span<const ExportedXorb> xorbs) {
  if (xorbs.empty()) return Status::Ok();
  std::vector<Hash> hashes;
  std::vector<int64_t> sizes, seen;
  std::vector<std::optional<std::vector<uint8_t>>> chunks;
  std::vector<std::string> keys;
  ScopePairs pairs;
  for (const ExportedXorb& x : xorbs) {
    XET_ASSIGN_OR_RETURN(const int64_t size, ToPgInt(x.record.object_size, "xorb size"));
    hashes.push_back(x.record.hash);
    sizes.push_back(size);
    seen.push_back(x.seen_at_ms);
    chunks.emplace_back(EncodeChunkRows(x.record.chunks));
    keys.push_back(XorbKey(x.record.hash));
    pairs.Add(x.record.hash, x.scopes);
  }
  return pool_->RunTransaction(
      PgIsolation::kReadCommitted, false, [&](PgConnection& conn) -> Status {
        XET_ASSIGN_OR_RETURN(
            PgResult ins,
            conn.Exec(
                "INSERT INTO xorbs(hash, object_size, chunks, seen_at_ms) "
                "SELECT * FROM unnest($1::bytea[], $2::int8[], $3::bytea[], $4::int8[]) "
                "ON CONFLICT(hash) DO NOTHING RETURNING id, hash",
                PgParams().HashArray(hashes).IntArray(sizes).OptBytesArray(chunks).IntArray(seen)));
        XET_RETURN_IF_ERROR(
            conn.Exec("UPDATE xorbs x SET seen_at_ms = GREATEST(x.seen_at_ms, u.s) "
                      "FROM unnest($1::bytea[], $2::int8[]) AS u(h, s) WHERE x.hash = u.h",
                      PgParams().HashArray(hashes).IntArray(seen))
                .status());
        // The dedup chunk rows of the xorbs that are new here, as PutXorb writes them.
        std::vector<Hash> chunk_hashes, chunk_xorbs;
        std::vector<int64_t> seqs;
        for (int row = 0; row < ins.rows(); ++row) {
          XET_ASSIGN_OR_RETURN(const Hash h, ins.HashAt(row, 1, "xorb hash"));
          for (const ExportedXorb& x : xorbs) {
            if (x.record.hash != h) continue;
            for (const Hash& c : DedupIndexedChunks(x.record)) {
              chunk_hashes.push_back(c);
              chunk_xorbs.push_back(h);
              seqs.push_back(ins.Int(row, 0));
            }
            break;
          }
        }
        if (!chunk_hashes.empty()) {
          XET_RETURN_IF_ERROR(
              conn.Exec("INSERT INTO dedup_chunks(chunk_hash, xorb_hash, seq) "
                        "SELECT * FROM unnest($1::bytea[], $2::bytea[], $3::int8[]) "
                        "ON CONFLICT DO NOTHING",
                        PgParams().HashArray(chunk_hashes).HashArray(chunk_xorbs).IntArray(seqs))
                  .status());
        }
        if (!pairs.hashes.empty()) {
          XET_RETURN_IF_ERROR(
              conn.Exec("INSERT INTO xorb_scopes(xorb_hash, scope) "
                        "SELECT * FROM unnest($1::bytea[], $2::text[]) ON CONFLICT DO NOTHING",
                        PgParams().HashArray(pairs.hashes).TextArray(pairs.scopes))
                  .status());
        }
        // After the rows are inserted or locked: a retirement that committed first is seen.
        return RefusePendingDeletions(conn, keys);
      });
}

Status PostgresIndex::ImportFiles(std::span<const ExportedFile> files) {
  if (files.empty()) return Status::Ok();
  std::vector<Hash> hashes, term_xorbs;
  std::vector<int64_t> sizes, seen;
  std::vector<std::optional<std::vector<uint8_t>>> terms, shas;
  ScopePairs pairs;
  for (const ExportedFile& f : files) {
    XET_ASSIGN_OR_RETURN(const int64_t size, ToPgInt(f.record.size, "file size"));
    hashes.push_back(f.record.file_hash);
    sizes.push_back(size);
    seen.push_back(f.seen_at_ms);
    terms.emplace_back(EncodeFileTerms(f.record.terms));
    if (f.record.sha256) {
      shas.emplace_back(
          std::vector<uint8_t>(f.record.sha256->data(), f.record.sha256->data() + 32));
    } else {
      shas.emplace_back(std::nullopt);
    }
    for (const FileTerm& t : f.record.terms) term_xorbs.push_back(t.xorb_hash);
    pairs.Add(f.record.file_hash, f.scopes);
  }
  term_xorbs = SortedUniqueHashes(std::move(term_xorbs));
  return pool_->RunTransaction(
      PgIsolation::kReadCommitted, false, [&](PgConnection& conn) -> Status {
        if (!term_xorbs.empty()) {
          // Locked against a retirement until this commits, as CommitShard's stamp does.
          XET_ASSIGN_OR_RETURN(
              PgResult found,
              conn.Exec(
                  "SELECT hash FROM xorbs WHERE hash = ANY($1::bytea[]) ORDER BY hash FOR SHARE",
                  PgParams().HashArray(term_xorbs)));
          if (found.rows() != static_cast<int>(term_xorbs.size())) {
            std::vector<Hash> have;
            for (int row = 0; row < found.rows(); ++row) {
              XET_ASSIGN_OR_RETURN(Hash h, found.HashAt(row, 0, "xorb hash"));
              have.push_back(h);
            }
            have = SortedUniqueHashes(std::move(have));
            for (const Hash& h : term_xorbs) {
              if (!std::binary_search(have.begin(), have.end(), h)) {
                return Status::InvalidArgument("xorb " + h.ToHex() + " is not in the index");
              }
            }
          }
        }
        XET_RETURN_IF_ERROR(
            conn.Exec("INSERT INTO files(hash, size, terms, sha256, seen_at_ms) "
                      "SELECT * FROM unnest($1::bytea[], $2::int8[], $3::bytea[], $4::bytea[], "
                      "$5::int8[]) ON CONFLICT(hash) DO UPDATE SET "
                      "seen_at_ms = GREATEST(files.seen_at_ms, excluded.seen_at_ms)",
                      PgParams()
                          .HashArray(hashes)
                          .IntArray(sizes)
                          .OptBytesArray(terms)
                          .OptBytesArray(shas)
                          .IntArray(seen))
                .status());
        if (pairs.hashes.empty()) return Status::Ok();
        return conn
            .Exec(
                "INSERT INTO file_scopes(file_hash, scope) "
                "SELECT * FROM unnest($1::bytea[], $2::text[]) ON CONFLICT DO NOTHING",
                PgParams().HashArray(pairs.hashes).TextArray(pairs.scopes))
            .status();
      });
}

Status PostgresIndex::ImportShards(std::span<const ExportedShard> shards) {
  if (shards.empty()) return Status::Ok();
  std::vector<Hash> hashes;
  std::vector<std::string> scopes, keys;
  std::vector<int64_t> created, seen;
  for (const ExportedShard& s : shards) {
    hashes.push_back(s.hash);
    scopes.push_back(s.scope);
    created.push_back(s.created_at);
    seen.push_back(s.seen_at_ms);
    keys.push_back(ShardKey(s.hash));
  }
  return pool_->RunTransaction(
      PgIsolation::kReadCommitted, false, [&](PgConnection& conn) -> Status {
        XET_RETURN_IF_ERROR(
            conn.Exec(
                    "INSERT INTO shards(hash, scope, created_at, seen_at_ms) "
                    "SELECT * FROM unnest($1::bytea[], $2::text[], $3::int8[], $4::int8[]) "
                    "ON CONFLICT(hash) DO UPDATE SET "
                    "seen_at_ms = GREATEST(shards.seen_at_ms, excluded.seen_at_ms)",
                    PgParams().HashArray(hashes).TextArray(scopes).IntArray(created).IntArray(seen))
                .status());
        return RefusePendingDeletions(conn, keys);
      });
}

}  // namespace xet
