#include "format/shard_validation.h"

#include <string>

namespace xet {
namespace {

Status Invalid(const std::string& what) { return Status::InvalidArgument("shard: " + what); }

}  // namespace

Status ValidateShardContents(const Shard& shard) {
  for (size_t i = 0; i < shard.files.size(); ++i) {
    const FileInfo& f = shard.files[i];
    if (f.terms.empty() && !f.file_hash.IsZero()) {
      return Invalid("file " + std::to_string(i) + " (" + f.file_hash.ToHex() +
                     ") has no terms but is not the empty file's all-zero hash");
    }
    for (size_t t = 0; t < f.terms.size(); ++t) {
      const FileDataSequenceEntry& term = f.terms[t];
      const std::string name = "file " + std::to_string(i) + " term " + std::to_string(t);
      if (term.chunk_index_start >= term.chunk_index_end) {
        return Invalid(name + ": empty chunk range [" + std::to_string(term.chunk_index_start) +
                       ", " + std::to_string(term.chunk_index_end) + ")");
      }
      if (term.unpacked_segment_bytes == 0) return Invalid(name + ": unpacked_segment_bytes is 0");
    }
  }
  for (size_t i = 0; i < shard.cas_infos.size(); ++i) {
    const CasInfo& c = shard.cas_infos[i];
    const std::string name = "CAS block " + std::to_string(i) + " (" + c.cas_hash.ToHex() + ")";
    if (c.entries.empty()) return Invalid(name + " has no entries");
    uint64_t offset = 0;
    for (size_t e = 0; e < c.entries.size(); ++e) {
      const CasChunkEntry& entry = c.entries[e];
      if (entry.unpacked_segment_bytes == 0) {
        return Invalid(name + " entry " + std::to_string(e) + ": unpacked_segment_bytes is 0");
      }
      if (entry.chunk_byte_range_start != offset) {
        return Invalid(name + " entry " + std::to_string(e) + ": chunk_byte_range_start " +
                       std::to_string(entry.chunk_byte_range_start) + ", expected " +
                       std::to_string(offset) + " (the sum of the previous chunk sizes)");
      }
      offset += entry.unpacked_segment_bytes;
    }
    if (c.num_bytes_in_cas != offset) {
      return Invalid(name + ": num_bytes_in_cas " + std::to_string(c.num_bytes_in_cas) +
                     ", but its chunks add up to " + std::to_string(offset));
    }
  }
  return Status::Ok();
}

Status ValidateUploadShard(const Shard& shard) {
  for (size_t i = 0; i < shard.files.size(); ++i) {
    if (!shard.files[i].has_verification()) {
      return Invalid("file " + std::to_string(i) + " has no verification entries");
    }
  }
  return ValidateShardContents(shard);
}

}  // namespace xet
