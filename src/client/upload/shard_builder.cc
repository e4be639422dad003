#include "client/upload/shard_builder.h"

#include <string>

#include "format/merkle.h"

namespace xet {

void FileInfoBuilder::AddChunk(uint32_t xorb, uint32_t index, const Hash& chunk_hash,
                               uint64_t size) {
  if (open_ && (xorb != xorb_ || index != end_)) CloseTerm();
  if (!open_) {
    open_ = true;
    xorb_ = xorb;
    start_ = end_ = index;
    bytes_ = 0;
  }
  ++end_;
  bytes_ += size;
  term_chunks_.push_back(chunk_hash);
}

void FileInfoBuilder::CloseTerm() {
  if (!open_) return;
  FileDataSequenceEntry term;
  term.unpacked_segment_bytes = static_cast<uint32_t>(bytes_);
  term.chunk_index_start = start_;
  term.chunk_index_end = end_;
  file_.terms.push_back(term);
  file_.term_xorbs.push_back(xorb_);
  file_.verification.push_back(FileVerificationEntry{VerificationHash(term_chunks_), {}});
  term_chunks_.clear();
  open_ = false;
}

PendingFileInfo FileInfoBuilder::Finish(const Hash& file_hash, std::optional<Sha256Digest> sha256) {
  CloseTerm();
  PendingFileInfo out = std::move(file_);
  out.file_hash = file_hash;
  out.sha256 = sha256;
  *this = FileInfoBuilder();
  return out;
}

FileInfo ResolveFileInfo(const PendingFileInfo& file,
                         const std::function<Hash(uint32_t)>& xorb_hash) {
  FileInfo info;
  info.file_hash = file.file_hash;
  info.flags = kFileFlagWithVerification;
  info.terms = file.terms;
  for (size_t i = 0; i < info.terms.size(); ++i)
    info.terms[i].cas_hash = xorb_hash(file.term_xorbs[i]);
  info.verification = file.verification;
  if (file.sha256) {
    info.flags |= kFileFlagWithMetadataExt;
    info.metadata_ext = FileMetadataExt{Sha256ToXetOrder(*file.sha256), {}};
  }
  return info;
}

CasInfo CasInfoForXorb(const Hash& xorb_hash, const XorbChunkTable& table,
                       uint64_t serialized_size) {
  CasInfo cas;
  cas.cas_hash = xorb_hash;
  cas.num_bytes_on_disk = static_cast<uint32_t>(serialized_size);
  cas.entries.reserve(table.size());
  uint32_t offset = 0;
  for (const ChunkInfo& c : table.chunks) {
    CasChunkEntry e;
    e.chunk_hash = c.hash;
    e.chunk_byte_range_start = offset;
    e.unpacked_segment_bytes = static_cast<uint32_t>(c.size);
    e.flags = IsGlobalDedupEligible(c.hash) ? kCasEntryFlagGlobalDedup : 0;
    offset += e.unpacked_segment_bytes;
    cas.entries.push_back(e);
  }
  cas.num_bytes_in_cas = offset;
  return cas;
}

uint64_t FileInfoSerializedSize(const FileInfo& file) {
  return kShardEntrySize *
         (1 + file.terms.size() + file.verification.size() + (file.metadata_ext ? 1 : 0));
}

uint64_t CasInfoSerializedSize(const CasInfo& cas) {
  return kShardEntrySize * (1 + cas.entries.size());
}

Result<std::vector<Shard>> SplitIntoShards(std::vector<FileInfo> files, std::vector<CasInfo> xorbs,
                                           uint64_t max_bytes) {
  // header + the two bookends
  const uint64_t fixed = kShardHeaderSize + 2 * kShardEntrySize;
  std::vector<Shard> shards;
  Shard current;
  uint64_t size = fixed;
  auto add = [&](uint64_t item, auto&& push) -> Status {
    if (fixed + item > max_bytes) {
      return Status::ResourceExhausted("a shard entry of " + std::to_string(item) +
                                       " bytes exceeds the shard size limit");
    }
    if (size + item > max_bytes) {
      shards.push_back(std::move(current));
      current = Shard();
      size = fixed;
    }
    push();
    size += item;
    return Status::Ok();
  };
  for (FileInfo& f : files) {
    XET_RETURN_IF_ERROR(
        add(FileInfoSerializedSize(f), [&] { current.files.push_back(std::move(f)); }));
  }
  for (CasInfo& c : xorbs) {
    XET_RETURN_IF_ERROR(
        add(CasInfoSerializedSize(c), [&] { current.cas_infos.push_back(std::move(c)); }));
  }
  if (!current.files.empty() || !current.cas_infos.empty()) shards.push_back(std::move(current));
  return shards;
}

}  // namespace xet
