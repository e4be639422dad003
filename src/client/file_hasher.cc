#include "client/file_hasher.h"

#include <memory>
#include <thread>

#include "common/bounded_queue.h"
#include "format/chunker.h"
#include "format/keyed_hash.h"

namespace xet {
namespace {

struct Block {
  std::unique_ptr<uint8_t[]> data;
  size_t size = 0;
};

// Chunks and hashes a stream of blocks; chunks may span blocks.
class ChunkStage {
 public:
  explicit ChunkStage(const FileHashOptions& options) : options_(options) {}

  void Consume(std::span<const uint8_t> data) {
    while (!data.empty()) {
      const size_t n = chunker_.NextBoundary(data);
      const size_t take = n == 0 ? data.size() : n;
      hasher_.Update(data.first(take));
      open_size_ += take;
      if (n != 0) EmitChunk();
      data = data.subspan(take);
    }
  }

  std::vector<ChunkInfo> Finish() {
    if (chunker_.Finish() > 0) EmitChunk();
    return std::move(chunks_);
  }

 private:
  void EmitChunk() {
    chunks_.push_back({hasher_.Finalize(), open_size_});
    if (options_.on_chunk) options_.on_chunk(chunks_.back());
    hasher_ = KeyedHasher(keys::kDataKey);
    open_size_ = 0;
  }

  const FileHashOptions& options_;
  Chunker chunker_;
  KeyedHasher hasher_{keys::kDataKey};
  uint64_t open_size_ = 0;
  std::vector<ChunkInfo> chunks_;
};

}  // namespace

Result<FileDigest> DigestSource(ByteSource& source, const FileHashOptions& options) {
  BoundedQueue<Block> free_blocks(kDigestBuffers), full_blocks(kDigestBuffers);
  for (size_t i = 0; i < kDigestBuffers; ++i) {
    free_blocks.Push(Block{std::make_unique<uint8_t[]>(kDigestBlockSize), 0});
  }

  ChunkStage chunk_stage(options);
  std::thread worker([&] {
    while (auto block = full_blocks.Pop()) {
      chunk_stage.Consume({block->data.get(), block->size});
      free_blocks.Push(std::move(*block));
    }
  });

  FileDigest digest;
  Sha256 sha;
  Status status;
  while (true) {
    auto block = free_blocks.Pop();
    auto n = source.Read({block->data.get(), kDigestBlockSize});
    if (!n.ok()) {
      status = n.status();
      break;
    }
    if (*n == 0) break;
    block->size = *n;
    digest.size += *n;
    if (options.compute_sha256) sha.Update(block->data.get(), *n);
    full_blocks.Push(std::move(*block));
  }
  full_blocks.Close();
  worker.join();
  if (!status.ok()) return status;

  digest.chunks = chunk_stage.Finish();
  digest.file_hash = FileHash(digest.chunks);
  if (options.compute_sha256) digest.sha256 = sha.Finish();
  return digest;
}

}  // namespace xet
