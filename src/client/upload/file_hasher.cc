#include "client/upload/file_hasher.h"

#include <memory>
#include <thread>

#include "common/bounded_queue.h"

namespace xet {
namespace {

struct Block {
  std::unique_ptr<uint8_t[]> data;
  size_t size = 0;
};

}  // namespace

ChunkHashStream::ChunkHashStream(std::function<void(const ChunkInfo&)> on_chunk)
    : on_chunk_(std::move(on_chunk)) {}

void ChunkHashStream::Consume(std::span<const uint8_t> data) {
  while (!data.empty()) {
    const size_t n = chunker_.NextBoundary(data);
    const size_t take = n == 0 ? data.size() : n;
    hasher_.Update(data.first(take));
    open_size_ += take;
    if (n != 0) EmitChunk();
    data = data.subspan(take);
  }
}

std::vector<ChunkInfo> ChunkHashStream::Finish() {
  if (chunker_.Finish() > 0) EmitChunk();
  return std::move(chunks_);
}

void ChunkHashStream::EmitChunk() {
  chunks_.push_back({hasher_.Finalize(), open_size_});
  if (on_chunk_) on_chunk_(chunks_.back());
  hasher_ = KeyedHasher(keys::kDataKey);
  open_size_ = 0;
}

Result<FileDigest> DigestSource(ByteSource& source, const FileHashOptions& options) {
  BoundedQueue<Block> free_blocks(kDigestBuffers), full_blocks(kDigestBuffers);
  for (size_t i = 0; i < kDigestBuffers; ++i) {
    free_blocks.Push(Block{std::make_unique<uint8_t[]>(kDigestBlockSize), 0});
  }

  ChunkHashStream chunk_stage(options.on_chunk);
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
