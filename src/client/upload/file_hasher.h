// DigestSource: streams a file once and computes its Xet identity — chunk list (hash and
// length of every chunk), Xet file hash, size and SHA-256 — on two threads with bounded
// memory.
//
// Pipeline: the calling thread reads fixed-size blocks into a small pool of buffers and
// feeds SHA-256; a worker thread chunks each block and hashes the chunks (BLAKE3, fed
// incrementally so chunks may span blocks). Resident memory is bounded by
// kDigestBlockSize * kDigestBuffers (16 MiB) plus 40 bytes per chunk, whatever the file size.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "common/byte_source.h"
#include "common/result.h"
#include "format/chunker.h"
#include "format/keyed_hash.h"
#include "format/merkle.h"
#include "format/sha256.h"

namespace xet {

struct FileDigest {
  Hash file_hash;  // all zeros for an empty file
  uint64_t size = 0;
  Sha256Digest sha256{};  // valid only when requested
  std::vector<ChunkInfo> chunks;
};

struct FileHashOptions {
  bool compute_sha256 = true;
  // Called from the worker thread with each chunk as soon as it is hashed, in order.
  std::function<void(const ChunkInfo&)> on_chunk;
};

// Chunks and hashes a stream handed over in pieces of any size (chunks may span pieces),
// on the caller's thread. DigestSource runs one on its worker; a download streamed to
// standard output checks the file hash of what it wrote with one.
class ChunkHashStream {
 public:
  // `on_chunk`, if set, is called with each chunk as soon as it is hashed, in order.
  explicit ChunkHashStream(std::function<void(const ChunkInfo&)> on_chunk = {});

  void Consume(std::span<const uint8_t> data);
  // Ends the stream: the hash and length of every chunk (FileHash of them is the Xet file
  // hash). The object is then spent.
  std::vector<ChunkInfo> Finish();

 private:
  void EmitChunk();

  std::function<void(const ChunkInfo&)> on_chunk_;
  Chunker chunker_;
  KeyedHasher hasher_{keys::kDataKey};
  uint64_t open_size_ = 0;
  std::vector<ChunkInfo> chunks_;
};

inline constexpr size_t kDigestBlockSize = 4 << 20;
inline constexpr size_t kDigestBuffers = 4;

// Reads `source` to its end. Returns the digest, or the source's read error.
Result<FileDigest> DigestSource(ByteSource& source, const FileHashOptions& options = {});

}  // namespace xet
