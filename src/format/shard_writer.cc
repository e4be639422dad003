#include "format/shard_writer.h"

#include <limits>
#include <string>

#include "format/byte_io.h"
#include "format/merkle.h"
#include "format/shard_parser.h"

namespace xet {
namespace {

constexpr uint64_t kMaxU32 = std::numeric_limits<uint32_t>::max();

Status Invalid(const std::string& what) { return Status::InvalidArgument("shard writer: " + what); }

Status CheckFile(const FileInfo& f, size_t index) {
  const std::string name = "file " + std::to_string(index);
  if (f.file_hash.IsAllOnes()) return Invalid(name + ": an all-0xFF file hash reads as a bookend");
  if ((f.flags & ~kKnownFileFlags) != 0) return Invalid(name + ": unknown file flag bits");
  if (f.terms.size() > kMaxU32) return Invalid(name + ": more than 2^32-1 terms");
  if (f.has_verification()) {
    if (f.verification.size() != f.terms.size()) {
      return Invalid(name + ": " + std::to_string(f.verification.size()) +
                     " verification entries for " + std::to_string(f.terms.size()) + " terms");
    }
  } else if (!f.verification.empty()) {
    return Invalid(name + ": verification entries without the verification flag");
  }
  if (f.has_metadata_ext() != f.metadata_ext.has_value()) {
    return Invalid(name + ": the metadata-extension flag disagrees with metadata_ext");
  }
  return Status::Ok();
}

void WriteBookend(ByteWriter& w) {
  Hash ones;
  for (size_t i = 0; i < Hash::kSize; ++i) ones.mutable_data()[i] = 0xFF;
  w.PutHash(ones);
  w.Zeros(kShardEntrySize - Hash::kSize);
}

void WriteFile(ByteWriter& w, const FileInfo& f) {
  w.PutHash(f.file_hash);
  w.U32(f.flags);
  w.U32(static_cast<uint32_t>(f.terms.size()));
  w.U64(f.reserved);
  for (const FileDataSequenceEntry& t : f.terms) {
    w.PutHash(t.cas_hash);
    w.U32(t.cas_flags);
    w.U32(t.unpacked_segment_bytes);
    w.U32(t.chunk_index_start);
    w.U32(t.chunk_index_end);
  }
  for (const FileVerificationEntry& v : f.verification) {
    w.PutHash(v.range_hash);
    w.Bytes(v.reserved.data(), v.reserved.size());
  }
  if (f.metadata_ext) {
    w.PutHash(f.metadata_ext->sha256);
    w.Bytes(f.metadata_ext->reserved.data(), f.metadata_ext->reserved.size());
  }
}

void WriteCas(ByteWriter& w, const CasInfo& c) {
  w.PutHash(c.cas_hash);
  w.U32(c.cas_flags);
  w.U32(static_cast<uint32_t>(c.entries.size()));
  w.U32(c.num_bytes_in_cas);
  w.U32(c.num_bytes_on_disk);
  for (const CasChunkEntry& e : c.entries) {
    w.PutHash(e.chunk_hash);
    w.U32(e.chunk_byte_range_start);
    w.U32(e.unpacked_segment_bytes);
    w.U32(e.flags);
    w.U32(e.reserved);
  }
}

void WriteFooter(ByteWriter& w, const Shard& shard, const ShardLayout& layout) {
  const ShardFooter& f = *shard.footer;
  w.U64(f.version);
  w.U64(layout.file_info_offset);
  w.U64(layout.cas_info_offset);
  ShardLookupFields l;
  if (f.lookup) {
    l = *f.lookup;
  } else {
    l.file_lookup_offset = l.xorb_lookup_offset = l.chunk_lookup_offset = layout.cas_info_end;
  }
  w.U64(l.file_lookup_offset);
  w.U64(l.file_lookup_num_entry);
  w.U64(l.xorb_lookup_offset);
  w.U64(l.xorb_lookup_num_entry);
  w.U64(l.chunk_lookup_offset);
  w.U64(l.chunk_lookup_num_entry);
  w.PutHash(f.chunk_hash_hmac_key);
  w.U64(f.shard_creation_timestamp);
  w.U64(f.shard_key_expiry);
  for (uint64_t v : f.buffer) w.U64(v);
  const ShardStats s = f.stats ? *f.stats : ComputeShardStats(shard);
  w.U64(s.stored_bytes_on_disk);
  w.U64(s.materialized_bytes);
  w.U64(s.stored_bytes);
  w.U64(layout.footer_offset);
}

}  // namespace

Status CheckSerializable(const Shard& shard) {
  for (size_t i = 0; i < shard.files.size(); ++i) {
    XET_RETURN_IF_ERROR(CheckFile(shard.files[i], i));
    if (shard.files[i].has_verification() != shard.files.front().has_verification()) {
      return Invalid("file " + std::to_string(i) +
                     ": verification flag differs from file 0 (all files or none must have it)");
    }
  }
  for (size_t i = 0; i < shard.cas_infos.size(); ++i) {
    const CasInfo& c = shard.cas_infos[i];
    if (c.cas_hash.IsAllOnes()) {
      return Invalid("CAS block " + std::to_string(i) +
                     ": an all-0xFF xorb hash reads as a bookend");
    }
    if (c.entries.size() > kMaxU32) {
      return Invalid("CAS block " + std::to_string(i) + ": more than 2^32-1 entries");
    }
  }
  if (!shard.footer) return Status::Ok();
  const ShardFooter& f = *shard.footer;
  if (f.version != kShardFooterVersion) {
    return Invalid("footer version " + std::to_string(f.version) + ", must be 1");
  }
  if (!f.lookup_tables.empty()) {
    if (!f.lookup) return Invalid("lookup_tables without lookup fields describing them");
    const ShardLayout layout = ComputeShardLayout(shard);
    const Status st = CheckShardLookupTables(*f.lookup, layout.cas_info_end, layout.footer_offset);
    if (!st.ok()) return Invalid(st.message());
  }
  return Status::Ok();
}

namespace {

std::vector<uint8_t> Serialize(const Shard& shard, bool with_footer) {
  const ShardLayout layout = ComputeShardLayout(shard);
  std::vector<uint8_t> out;
  out.reserve(with_footer ? layout.total_size : layout.cas_info_end);
  ByteWriter w(&out);
  w.Bytes(kShardHeaderTag.data(), kShardHeaderTag.size());
  w.U64(kShardHeaderVersion);
  w.U64(with_footer ? kShardFooterSize : 0);
  for (const FileInfo& f : shard.files) WriteFile(w, f);
  WriteBookend(w);
  for (const CasInfo& c : shard.cas_infos) WriteCas(w, c);
  WriteBookend(w);
  if (with_footer) {
    w.Bytes(shard.footer->lookup_tables.data(), shard.footer->lookup_tables.size());
    WriteFooter(w, shard, layout);
  }
  return out;
}

}  // namespace

Result<std::vector<uint8_t>> SerializeShard(const Shard& shard) {
  XET_RETURN_IF_ERROR(CheckSerializable(shard));
  return Serialize(shard, shard.footer.has_value());
}

Result<std::vector<uint8_t>> SerializeShardForUpload(const Shard& shard) {
  XET_RETURN_IF_ERROR(CheckSerializable(shard));
  return Serialize(shard, false);
}

Shard BuildGlobalDedupShard(std::span<const CasInfo> cas_infos, const Hash& hmac_key,
                            uint64_t creation_timestamp, uint64_t key_expiry) {
  Shard shard;
  shard.cas_infos.assign(cas_infos.begin(), cas_infos.end());
  if (!hmac_key.IsZero()) {
    for (CasInfo& c : shard.cas_infos) {
      for (CasChunkEntry& e : c.entries) e.chunk_hash = DedupProtectedHash(e.chunk_hash, hmac_key);
    }
  }
  ShardFooter footer;
  footer.chunk_hash_hmac_key = hmac_key;
  footer.shard_creation_timestamp = creation_timestamp;
  footer.shard_key_expiry = key_expiry;
  shard.footer = footer;
  return shard;
}

}  // namespace xet
