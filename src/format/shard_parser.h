// Parsing MDB shards (Xet spec, shard.md) from untrusted bytes.
//
// The parser checks structure: everything needed to read the bytes unambiguously and to
// serialize them back byte-for-byte. It does not check what the values mean (term ranges,
// CAS entry offsets and sums, hashes against content, xorbs existing); a server applies
// ValidateShardContents / ValidateUploadShard (shard_validation.h) on top.
//
// Accepted:
//   - header: the 32-byte tag, version 2, footer_size 0 (upload form) or 200;
//   - file info section: 0 or more files, then the bookend; a file may have 0 terms (xet-core
//     records an empty file that way, with the all-zero file hash);
//   - CAS info section: 0 or more blocks (a block may have 0 entries), then the bookend;
//   - with footer_size 200: an optional region of xet-core lookup tables, then the footer.
// Rejected (InvalidArgument, the message names the byte offset and the problem):
//   - input shorter than a record it must hold, anywhere (truncation);
//   - wrong tag, header version != 2, footer_size other than 0 or 200, footer version != 1;
//   - a bookend whose 16 trailing bytes are not all zero (the spec fixes them as zeros, and
//     every known writer writes zeros; accepting others would lose bytes on a round trip);
//   - file flags with a bit other than the verification and metadata-extension bits;
//   - verification entries on some files but not others;
//   - footer file_info_offset != 48, cas_info_offset != where the CAS section starts,
//     footer_offset != input size - 200;
//   - bytes between the CAS bookend and the footer that are not exactly the lookup tables
//     the footer's lookup fields describe (file lookup offset = end of CAS section, then
//     12-byte file and xorb records and 16-byte chunk records, ending at the footer);
//   - any byte after the CAS bookend when there is no footer.
// The footer's reserved areas are not required to be zero, and when there are no lookup
// tables the lookup fields are kept as stored without being checked (reference shards set
// every offset to the footer's start and every count to 0).
//
// Memory: every count read from the input is checked against the bytes remaining before
// anything is reserved, so the result is at most a small constant multiple of the input.
#pragma once

#include <cstdint>
#include <span>

#include "common/result.h"
#include "format/shard_types.h"

namespace xet {

// Parses a whole shard. On success, SerializeShard(result) == data.
Result<Shard> ParseShard(std::span<const uint8_t> data);

// Checks that the bytes [begin, end) between the end of the CAS info section (`begin`) and
// the footer (`end`, requires begin <= end) are exactly the xet-core lookup tables `l`
// describes: file_lookup_offset = begin, then file_lookup_num_entry 12-byte records,
// xorb_lookup_offset, xorb_lookup_num_entry 12-byte records, chunk_lookup_offset,
// chunk_lookup_num_entry 16-byte records, ending at `end`. Overflow-safe for any values.
Status CheckShardLookupTables(const ShardLookupFields& l, uint64_t begin, uint64_t end);

// Reads and checks only the 48-byte header (tag, version, footer_size); `data` may be longer.
Result<ShardHeader> ParseShardHeader(std::span<const uint8_t> data);

}  // namespace xet
