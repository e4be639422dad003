// The MDB shard data model (Xet spec, shard.md): the values a shard carries, one struct per
// on-disk record, plus the constants of the format.
//
// A Shard holds exactly what its bytes hold: parsing a shard and serializing the result
// gives the same bytes back (shard_parser.h, shard_writer.h). Fields the spec calls
// "reserved" or "unused" are kept, because real writers put values there (xet-core stores
// statistics and lookup-table offsets in the footer's reserved areas, and a global-dedup
// flag in each CAS entry).
//
// Layout (all integers little-endian; every record is 48 bytes except the footer):
//   header (48) | file info section ... file bookend (48) | CAS info section ... CAS bookend
//   (48) | [xet-core lookup tables] | [footer (200)]
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "format/hash.h"

namespace xet {

// "HFRepoMetaData", a 0 byte and 17 more fixed bytes.
inline constexpr std::array<uint8_t, 32> kShardHeaderTag = {
    72,  70,  82, 101, 112, 111, 77, 101, 116, 97,  68,  97, 116, 97,  0,  85,
    105, 103, 69, 106, 123, 129, 87, 131, 165, 189, 217, 92, 205, 209, 74, 169};
inline constexpr uint64_t kShardHeaderVersion = 2;
inline constexpr uint64_t kShardFooterVersion = 1;
inline constexpr size_t kShardHeaderSize = 48;
inline constexpr size_t kShardFooterSize = 200;
// Size of every record in the file info and CAS info sections, bookends included.
inline constexpr size_t kShardEntrySize = 48;
// Sizes of xet-core's lookup-table records (truncated hash u64 + index u32, or + 2 × u32).
inline constexpr size_t kShardFileLookupEntrySize = 12;
inline constexpr size_t kShardXorbLookupEntrySize = 12;
inline constexpr size_t kShardChunkLookupEntrySize = 16;

// FileDataSequenceHeader.file_flags bits. No other bit may be set.
inline constexpr uint32_t kFileFlagWithVerification = 0x80000000u;
inline constexpr uint32_t kFileFlagWithMetadataExt = 0x40000000u;
inline constexpr uint32_t kKnownFileFlags = kFileFlagWithVerification | kFileFlagWithMetadataExt;

// CASChunkSequenceEntry bytes 40..43 (the first half of the spec's 8 "unused" bytes):
// xet-core marks chunks it wants in the global-dedup table with this bit. Informational.
inline constexpr uint32_t kCasEntryFlagGlobalDedup = 0x80000000u;

// The 48-byte shard header.
struct ShardHeader {
  std::array<uint8_t, 32> tag = kShardHeaderTag;
  uint64_t version = kShardHeaderVersion;
  uint64_t footer_size = 0;  // kShardFooterSize, or 0 when the footer is omitted (uploads)
  friend bool operator==(const ShardHeader&, const ShardHeader&) = default;
};

// One term of a file reconstruction: chunks [chunk_index_start, chunk_index_end) of a xorb.
struct FileDataSequenceEntry {
  Hash cas_hash;  // the xorb hash
  uint32_t cas_flags = 0;
  uint32_t unpacked_segment_bytes = 0;
  uint32_t chunk_index_start = 0;
  uint32_t chunk_index_end = 0;  // exclusive
  friend bool operator==(const FileDataSequenceEntry&, const FileDataSequenceEntry&) = default;
};

// The verification hash of one term (keyed BLAKE3 over the term's chunk hashes).
struct FileVerificationEntry {
  Hash range_hash;
  std::array<uint8_t, 16> reserved{};  // bytes 32..47, zero in practice
  friend bool operator==(const FileVerificationEntry&, const FileVerificationEntry&) = default;
};

// The metadata extension: the SHA-256 of the file's contents.
struct FileMetadataExt {
  // The 32 bytes exactly as stored: the standard digest with each 8-byte group reversed, so
  // that sha256.ToHex() prints the usual SHA-256 hex. See Sha256ToXetOrder / Sha256FromXetOrder
  // in format/sha256.h.
  Hash sha256;
  std::array<uint8_t, 16> reserved{};  // bytes 32..47, zero in practice
  friend bool operator==(const FileMetadataExt&, const FileMetadataExt&) = default;
};

// One File Info block: a file's reconstruction.
struct FileInfo {
  Hash file_hash;
  // Exactly the flags stored. kFileFlagWithVerification is set iff `verification` holds one
  // entry per term (a file with no terms may carry the flag and no entries);
  // kFileFlagWithMetadataExt is set iff `metadata_ext` is present. No other bits.
  uint32_t flags = 0;
  uint64_t reserved = 0;  // FileDataSequenceHeader bytes 40..47
  std::vector<FileDataSequenceEntry> terms;
  std::vector<FileVerificationEntry> verification;  // empty, or terms.size() entries
  std::optional<FileMetadataExt> metadata_ext;

  bool has_verification() const { return (flags & kFileFlagWithVerification) != 0; }
  bool has_metadata_ext() const { return (flags & kFileFlagWithMetadataExt) != 0; }
  // Sum of the terms' unpacked sizes: the file's length.
  uint64_t size() const;
  friend bool operator==(const FileInfo&, const FileInfo&) = default;
};

// One chunk of a xorb, as listed in a CAS Info block.
struct CasChunkEntry {
  Hash chunk_hash;  // plain, or keyed with the footer's HMAC key in global-dedup responses
  uint32_t chunk_byte_range_start = 0;  // cumulative uncompressed offset of the chunk
  uint32_t unpacked_segment_bytes = 0;
  uint32_t flags = 0;     // bytes 40..43 (see kCasEntryFlagGlobalDedup)
  uint32_t reserved = 0;  // bytes 44..47
  friend bool operator==(const CasChunkEntry&, const CasChunkEntry&) = default;
};

// One CAS Info block: a xorb and its chunks.
struct CasInfo {
  Hash cas_hash;  // the xorb hash (never keyed)
  uint32_t cas_flags = 0;
  uint32_t num_bytes_in_cas = 0;   // total uncompressed bytes of the chunks
  uint32_t num_bytes_on_disk = 0;  // serialized xorb length; 0 in the reference shards
  std::vector<CasChunkEntry> entries;
  friend bool operator==(const CasInfo&, const CasInfo&) = default;
};

// The first reserved footer area (48 bytes), as xet-core uses it: where its lookup tables
// start and how many records each holds. Reference shards have every offset equal to the
// footer's start and every count 0.
struct ShardLookupFields {
  uint64_t file_lookup_offset = 0;
  uint64_t file_lookup_num_entry = 0;
  uint64_t xorb_lookup_offset = 0;
  uint64_t xorb_lookup_num_entry = 0;
  uint64_t chunk_lookup_offset = 0;
  uint64_t chunk_lookup_num_entry = 0;
  friend bool operator==(const ShardLookupFields&, const ShardLookupFields&) = default;
};

// The last three u64 of the second reserved footer area, as xet-core uses them.
struct ShardStats {
  uint64_t stored_bytes_on_disk = 0;  // sum of CasInfo::num_bytes_on_disk
  uint64_t materialized_bytes = 0;    // sum of the files' term sizes
  uint64_t stored_bytes = 0;          // sum of CasInfo::num_bytes_in_cas
  friend bool operator==(const ShardStats&, const ShardStats&) = default;
};

// The 200-byte footer.
struct ShardFooter {
  uint64_t version = kShardFooterVersion;
  // Where the sections start; the writer always recomputes these from the content.
  uint64_t file_info_offset = 0;
  uint64_t cas_info_offset = 0;
  // nullopt: the writer writes every offset = end of the CAS info section and counts 0 (the
  // reference shards' values). A parsed shard has the stored values.
  std::optional<ShardLookupFields> lookup;
  // xet-core's lookup tables (between the CAS bookend and the footer), kept as opaque bytes.
  // Non-empty only together with `lookup` fields that describe exactly these bytes.
  std::vector<uint8_t> lookup_tables;
  Hash chunk_hash_hmac_key;               // all zeros: CAS entry hashes are not keyed
  uint64_t shard_creation_timestamp = 0;  // seconds since the epoch
  uint64_t shard_key_expiry = 0;          // seconds since the epoch; 0 for none
  std::array<uint64_t, 6> buffer{};       // the first six u64 of the 72-byte reserved area
  // nullopt: the writer computes them from the content (see ShardStats). A parsed shard has
  // the stored values.
  std::optional<ShardStats> stats;
  uint64_t footer_offset = 0;  // recomputed by the writer

  friend bool operator==(const ShardFooter&, const ShardFooter&) = default;
};

// A whole shard. With no footer it is the upload form (header footer_size = 0).
struct Shard {
  std::vector<FileInfo> files;
  std::vector<CasInfo> cas_infos;
  std::optional<ShardFooter> footer;
  friend bool operator==(const Shard&, const Shard&) = default;
};

// Byte offsets of a shard's parts, as the writer lays them out (and the parser found them).
struct ShardLayout {
  uint64_t file_info_offset = kShardHeaderSize;
  uint64_t file_info_bookend_offset = 0;
  uint64_t cas_info_offset = 0;
  uint64_t cas_info_bookend_offset = 0;
  uint64_t cas_info_end = 0;   // just past the CAS bookend: where lookup tables would start
  uint64_t footer_offset = 0;  // where the footer starts (= total_size without a footer)
  uint64_t total_size = 0;
  friend bool operator==(const ShardLayout&, const ShardLayout&) = default;
};

// The layout of `shard` when serialized. Pure arithmetic on the record counts; does not
// validate the shard.
ShardLayout ComputeShardLayout(const Shard& shard);

// The header `shard` serializes with.
ShardHeader HeaderFor(const Shard& shard);

// The statistics xet-core writes in the footer for this content (see ShardStats).
ShardStats ComputeShardStats(const Shard& shard);

// The metadata extension stores a SHA-256 with each 8-byte group of the digest reversed.
// and returns the stored value; Hash::FromHex(standard hex) gives the same value.

}  // namespace xet
