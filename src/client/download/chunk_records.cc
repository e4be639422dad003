#include "client/download/chunk_records.h"

#include <algorithm>
#include <string>

namespace xet {
namespace {

// The checks every record header must pass, wherever its bytes came from.
bool ChunkHeaderIsSane(const XorbChunkHeader& h) {
  return h.version == kXorbChunkHeaderVersion && IsKnownCompressionScheme(h.scheme) &&
         h.uncompressed_size != 0 && h.uncompressed_size <= kXorbMaxChunkSize;
}

bool StoredSizesDiffer(const XorbChunkHeader& h) {
  return static_cast<CompressionScheme>(h.scheme) == CompressionScheme::kNone &&
         h.compressed_size != h.uncompressed_size;
}

}  // namespace

Status ParseChunkRecords(std::span<const uint8_t> bytes, uint32_t num_chunks,
                         std::vector<ChunkRecord>* records) {
  records->clear();
  records->reserve(num_chunks);
  size_t off = 0;
  for (uint32_t i = 0; i < num_chunks; ++i) {
    if (bytes.size() - off < kXorbChunkHeaderSize) {
      return Status::Corruption("fetched range ends inside chunk " + std::to_string(i) + " of " +
                                std::to_string(num_chunks));
    }
    const XorbChunkHeader h = DecodeXorbChunkHeader(bytes.subspan(off));
    if (!ChunkHeaderIsSane(h) || bytes.size() - off - kXorbChunkHeaderSize < h.compressed_size) {
      return Status::Corruption("fetched range: malformed chunk record " + std::to_string(i) +
                                " at offset " + std::to_string(off));
    }
    const size_t payload = off + kXorbChunkHeaderSize;
    if (StoredSizesDiffer(h)) {
      return Status::Corruption("fetched range: stored chunk " + std::to_string(i) +
                                " has mismatched sizes");
    }
    records->push_back({payload, h.compressed_size, h.uncompressed_size, h.scheme});
    off = payload + h.compressed_size;
  }
  if (off != bytes.size()) {
    return Status::Corruption("fetched range has " + std::to_string(bytes.size() - off) +
                              " bytes after its " + std::to_string(num_chunks) + " chunks");
  }
  return Status::Ok();
}

Result<std::span<const uint8_t>> DecodeChunkRecord(ChunkCodec& codec, uint32_t index,
                                                   const ChunkRecord& r,
                                                   std::span<const uint8_t> payload,
                                                   std::span<uint8_t> scratch) {
  const auto scheme = static_cast<CompressionScheme>(r.scheme);
  if (scheme == CompressionScheme::kNone) {
    if (payload.size() != r.usize) {
      return Status::Corruption("fetched range: stored chunk " + std::to_string(index) +
                                " has mismatched sizes");
    }
    return payload;
  }
  if (scratch.size() < r.usize) return Status::Internal("DecodeChunkRecord: scratch too small");
  const std::span<uint8_t> dst = scratch.first(r.usize);
  Status st = codec.Decompress(scheme, payload, dst);
  if (!st.ok()) {
    return Status::Corruption("fetched range: chunk " + std::to_string(index) + ": " +
                              st.message());
  }
  return std::span<const uint8_t>(dst);
}

void ChunkRecordStream::Reset(uint32_t num_chunks, uint64_t range_bytes) {
  num_chunks_ = num_chunks;
  range_bytes_ = range_bytes;
  next_ = 0;
  consumed_ = 0;
  pending_.clear();
}

Result<size_t> ChunkRecordStream::RecordSize(std::span<const uint8_t> header, uint64_t at) const {
  if (next_ >= num_chunks_) {
    return Status::Corruption("fetched range has " + std::to_string(range_bytes_ - at) +
                              " bytes after its " + std::to_string(num_chunks_) + " chunks");
  }
  const XorbChunkHeader h = DecodeXorbChunkHeader(header);
  if (!ChunkHeaderIsSane(h) || h.compressed_size > kMaxPayload ||
      range_bytes_ - at - kXorbChunkHeaderSize < h.compressed_size || StoredSizesDiffer(h)) {
    return Status::Corruption("fetched range: malformed chunk record " + std::to_string(next_) +
                              " at offset " + std::to_string(at));
  }
  return kXorbChunkHeaderSize + size_t{h.compressed_size};
}

Status ChunkRecordStream::Emit(std::span<const uint8_t> record, const RecordFn& on_record) {
  const XorbChunkHeader h = DecodeXorbChunkHeader(record);
  const ChunkRecord r{kXorbChunkHeaderSize, h.compressed_size, h.uncompressed_size, h.scheme};
  return on_record(next_++, r, record.subspan(kXorbChunkHeaderSize, h.compressed_size));
}

Status ChunkRecordStream::Feed(std::span<const uint8_t> in, const RecordFn& on_record) {
  if (in.size() > range_bytes_ - consumed_) {
    return Status::Corruption("fetched range longer than its " + std::to_string(range_bytes_) +
                              " bytes");
  }
  while (!in.empty()) {
    if (!pending_.empty()) {
      // Complete the header, then the record, from `in`.
      auto append = [&](size_t want) {
        const size_t take = std::min(want - pending_.size(), in.size());
        pending_.insert(pending_.end(), in.begin(), in.begin() + static_cast<ptrdiff_t>(take));
        in = in.subspan(take);
        consumed_ += take;
        return pending_.size() == want;
      };
      if (pending_.size() < kXorbChunkHeaderSize && !append(kXorbChunkHeaderSize)) continue;
      XET_ASSIGN_OR_RETURN(const size_t need, RecordSize(pending_, consumed_ - pending_.size()));
      if (!append(need)) continue;  // `in` is used up
      XET_RETURN_IF_ERROR(Emit(pending_, on_record));
      pending_.clear();
      continue;
    }
    if (in.size() >= kXorbChunkHeaderSize) {
      XET_ASSIGN_OR_RETURN(const size_t size, RecordSize(in, consumed_));
      if (in.size() >= size) {
        XET_RETURN_IF_ERROR(Emit(in.first(size), on_record));
        in = in.subspan(size);
        consumed_ += size;
        continue;
      }
    }
    pending_.assign(in.begin(), in.end());  // an incomplete record
    consumed_ += in.size();
    in = {};
  }
  return Status::Ok();
}

Status ChunkRecordStream::Finish() const {
  if (!pending_.empty() || next_ != num_chunks_ || consumed_ != range_bytes_) {
    return Status::Corruption("fetched range ends inside chunk " + std::to_string(next_) + " of " +
                              std::to_string(num_chunks_));
  }
  return Status::Ok();
}

}  // namespace xet
