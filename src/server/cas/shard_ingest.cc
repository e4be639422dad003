#include "server/cas/shard_ingest.h"

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "format/merkle.h"
#include "format/sha256.h"
#include "format/shard_parser.h"
#include "format/shard_validation.h"

namespace xet {
namespace {

std::string TermContext(size_t file, const Hash& file_hash, size_t term) {
  return "file " + std::to_string(file) + " (" + file_hash.ToHex() + ") term " +
         std::to_string(term);
}

// The chunk tables of every xorb a shard references, loaded before any term is checked:
// visibility from the index in one lookup, the records from the shared cache when there
// is one.
class ReferencedXorbs {
 public:
  static Result<ReferencedXorbs> Load(const Shard& shard, Index& index,
                                      std::span<const Scope> scopes, XorbRecordCache* shared) {
    // Distinct hashes, in order of first use.
    std::vector<Hash> hashes;
    std::unordered_map<Hash, std::shared_ptr<const XorbRecord>> records;
    auto note = [&](const Hash& h) {
      if (records.emplace(h, nullptr).second) hashes.push_back(h);
    };
    for (const FileInfo& f : shard.files) {
      for (const FileDataSequenceEntry& t : f.terms) note(t.cas_hash);
    }
    for (const CasInfo& cas : shard.cas_infos) note(cas.cas_hash);

    XET_ASSIGN_OR_RETURN(std::vector<bool> visible, index.XorbsVisible(hashes, scopes));
    for (size_t i = 0; i < hashes.size(); ++i) {
      std::shared_ptr<const XorbRecord> rec;
      if (visible[i]) {
        XET_ASSIGN_OR_RETURN(rec, Read(hashes[i], index, shared));
      }
      if (rec == nullptr) {
        return Status::InvalidArgument("references xorb " + hashes[i].ToHex() +
                                       " which was not uploaded; upload xorbs before the shard");
      }
      records[hashes[i]] = std::move(rec);
    }
    return ReferencedXorbs(std::move(records));
  }

  // A xorb the shard references (its record is loaded).
  const XorbRecord& Get(const Hash& hash) const { return *records_.at(hash); }

 private:
  explicit ReferencedXorbs(std::unordered_map<Hash, std::shared_ptr<const XorbRecord>> records)
      : records_(std::move(records)) {}

  // The record, or nullptr when the xorb is unknown.
  static Result<std::shared_ptr<const XorbRecord>> Read(const Hash& hash, Index& index,
                                                        XorbRecordCache* shared) {
    if (shared != nullptr) return shared->Get(hash);
    XET_ASSIGN_OR_RETURN(auto rec, index.GetXorb(hash));
    if (!rec) return std::shared_ptr<const XorbRecord>();
    return std::make_shared<const XorbRecord>(std::move(*rec));
  }

  std::unordered_map<Hash, std::shared_ptr<const XorbRecord>> records_;
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

}  // namespace

Result<ShardIngestResult> IngestShard(std::span<const uint8_t> body,
                                      const ShardIngestOptions& options, Index& index,
                                      ObjectStore& objects) {
  XET_ASSIGN_OR_RETURN(Shard shard, ParseShard(body));
  XET_RETURN_IF_ERROR(ValidateUploadShard(shard));

  XET_ASSIGN_OR_RETURN(
      ReferencedXorbs xorbs,
      ReferencedXorbs::Load(shard, index, options.visible_scopes, options.xorb_records));
  size_t total_terms = 0;
  for (const FileInfo& f : shard.files) total_terms += f.terms.size();
  size_t verified_terms = 0;

  ShardCommit commit;
  commit.scope = options.scope;
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

  commit.shard_hash = Hash::FromArray(Sha256Of(body));
  XET_ASSIGN_OR_RETURN(bool stored, objects.Put(ShardKey(commit.shard_hash), body));
  (void)stored;  // an identical shard may already be stored: content addressed
  ShardIngestResult result;
  result.num_files = commit.files.size();
  XET_ASSIGN_OR_RETURN(result.result, index.CommitShard(commit));
  return result;
}

}  // namespace xet
