#include "server/transfer/file_reader.h"

#include <algorithm>
#include <vector>

#include "format/compression.h"
#include "format/keyed_hash.h"
#include "format/xorb.h"

namespace xet {
namespace {

// Compressed bytes read from the store at once (at least one chunk is always read).
constexpr uint64_t kReadBatchBytes = 8 << 20;

uint32_t RawStart(const XorbRecord& x, uint32_t chunk) {
  return chunk == 0 ? 0 : x.chunks[chunk - 1].uncompressed_end;
}
uint32_t SerializedStart(const XorbRecord& x, uint32_t chunk) {
  return chunk == 0 ? 0 : x.chunks[chunk - 1].compressed_end;
}

Status XorbCorruption(const Hash& xorb, const std::string& what) {
  return Status::Corruption("xorb " + xorb.ToHex() + ": " + what);
}

// Streams the raw bytes [skip, skip + take) of chunks [begin, end) of xorb `x`, verifying
// every chunk it decodes. Returns false in *stopped when the sink stopped.
class TermReader {
 public:
  TermReader(ObjectStore& objects, const ByteSink& sink) : objects_(objects), sink_(sink) {}

  Status Read(const XorbRecord& x, uint32_t begin, uint32_t end, uint64_t skip, uint64_t take,
              bool* stopped) {
    const std::string key = XorbKey(x.hash);
    uint32_t chunk = begin;
    while (chunk < end && take > 0) {
      // One store read covers chunks [chunk, batch_end).
      uint32_t batch_end = chunk + 1;
      while (batch_end < end &&
             x.chunks[batch_end].compressed_end - SerializedStart(x, chunk) <= kReadBatchBytes) {
        ++batch_end;
      }
      const uint32_t from = SerializedStart(x, chunk);
      const uint32_t to = x.chunks[batch_end - 1].compressed_end;
      if (to <= from) return XorbCorruption(x.hash, "chunk table is not ascending");
      serialized_.resize(to - from);
      XET_RETURN_IF_ERROR(objects_.ReadRange(key, from, serialized_));
      size_t pos = 0;
      for (; chunk < batch_end && take > 0; ++chunk) {
        const uint32_t record_end = x.chunks[chunk].compressed_end - from;
        raw_.clear();
        auto used =
            ExtractXorbChunk(std::span<const uint8_t>(serialized_).subspan(pos), codec_, &raw_);
        if (!used.ok()) {
          return XorbCorruption(x.hash,
                                "chunk " + std::to_string(chunk) + ": " + used.status().message());
        }
        if (pos + *used != record_end) {
          return XorbCorruption(x.hash, "chunk " + std::to_string(chunk) +
                                            " record length disagrees with the chunk table");
        }
        pos = record_end;
        const uint32_t raw_len = x.chunks[chunk].uncompressed_end - RawStart(x, chunk);
        if (raw_.size() != raw_len || ChunkHash(raw_) != x.chunks[chunk].hash) {
          return XorbCorruption(
              x.hash, "chunk " + std::to_string(chunk) + " does not match its hash or length");
        }
        if (skip >= raw_.size()) {
          skip -= raw_.size();
          continue;
        }
        const uint64_t n = std::min<uint64_t>(take, raw_.size() - skip);
        const auto* data = reinterpret_cast<const char*>(raw_.data()) + skip;
        if (!sink_(std::string_view(data, n))) {
          *stopped = true;
          return Status::Ok();
        }
        skip = 0;
        take -= n;
      }
    }
    return Status::Ok();
  }

 private:
  ObjectStore& objects_;
  const ByteSink& sink_;
  ChunkCodec codec_;
  std::vector<uint8_t> serialized_;
  std::vector<uint8_t> raw_;
};

}  // namespace

Status ReadFileRange(const FileRecord& file, uint64_t first, uint64_t last, XorbRecordCache& xorbs,
                     ObjectStore& objects, const ByteSink& sink) {
  if (first > last || last >= file.size) {
    return Status::OutOfRange("range " + std::to_string(first) + "-" + std::to_string(last) +
                              " is not inside the file of " + std::to_string(file.size) + " bytes");
  }
  TermReader reader(objects, sink);
  uint64_t term_start = 0;  // file offset of the current term
  for (const FileTerm& t : file.terms) {
    const uint64_t term_end = term_start + t.unpacked_bytes;  // exclusive
    if (term_end <= first) {
      term_start = term_end;
      continue;
    }
    if (term_start > last) break;
    XET_ASSIGN_OR_RETURN(std::shared_ptr<const XorbRecord> x, xorbs.Get(t.xorb_hash));
    if (!x) return XorbCorruption(t.xorb_hash, "unknown to the index");
    if (t.chunk_start >= t.chunk_end || t.chunk_end > x->chunks.size()) {
      return XorbCorruption(t.xorb_hash, "file term names chunks outside the xorb");
    }
    const uint32_t base = RawStart(*x, t.chunk_start);
    if (x->chunks[t.chunk_end - 1].uncompressed_end - base != t.unpacked_bytes) {
      return XorbCorruption(t.xorb_hash, "file term size disagrees with the chunk table");
    }
    // Offsets within the term's raw bytes; skip whole chunks before `first` without reading.
    const uint64_t want_from = first > term_start ? first - term_start : 0;
    const uint64_t want_to = std::min(last + 1, term_end) - term_start;  // exclusive
    auto it = std::upper_bound(
        x->chunks.begin() + t.chunk_start, x->chunks.begin() + t.chunk_end, base + want_from,
        [](uint64_t v, const XorbChunkRow& c) { return v < c.uncompressed_end; });
    const auto begin = static_cast<uint32_t>(it - x->chunks.begin());
    const uint64_t skip = base + want_from - RawStart(*x, begin);
    bool stopped = false;
    XET_RETURN_IF_ERROR(reader.Read(*x, begin, t.chunk_end, skip, want_to - want_from, &stopped));
    if (stopped) return Status::Ok();
    term_start = term_end;
  }
  return Status::Ok();
}

}  // namespace xet
