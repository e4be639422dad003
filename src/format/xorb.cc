#include "format/xorb.h"

#include <algorithm>
#include <string>

#include "format/keyed_hash.h"

namespace xet {
namespace {

std::string At(size_t index, size_t offset) {
  return "chunk " + std::to_string(index) + " at offset " + std::to_string(offset);
}

// Reads and validates the record starting at `offset` (index `index`) of `xorb`. Returns
// InvalidArgument (with the chunk index and offset) when no complete, well-formed record
// starts there. Limits are checked by the caller.
Status ReadRecord(std::span<const uint8_t> xorb, size_t offset, size_t index,
                  XorbChunkRecord* rec) {
  const size_t left = xorb.size() - offset;
  if (left < kXorbChunkHeaderSize) {
    return Status::InvalidArgument(At(index, offset) + ": truncated header (" +
                                   std::to_string(left) + " of 8 bytes)");
  }
  const XorbChunkHeader h = DecodeXorbChunkHeader(xorb.subspan(offset));
  if (h.version != kXorbChunkHeaderVersion) {
    return Status::InvalidArgument(At(index, offset) + ": unsupported header version " +
                                   std::to_string(h.version));
  }
  if (!IsKnownCompressionScheme(h.scheme)) {
    return Status::InvalidArgument(At(index, offset) + ": unknown compression scheme " +
                                   std::to_string(h.scheme));
  }
  if (h.uncompressed_size == 0 || h.uncompressed_size > kXorbMaxChunkSize) {
    return Status::InvalidArgument(At(index, offset) + ": uncompressed size " +
                                   std::to_string(h.uncompressed_size) + " is outside [1, 131072]");
  }
  if (h.compressed_size > left - kXorbChunkHeaderSize) {
    return Status::InvalidArgument(At(index, offset) + ": compressed size " +
                                   std::to_string(h.compressed_size) + " runs past the end (" +
                                   std::to_string(left - kXorbChunkHeaderSize) +
                                   " bytes left after the header)");
  }
  const auto scheme = static_cast<CompressionScheme>(h.scheme);
  if (scheme == CompressionScheme::kNone && h.compressed_size != h.uncompressed_size) {
    return Status::InvalidArgument(At(index, offset) +
                                   ": uncompressed record with compressed size " +
                                   std::to_string(h.compressed_size) + " != uncompressed size " +
                                   std::to_string(h.uncompressed_size));
  }
  rec->offset = offset;
  rec->compressed_size = h.compressed_size;
  rec->uncompressed_size = h.uncompressed_size;
  rec->scheme = scheme;
  return Status::Ok();
}

// Calls on_record(index, record) for each record of `xorb` in order; returns the end offset
// of the last complete record. Implements the XorbTrailingBytes policy and the limits.
template <typename OnRecord>
Result<size_t> WalkRecords(std::span<const uint8_t> xorb, XorbTrailingBytes trailing,
                           OnRecord&& on_record) {
  if (trailing == XorbTrailingBytes::kReject && xorb.size() > kXorbMaxSize) {
    return Status::ResourceExhausted("xorb of " + std::to_string(xorb.size()) +
                                     " bytes exceeds the 64 MiB limit");
  }
  size_t offset = 0;
  size_t index = 0;
  XorbChunkRecord rec;
  while (offset < xorb.size()) {
    Status st = ReadRecord(xorb, offset, index, &rec);
    if (!st.ok()) {
      if (trailing == XorbTrailingBytes::kAllow) break;
      return st;
    }
    if (index >= kXorbMaxChunks) {
      return Status::ResourceExhausted(At(index, offset) + ": xorb has more than 8192 chunks");
    }
    if (rec.end_offset() > kXorbMaxSize) {
      return Status::ResourceExhausted(At(index, offset) +
                                       ": chunk records exceed the 64 MiB xorb limit");
    }
    XET_RETURN_IF_ERROR(on_record(index, rec));
    offset = rec.end_offset();
    ++index;
  }
  return offset;
}

// Entries to reserve for a table over `bytes`: each record takes at least 9 bytes.
size_t ReserveFor(size_t bytes) {
  return std::min(kXorbMaxChunks, bytes / (kXorbChunkHeaderSize + 1));
}

}  // namespace

XorbChunkHeader DecodeXorbChunkHeader(std::span<const uint8_t> b) {
  XorbChunkHeader h;
  h.version = b[0];
  h.compressed_size = uint32_t{b[1]} | uint32_t{b[2]} << 8 | uint32_t{b[3]} << 16;
  h.scheme = b[4];
  h.uncompressed_size = uint32_t{b[5]} | uint32_t{b[6]} << 8 | uint32_t{b[7]} << 16;
  return h;
}

void EncodeXorbChunkHeader(const XorbChunkHeader& h, std::span<uint8_t> out) {
  out[0] = h.version;
  out[1] = static_cast<uint8_t>(h.compressed_size);
  out[2] = static_cast<uint8_t>(h.compressed_size >> 8);
  out[3] = static_cast<uint8_t>(h.compressed_size >> 16);
  out[4] = h.scheme;
  out[5] = static_cast<uint8_t>(h.uncompressed_size);
  out[6] = static_cast<uint8_t>(h.uncompressed_size >> 8);
  out[7] = static_cast<uint8_t>(h.uncompressed_size >> 16);
}

void XorbChunkTable::clear() {
  chunks.clear();
  boundary_offsets.clear();
  unpacked_offsets.clear();
}

void XorbChunkTable::reserve(size_t n) {
  chunks.reserve(n);
  boundary_offsets.reserve(n);
  unpacked_offsets.reserve(n);
}

Result<XorbRecords> ParseXorbRecords(std::span<const uint8_t> xorb, XorbTrailingBytes trailing) {
  XorbRecords out;
  out.records.reserve(ReserveFor(std::min(xorb.size(), kXorbMaxSize)));
  XET_ASSIGN_OR_RETURN(out.end_offset,
                       WalkRecords(xorb, trailing, [&](size_t, const XorbChunkRecord& rec) {
                         out.records.push_back(rec);
                         return Status::Ok();
                       }));
  return out;
}

Result<VerifiedXorb> ParseAndVerifyXorb(std::span<const uint8_t> xorb,
                                        const std::optional<Hash>& expected_hash,
                                        XorbTrailingBytes trailing, ChunkCodec* codec) {
  std::optional<ChunkCodec> own_codec;
  if (codec == nullptr) codec = &own_codec.emplace();
  VerifiedXorb out;
  out.table.reserve(ReserveFor(std::min(xorb.size(), kXorbMaxSize)));
  std::vector<uint8_t> buffer;  // grows to the largest chunk seen, at most 128 KiB
  uint64_t unpacked = 0;
  auto on_record = [&](size_t index, const XorbChunkRecord& rec) -> Status {
    const auto payload = xorb.subspan(rec.payload_offset(), rec.compressed_size);
    std::span<const uint8_t> data = payload;
    if (rec.scheme != CompressionScheme::kNone) {
      if (buffer.size() < rec.uncompressed_size) buffer.resize(rec.uncompressed_size);
      const std::span<uint8_t> dst(buffer.data(), rec.uncompressed_size);
      Status st = codec->Decompress(rec.scheme, payload, dst);
      if (!st.ok()) return st.WithContext(At(index, rec.offset));
      data = dst;
    }
    unpacked += rec.uncompressed_size;
    out.table.chunks.push_back({ChunkHash(data), rec.uncompressed_size});
    // Both fit: records end within 64 MiB; at most 8192 chunks of <= 128 KiB is 1 GiB.
    out.table.boundary_offsets.push_back(static_cast<uint32_t>(rec.end_offset()));
    out.table.unpacked_offsets.push_back(static_cast<uint32_t>(unpacked));
    return Status::Ok();
  };
  XET_ASSIGN_OR_RETURN(out.end_offset, WalkRecords(xorb, trailing, on_record));
  out.hash = XorbHash(out.table.chunks);
  if (expected_hash.has_value() && *expected_hash != out.hash) {
    return Status::Corruption("xorb hash mismatch: computed " + out.hash.ToHex() + " over " +
                              std::to_string(out.table.size()) + " chunks, expected " +
                              expected_hash->ToHex());
  }
  return out;
}

Status DecompressXorbRecord(std::span<const uint8_t> xorb, const XorbChunkRecord& rec,
                            ChunkCodec& codec, std::span<uint8_t> out) {
  if (rec.offset > xorb.size() || xorb.size() - rec.offset < kXorbChunkHeaderSize ||
      xorb.size() - rec.payload_offset() < rec.compressed_size) {
    return Status::InvalidArgument("chunk record at offset " + std::to_string(rec.offset) +
                                   " lies outside the xorb");
  }
  if (out.size() != rec.uncompressed_size) {
    return Status::InvalidArgument("output buffer size " + std::to_string(out.size()) +
                                   " != chunk's uncompressed size " +
                                   std::to_string(rec.uncompressed_size));
  }
  Status st =
      codec.Decompress(rec.scheme, xorb.subspan(rec.payload_offset(), rec.compressed_size), out);
  if (!st.ok()) return st.WithContext("chunk record at offset " + std::to_string(rec.offset));
  return Status::Ok();
}

Result<size_t> ExtractXorbChunk(std::span<const uint8_t> bytes, ChunkCodec& codec,
                                std::vector<uint8_t>* out) {
  XorbChunkRecord rec;
  XET_RETURN_IF_ERROR(ReadRecord(bytes, 0, 0, &rec));
  const size_t old = out->size();
  out->resize(old + rec.uncompressed_size);
  Status st = codec.Decompress(rec.scheme, bytes.subspan(rec.payload_offset(), rec.compressed_size),
                               std::span<uint8_t>(out->data() + old, rec.uncompressed_size));
  if (!st.ok()) {
    out->resize(old);
    return st.WithContext(At(0, 0));
  }
  return rec.end_offset();
}

XorbBuilder::XorbBuilder(CompressionPolicy policy) : policy_(policy) {}

bool XorbBuilder::CanAdd(size_t raw_size) const {
  return raw_size >= 1 && raw_size <= kXorbMaxChunkSize && table_.size() < kXorbMaxChunks &&
         bytes_.size() + kXorbChunkHeaderSize + raw_size <= kXorbMaxSize;
}

Status XorbBuilder::Add(std::span<const uint8_t> chunk) { return Add(chunk, ChunkHash(chunk)); }

Status XorbBuilder::Add(std::span<const uint8_t> chunk, const Hash& chunk_hash) {
  if (chunk.empty() || chunk.size() > kXorbMaxChunkSize) {
    return Status::InvalidArgument("chunk size " + std::to_string(chunk.size()) +
                                   " is outside [1, 131072]");
  }
  if (!CanAdd(chunk.size())) {
    return Status::ResourceExhausted("xorb is full: " + std::to_string(table_.size()) +
                                     " chunks, " + std::to_string(bytes_.size()) + " bytes");
  }
  const uint64_t unpacked_end = raw_size() + chunk.size();
  // One allocation per xorb instead of a doubling series (each step a fresh, faulted-in
  // block and a copy of everything so far).
  if (bytes_.capacity() < kXorbMaxSize) bytes_.reserve(kXorbMaxSize);
  // Compress into a scratch buffer sized once (no zero-fill per chunk), then append.
  if (payload_.size() < ChunkCodec::MaxCompressedSize(chunk.size())) {
    payload_.resize(ChunkCodec::MaxCompressedSize(kXorbMaxChunkSize));
  }
  XET_ASSIGN_OR_RETURN(ChunkCodec::Compressed c, codec_.Compress(chunk, policy_, payload_));
  XorbChunkHeader h;
  h.compressed_size = static_cast<uint32_t>(c.size);
  h.scheme = static_cast<uint8_t>(c.scheme);
  h.uncompressed_size = static_cast<uint32_t>(chunk.size());
  uint8_t header[kXorbChunkHeaderSize];
  EncodeXorbChunkHeader(h, header);
  bytes_.insert(bytes_.end(), header, header + kXorbChunkHeaderSize);
  bytes_.insert(bytes_.end(), payload_.begin(),
                payload_.begin() + static_cast<std::ptrdiff_t>(c.size));
  table_.chunks.push_back({chunk_hash, chunk.size()});
  table_.boundary_offsets.push_back(static_cast<uint32_t>(bytes_.size()));
  table_.unpacked_offsets.push_back(static_cast<uint32_t>(unpacked_end));
  return Status::Ok();
}

void XorbBuilder::UseBuffer(std::vector<uint8_t> buffer) {
  buffer.clear();
  bytes_ = std::move(buffer);
}

SerializedXorb XorbBuilder::Finish() {
  SerializedXorb out;
  out.hash = XorbHash(table_.chunks);
  // Give back the unused part of the 64 MiB reservation (a small xorb would otherwise carry
  // it; many of them exhaust the address space the kernel lets a process commit).
  if (bytes_.capacity() > 2 * bytes_.size()) bytes_.shrink_to_fit();
  out.bytes = std::move(bytes_);
  out.table = std::move(table_);
  bytes_.clear();
  table_.clear();
  return out;
}

}  // namespace xet
