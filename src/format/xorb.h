// The xorb format (Xet spec, xorb.md): a sequence of chunk records, each an 8-byte header
// (version u8 = 0, compressed size u24 LE, compression scheme u8, uncompressed size u24 LE)
// followed by the compressed payload. A xorb as uploaded has no footer; a stored xorb is
// followed by the XorbObjectInfo footer (format/xorb_footer.h).
//
// Limits (format/xorb_limits.h): uncompressed chunk size in [1, 128 KiB], at most 8192
// chunks and 64 MiB of chunk records per xorb.
//
// Parsers here take untrusted bytes: every field is bounds-checked before use, and nothing
// is allocated beyond what the input length justifies (one record entry per >= 9 input
// bytes, chunk buffers of at most 128 KiB). Errors name the chunk index and byte offset.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "common/result.h"
#include "common/status.h"
#include "format/compression.h"
#include "format/hash.h"
#include "format/merkle.h"
#include "format/xorb_limits.h"

namespace xet {

// A decoded chunk header, as stored (no validation).
struct XorbChunkHeader {
  uint8_t version = kXorbChunkHeaderVersion;
  uint32_t compressed_size = 0;  // payload bytes after the header; < 2^24
  uint8_t scheme = 0;            // a CompressionScheme byte (may be unknown when parsed)
  uint32_t uncompressed_size = 0;
};

// Decodes the 8 header bytes at `bytes[0..8)`. Requires bytes.size() >= 8.
XorbChunkHeader DecodeXorbChunkHeader(std::span<const uint8_t> bytes);
// Writes the 8 header bytes of `h` to out[0..8). Requires out.size() >= 8 and both sizes
// < 2^24.
void EncodeXorbChunkHeader(const XorbChunkHeader& h, std::span<uint8_t> out);

// One validated chunk record inside a serialized xorb.
struct XorbChunkRecord {
  size_t offset = 0;  // of the record's header
  uint32_t compressed_size = 0;
  uint32_t uncompressed_size = 0;
  CompressionScheme scheme = CompressionScheme::kNone;

  size_t payload_offset() const { return offset + kXorbChunkHeaderSize; }
  // One past the record's last byte: the next record's offset.
  size_t end_offset() const { return payload_offset() + compressed_size; }
  friend bool operator==(const XorbChunkRecord&, const XorbChunkRecord&) = default;
};

// What a parser does with bytes after the chunk records.
enum class XorbTrailingBytes : uint8_t {
  // Every byte must belong to a complete, well-formed record: an uploaded xorb. Anything
  // else (truncation, a bad header, leftover bytes) is an error.
  kReject,
  // Parsing stops at the first offset where no complete, well-formed record starts (fewer
  // than 8 bytes left, bad version, unknown scheme, sizes out of range, or a payload that
  // runs past the input); the bytes from there on are trailing and ignored. For xorbs
  // followed by other data, e.g. the reference xorb's 4 trailing bytes "XETB". This mode
  // cannot tell a truncated record from trailing data: verify the xorb hash (or use the
  // footer's boundaries, format/xorb_footer.h) when integrity matters.
  kAllow,
};

struct XorbRecords {
  std::vector<XorbChunkRecord> records;
  // End offset of the last complete record (0 if none) = start of any trailing bytes.
  // Equals the input size under XorbTrailingBytes::kReject.
  size_t end_offset = 0;
};

// Walks the chunk records of `xorb` without decompressing. Validates each header: version
// 0, known scheme, uncompressed size in [1, kXorbMaxChunkSize], payload within the input;
// and the limits: at most kXorbMaxChunks records whose bytes end within kXorbMaxSize.
// Errors: InvalidArgument for malformed records (see `trailing`), ResourceExhausted for
// exceeded limits.
Result<XorbRecords> ParseXorbRecords(std::span<const uint8_t> xorb,
                                     XorbTrailingBytes trailing = XorbTrailingBytes::kReject);

// The per-chunk table of a xorb: what the footer and the index need.
struct XorbChunkTable {
  std::vector<ChunkInfo> chunks;           // chunk hash and uncompressed size
  std::vector<uint32_t> boundary_offsets;  // end of record i in the xorb (header included)
  std::vector<uint32_t> unpacked_offsets;  // sum of the uncompressed sizes of chunks [0, i]

  size_t size() const { return chunks.size(); }
  bool empty() const { return chunks.empty(); }
  void clear();
  void reserve(size_t n);
  friend bool operator==(const XorbChunkTable&, const XorbChunkTable&) = default;
};

struct VerifiedXorb {
  Hash hash;  // the xorb hash computed from the chunk contents
  XorbChunkTable table;
  size_t end_offset = 0;  // as XorbRecords::end_offset
};

// Parses `xorb` once, decompresses each chunk once (into a reused buffer, or not at all for
// scheme 0), hashes each chunk once, and computes the xorb hash; with `expected_hash`, also
// requires the computed hash to equal it. `codec` may be null (a temporary one is used);
// pass one to reuse LZ4 contexts across xorbs.
// Errors: InvalidArgument for malformed records, ResourceExhausted for exceeded limits,
// Corruption for a payload that does not decode to its stated size or a hash mismatch; each
// message names the chunk index and offset.
Result<VerifiedXorb> ParseAndVerifyXorb(std::span<const uint8_t> xorb,
                                        const std::optional<Hash>& expected_hash,
                                        XorbTrailingBytes trailing = XorbTrailingBytes::kReject,
                                        ChunkCodec* codec = nullptr);

// Decodes the record `rec` (from ParseXorbRecords over `xorb`) into `out`.
// Requires out.size() == rec.uncompressed_size and rec to lie within `xorb`
// (InvalidArgument otherwise); Corruption if the payload does not decode.
Status DecompressXorbRecord(std::span<const uint8_t> xorb, const XorbChunkRecord& rec,
                            ChunkCodec& codec, std::span<uint8_t> out);

// Decodes the one chunk record that starts at bytes[0] (e.g. a range fetched from a
// xorb), appending its uncompressed bytes to *out. Returns the record's serialized length
// (header + payload), so a caller can walk consecutive records; bytes after the record are
// ignored. Errors as ParseAndVerifyXorb, with chunk index 0 and offset 0 in messages.
Result<size_t> ExtractXorbChunk(std::span<const uint8_t> bytes, ChunkCodec& codec,
                                std::vector<uint8_t>* out);

// The output of XorbBuilder::Finish.
struct SerializedXorb {
  std::vector<uint8_t> bytes;  // the chunk records, no footer
  XorbChunkTable table;
  Hash hash;  // the xorb hash
};

// Builds a xorb from raw chunks, compressing each with the policy given at construction.
// Not thread-safe; reusable after Finish.
class XorbBuilder {
 public:
  explicit XorbBuilder(CompressionPolicy policy = CompressionPolicy::kPredict);

  // True when a chunk of raw_size bytes (in [1, kXorbMaxChunkSize]) can be added without
  // exceeding kXorbMaxChunks or kXorbMaxSize, whatever its compression (a record is never
  // larger than 8 + raw_size bytes, since incompressible chunks are stored raw).
  bool CanAdd(size_t raw_size) const;

  // Compresses and appends `chunk`, hashing it. InvalidArgument if the chunk is empty or
  // larger than kXorbMaxChunkSize; ResourceExhausted if !CanAdd(chunk.size()). On error
  // the builder is unchanged.
  Status Add(std::span<const uint8_t> chunk);
  // As Add, with the chunk's hash already known (e.g. from the chunker). Requires
  // chunk_hash == ChunkHash(chunk); this is not checked.
  Status Add(std::span<const uint8_t> chunk, const Hash& chunk_hash);

  size_t num_chunks() const { return table_.size(); }
  bool empty() const { return table_.empty(); }
  size_t serialized_size() const { return bytes_.size(); }
  // Total uncompressed bytes added.
  uint64_t raw_size() const { return table_.empty() ? 0 : table_.unpacked_offsets.back(); }
  const std::vector<uint8_t>& bytes() const { return bytes_; }
  const XorbChunkTable& table() const { return table_; }

  // Returns the xorb so far (bytes, table, hash) and leaves the builder empty.
  SerializedXorb Finish();

  // Requires empty(). The next xorb is built in `buffer` (its contents are discarded, its
  // capacity kept): a caller that recycles the bytes of finished xorbs (common/buffer_pool.h)
  // saves faulting in a fresh 64 MiB per xorb. A buffer smaller than a full xorb is grown
  // as needed.
  void UseBuffer(std::vector<uint8_t> buffer);

 private:
  CompressionPolicy policy_;
  ChunkCodec codec_;
  std::vector<uint8_t> payload_;  // compression output, reused across chunks
  std::vector<uint8_t> bytes_;
  XorbChunkTable table_;
};

}  // namespace xet
