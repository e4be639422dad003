// Checks of what a parsed shard's values mean, beyond the structure ParseShard checks.
// These need no outside knowledge (no xorb contents, no index); a server applies them to
// uploaded shards before it looks the xorbs up. Each returns InvalidArgument naming the
// file / term or CAS block / entry at fault.
#pragma once

#include "common/status.h"
#include "format/shard_types.h"

namespace xet {

// Self-consistency of the content:
//   - every term has chunk_index_start < chunk_index_end and unpacked_segment_bytes > 0;
//   - a file with no terms has the all-zero file hash (the empty file's hash);
//   - every CAS block has at least one entry; each entry has unpacked_segment_bytes > 0 and
//     chunk_byte_range_start equal to the sum of the previous entries' sizes; and
//     num_bytes_in_cas equals the sum of all its entries' sizes.
// Not checked: num_bytes_on_disk (0 in the reference shards), any hash value, the footer.
Status ValidateShardContents(const Shard& shard);

// What the upload API (POST /shards) requires on top of ValidateShardContents: verification
// entries on every file (spec: "Verification Entries MUST be set for shard uploads"; a file
// with no terms carries the flag and no entries). The spec's upload form has no footer, but
// the stock @huggingface/hub client (2.17.5) uploads shards with one: a footer is accepted
// and ignored (nothing in it is trusted or used).
Status ValidateUploadShard(const Shard& shard);

}  // namespace xet
