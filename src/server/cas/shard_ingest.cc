#include "server/cas/shard_ingest.h"

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "format/merkle.h"
#include "format/sha256.h"
#include "format/shard_parser.h"
#include "format/shard_validation.h"
#include "store/index_support.h"

namespace xet {
namespace {

std::string TermContext(size_t file, const Hash& file_hash, size_t term) {
  return "file " + std::to_string(file) + " (" + file_hash.ToHex() + ") term " +
         std::to_string(term);
}

// The xorbs a shard references: their visibility to the uploader, then their chunk tables,
// loaded before any term is checked.
class ReferencedXorbs {
 public:
  // The distinct xorbs `shard` references, in order of first use (terms, then CAS infos).
  explicit ReferencedXorbs(const Shard& shard) {
    auto note = [&](const Hash& h) {
      if (records_.emplace(h, nullptr).second) hashes_.push_back(h);
    };
    for (const FileInfo& f : shard.files) {
      for (const FileDataSequenceEntry& t : f.terms) note(t.cas_hash);
    }
    for (const CasInfo& cas : shard.cas_infos) note(cas.cas_hash);
  }

  // Checks that every xorb is visible to `scopes`: from `cache` where it holds the answer
  // (may be null), from the index in one lookup for the rest (whose positive answers enter
  // the cache). XorbNotUploaded for the first that is not.
  Status CheckVisible(Index& index, std::span<const Scope> scopes, VisibleXorbCache* cache) {
    std::vector<Hash> asked;
    for (const Hash& h : hashes_) {
      if (cache != nullptr && cache->Contains(h, scopes)) {
        used_cache_ = true;
      } else {
        asked.push_back(h);
      }
    }
    if (asked.empty()) return Status::Ok();
    XET_ASSIGN_OR_RETURN(std::vector<bool> visible, index.XorbsVisible(asked, scopes));
    for (size_t i = 0; i < asked.size(); ++i) {
      if (!visible[i]) return XorbNotUploaded(asked[i]);
      if (cache != nullptr) cache->Insert(asked[i], scopes);
    }
    return Status::Ok();
  }

  // Loads every chunk table, from the shared cache when there is one (may be null).
  Status LoadRecords(Index& index, XorbRecordCache* shared) {
    for (const Hash& h : hashes_) {
      XET_ASSIGN_OR_RETURN(std::shared_ptr<const XorbRecord> rec, Read(h, index, shared));
      if (rec == nullptr) return XorbNotUploaded(h);
      records_[h] = std::move(rec);
    }
    return Status::Ok();
  }

  // `error`, a refusal of the shard, as the index alone would decide it: answers from the
  // visibility cache may be stale, and a shard naming a xorb its uploader cannot see is
  // refused for that first (the first such in order of first use), whatever else is wrong.
  Status Refusal(Status error, Index& index, std::span<const Scope> scopes) const {
    if (!used_cache_ || error.code() != Status::Code::kInvalidArgument) return error;
    XET_ASSIGN_OR_RETURN(std::vector<bool> visible, index.XorbsVisible(hashes_, scopes));
    for (size_t i = 0; i < hashes_.size(); ++i) {
      if (!visible[i]) return XorbNotUploaded(hashes_[i]);
    }
    return error;
  }

  // A xorb the shard references (LoadRecords succeeded).
  const XorbRecord& Get(const Hash& hash) const { return *records_.at(hash); }

 private:
  // The record, or nullptr when the xorb is unknown.
  static Result<std::shared_ptr<const XorbRecord>> Read(const Hash& hash, Index& index,
                                                        XorbRecordCache* shared) {
    if (shared != nullptr) return shared->Get(hash);
    XET_ASSIGN_OR_RETURN(auto rec, index.GetXorb(hash));
    if (!rec) return std::shared_ptr<const XorbRecord>();
    return std::make_shared<const XorbRecord>(std::move(*rec));
  }

  std::vector<Hash> hashes_;
  std::unordered_map<Hash, std::shared_ptr<const XorbRecord>> records_;
  bool used_cache_ = false;
};

uint32_t ChunkSize(const XorbRecord& x, size_t i) {
  return x.chunks[i].uncompressed_end - (i == 0 ? 0 : x.chunks[i - 1].uncompressed_end);
}

Status CheckCasInfo(const CasInfo& cas, const XorbRecord& x) {
  const std::string ctx = "CAS info for xorb " + cas.cas_hash.ToHex();
  if (cas.entries.size() != x.chunks.size()) {
    return Status::InvalidArgument(ctx + ": lists " + std::to_string(cas.entries.size()) +
                                   " chunks, the stored xorb has " +
                                   std::to_string(x.chunks.size()));
  }
  for (size_t i = 0; i < x.chunks.size(); ++i) {
    const CasChunkEntry& e = cas.entries[i];
    const uint32_t start = i == 0 ? 0 : x.chunks[i - 1].uncompressed_end;
    if (e.chunk_hash != x.chunks[i].hash || e.unpacked_segment_bytes != ChunkSize(x, i) ||
        e.chunk_byte_range_start != start) {
      return Status::InvalidArgument(ctx + ": chunk " + std::to_string(i) +
                                     " does not match the stored xorb");
    }
  }
  if (cas.num_bytes_in_cas != (x.chunks.empty() ? 0 : x.chunks.back().uncompressed_end)) {
    return Status::InvalidArgument(ctx + ": num_bytes_in_cas does not match the stored xorb");
  }
  return Status::Ok();
}

// The files and CAS infos of `shard` checked against the loaded chunk tables: what
// CommitShard registers (without the shard hash).
Result<ShardCommit> VerifiedCommit(const Shard& shard, const ReferencedXorbs& xorbs,
                                   const ShardIngestOptions& options) {
  size_t total_terms = 0;
  for (const FileInfo& f : shard.files) total_terms += f.terms.size();
  size_t verified_terms = 0;

  ShardCommit commit;
  commit.scope = options.scope;
  commit.visible_scopes.assign(options.visible_scopes.begin(), options.visible_scopes.end());
  commit.files.reserve(shard.files.size());
  std::vector<ChunkInfo> file_chunks;
  std::vector<Hash> term_hashes;
  for (size_t fi = 0; fi < shard.files.size(); ++fi) {
    const FileInfo& f = shard.files[fi];
    FileRecord rec;
    rec.file_hash = f.file_hash;
    file_chunks.clear();
    for (size_t ti = 0; ti < f.terms.size(); ++ti) {
      const FileDataSequenceEntry& t = f.terms[ti];
      const XorbRecord* x = &xorbs.Get(t.cas_hash);
      const std::string ctx = TermContext(fi, f.file_hash, ti);
      if (t.chunk_index_start >= t.chunk_index_end || t.chunk_index_end > x->chunks.size()) {
        return Status::InvalidArgument(
            ctx + ": chunk range [" + std::to_string(t.chunk_index_start) + ", " +
            std::to_string(t.chunk_index_end) + ") is outside xorb " + t.cas_hash.ToHex() + " of " +
            std::to_string(x->chunks.size()) + " chunks");
      }
      term_hashes.clear();
      uint64_t bytes = 0;
      for (uint32_t c = t.chunk_index_start; c < t.chunk_index_end; ++c) {
        term_hashes.push_back(x->chunks[c].hash);
        file_chunks.push_back({x->chunks[c].hash, ChunkSize(*x, c)});
        bytes += ChunkSize(*x, c);
      }
      if (bytes != t.unpacked_segment_bytes) {
        return Status::InvalidArgument(ctx + ": unpacked_segment_bytes " +
                                       std::to_string(t.unpacked_segment_bytes) +
                                       " but the chunks hold " + std::to_string(bytes));
      }
      if (VerificationHash(term_hashes) != f.verification[ti].range_hash) {
        return Status::InvalidArgument(ctx +
                                       ": verification hash does not match the stored chunks");
      }
      rec.terms.push_back(
          {t.cas_hash, t.chunk_index_start, t.chunk_index_end, t.unpacked_segment_bytes});
      rec.size += bytes;
      if (options.progress) options.progress(++verified_terms, total_terms);
    }
    if (FileHash(file_chunks) != f.file_hash) {
      return Status::InvalidArgument("file " + std::to_string(fi) + ": file hash " +
                                     f.file_hash.ToHex() +
                                     " does not match the hash of its chunks");
    }
    if (f.metadata_ext) rec.sha256 = f.metadata_ext->sha256;
    commit.files.push_back(std::move(rec));
  }

  for (const CasInfo& cas : shard.cas_infos) {
    XET_RETURN_IF_ERROR(CheckCasInfo(cas, xorbs.Get(cas.cas_hash)));
    commit.xorbs.push_back(cas.cas_hash);
  }

  return commit;
}

}  // namespace

Result<ShardIngestResult> IngestShard(std::span<const uint8_t> body,
                                      const ShardIngestOptions& options, Index& index,
                                      ObjectStore& objects) {
  XET_ASSIGN_OR_RETURN(Shard shard, ParseShard(body));
  XET_RETURN_IF_ERROR(ValidateUploadShard(shard));

  ReferencedXorbs xorbs(shard);
  Status loaded = xorbs.CheckVisible(index, options.visible_scopes, options.visible_xorbs);
  if (loaded.ok()) loaded = xorbs.LoadRecords(index, options.xorb_records);
  if (!loaded.ok()) return xorbs.Refusal(std::move(loaded), index, options.visible_scopes);
  Result<ShardCommit> commit = VerifiedCommit(shard, xorbs, options);
  if (!commit.ok()) return xorbs.Refusal(commit.status(), index, options.visible_scopes);

  commit->shard_hash = Hash::FromArray(Sha256Of(body));
  XET_ASSIGN_OR_RETURN(bool stored, objects.Put(ShardKey(commit->shard_hash), body));
  (void)stored;  // an identical shard may already be stored: content addressed
  ShardIngestResult result;
  result.num_files = commit->files.size();
  XET_ASSIGN_OR_RETURN(result.result, index.CommitShard(*commit));
  return result;
}

}  // namespace xet
