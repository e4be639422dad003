#include "format/shard_types.h"

namespace xet {
uint64_t FileInfo::size() const {
  uint64_t total = 0;
  for (const FileDataSequenceEntry& t : terms) total += t.unpacked_segment_bytes;
  return total;
}

ShardLayout ComputeShardLayout(const Shard& shard) {
  ShardLayout l;
  l.file_info_offset = kShardHeaderSize;
  uint64_t pos = l.file_info_offset;
  for (const FileInfo& f : shard.files) {
    pos += kShardEntrySize *
           (1 + f.terms.size() + f.verification.size() + (f.metadata_ext.has_value() ? 1 : 0));
  }
  l.file_info_bookend_offset = pos;
  l.cas_info_offset = pos + kShardEntrySize;
  pos = l.cas_info_offset;
  for (const CasInfo& c : shard.cas_infos) pos += kShardEntrySize * (1 + c.entries.size());
  l.cas_info_bookend_offset = pos;
  l.cas_info_end = pos + kShardEntrySize;
  l.footer_offset = l.cas_info_end;
  if (shard.footer.has_value()) l.footer_offset += shard.footer->lookup_tables.size();
  l.total_size = l.footer_offset + (shard.footer.has_value() ? kShardFooterSize : 0);
  return l;
}

ShardHeader HeaderFor(const Shard& shard) {
  ShardHeader h;
  h.footer_size = shard.footer.has_value() ? kShardFooterSize : 0;
  return h;
}

ShardStats ComputeShardStats(const Shard& shard) {
  ShardStats s;
  for (const FileInfo& f : shard.files) s.materialized_bytes += f.size();
  for (const CasInfo& c : shard.cas_infos) {
    s.stored_bytes_on_disk += c.num_bytes_on_disk;
    s.stored_bytes += c.num_bytes_in_cas;
  }
  return s;
}

}  // namespace xet
