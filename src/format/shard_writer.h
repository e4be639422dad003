// Serializing MDB shards (Xet spec, shard.md), and building global-dedup response shards.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "common/result.h"
#include "format/shard_types.h"

namespace xet {

// Checks that `shard` can be serialized into bytes that ParseShard accepts and reads back
// as an equal Shard. InvalidArgument, naming the file / CAS block, when:
//   - a file hash or CAS hash is all 0xFF (it would read as a bookend);
//   - file flags have unknown bits, the verification flag disagrees with `verification`
//     (which must then hold exactly one entry per term, else be empty), or the
//     metadata-extension flag disagrees with `metadata_ext`;
//   - some files have the verification flag and others do not;
//   - a count does not fit the format's u32 fields;
//   - the footer version is not 1, or `lookup_tables` is non-empty without `lookup` fields
//     describing exactly those bytes right after the CAS section.
Status CheckSerializable(const Shard& shard);

// Serializes `shard` byte-for-byte: the header (footer_size 200 with a footer, else 0),
// the file info section, the CAS info section, and, when shard.footer is set, the lookup
// tables and the footer. The footer's file_info_offset, cas_info_offset and footer_offset
// are always written as computed from the content (ComputeShardLayout); `lookup` and
// `stats` are written as given, or, when nullopt, as every lookup offset = end of the CAS
// section with counts 0, and ComputeShardStats(shard). Every other field is written as
// stored, so SerializeShard(*ParseShard(b)) == b. Fails iff CheckSerializable fails.
Result<std::vector<uint8_t>> SerializeShard(const Shard& shard);

// The upload form of `shard`: the same, with no footer (footer_size 0), whatever
// shard.footer holds.
Result<std::vector<uint8_t>> SerializeShardForUpload(const Shard& shard);

// Builds a global-dedup response shard (the answer to GET /v1/chunks/...): no files; the
// given CAS infos, each chunk hash replaced by DedupProtectedHash(hash, hmac_key) (keyed
// BLAKE3 with the 32 key bytes exactly as stored in the footer); a footer with the key,
// the creation time and the expiry, lookup offsets all at the end of the CAS section (the
// JS client reads CAS info until file_lookup_offset) and computed stats. An all-zero key
// means "not keyed": the chunk hashes are then copied unchanged. Xorb hashes, sizes, flags
// and offsets are never keyed.
Shard BuildGlobalDedupShard(std::span<const CasInfo> cas_infos, const Hash& hmac_key,
                            uint64_t creation_timestamp, uint64_t key_expiry);

}  // namespace xet
