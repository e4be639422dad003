// Building the shards of an upload: file infos (terms merged from consecutive chunks,
// verification entries, optional SHA-256 metadata extension), CAS infos of the new xorbs,
// and the split into shards of at most kMaxUploadShardSize serialized bytes.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "common/result.h"
#include "format/hash.h"
#include "format/sha256.h"
#include "format/shard_types.h"
#include "format/xorb.h"

namespace xet {

// The server's shard size limit (Xet spec: shards up to 64 MiB).
inline constexpr uint64_t kMaxUploadShardSize = 64ull << 20;

// A file's reconstruction while its xorbs may still be packing: terms name xorbs by session
// id (DedupIndex) until Resolve.
struct PendingFileInfo {
  Hash file_hash;
  std::vector<FileDataSequenceEntry> terms;  // cas_hash unset until Resolve
  std::vector<uint32_t> term_xorbs;          // session xorb id of each term
  std::vector<FileVerificationEntry> verification;
  std::optional<Sha256Digest> sha256;
};

// Accumulates one file's chunks in order and merges consecutive chunks of one xorb into
// terms, computing each term's verification hash when it closes.
class FileInfoBuilder {
 public:
  void AddChunk(uint32_t xorb, uint32_t index, const Hash& chunk_hash, uint64_t size);
  // Closes the last term and returns the file (the builder is reset).
  PendingFileInfo Finish(const Hash& file_hash, std::optional<Sha256Digest> sha256);

 private:
  void CloseTerm();

  PendingFileInfo file_;
  bool open_ = false;
  uint32_t xorb_ = 0, start_ = 0, end_ = 0;
  uint64_t bytes_ = 0;
  std::vector<Hash> term_chunks_;
};

// The FileInfo of `file` with each term's xorb hash from `xorb_hash(id)`: verification
// flag always (uploads require it), the metadata extension when a SHA-256 is present.
FileInfo ResolveFileInfo(const PendingFileInfo& file,
                         const std::function<Hash(uint32_t)>& xorb_hash);

// The CAS info of a sealed xorb (chunk entries with cumulative offsets; entries whose
// hash is global-dedup eligible carry kCasEntryFlagGlobalDedup).
CasInfo CasInfoForXorb(const Hash& xorb_hash, const XorbChunkTable& table,
                       uint64_t serialized_size);

// Serialized size of the upload form of a shard holding `files` and `xorbs`.
uint64_t FileInfoSerializedSize(const FileInfo& file);
uint64_t CasInfoSerializedSize(const CasInfo& cas);

// Splits files and xorbs into upload shards of at most `max_bytes` each (files first, in
// order, then xorbs). A single file info or CAS info larger than the limit on its own is an
// error (ResourceExhausted); it cannot happen for CAS infos of valid xorbs (8,192 chunks).
Result<std::vector<Shard>> SplitIntoShards(std::vector<FileInfo> files, std::vector<CasInfo> xorbs,
                                           uint64_t max_bytes = kMaxUploadShardSize);

}  // namespace xet
