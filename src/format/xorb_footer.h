// The footer of a stored xorb: xet-core's XorbObjectInfo, version 1, byte for byte.
//
// A stored xorb object is: chunk records (format/xorb.h) | footer | u32 info_length, where
// info_length is the footer's length (not counting itself). All integers little-endian.
// Footer layout, for n chunks (info_length = 92 + 40 n):
//
//   offset        size  field
//   0             7     "XETBLOB"
//   7             1     version = 1
//   8             32    xorb hash (raw bytes)
//   40            7     "XBLBHSH"                  <- hashes section
//   47            1     hashes version = 0
//   48            4     n
//   52            32n   chunk hashes (raw bytes)
//   52+32n        7     "XBLBBND"                  <- boundaries section
//   59+32n        1     boundaries version = 1
//   60+32n        4     n
//   64+32n        4n    chunk boundary offsets: end of record i in the object, header
//                       included (so the last one is where the footer starts)
//   64+36n        4n    unpacked chunk offsets: cumulative uncompressed end of chunk i
//   64+40n        4     n
//   68+40n        4     hashes_section_offset_from_end   = info_length - 40
//   72+40n        4     boundary_section_offset_from_end = info_length - (52 + 32n)
//   76+40n        16    buffer: bytes 0..3 the uniqueness nonce, bytes 4..15 zero
//   92+40n              end of footer (info_length u32 follows)
//
// The "offset from end" fields count from the start of a section to the end of the footer
// (the info_length u32 excluded). The nonce is not covered by the xorb hash: it only makes
// otherwise identical objects byte-distinct.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "common/result.h"
#include "common/status.h"
#include "format/hash.h"
#include "format/xorb.h"

namespace xet {

inline constexpr uint8_t kXorbFooterVersion = 1;
inline constexpr uint8_t kXorbFooterHashesVersion = 0;
inline constexpr uint8_t kXorbFooterBoundariesVersion = 1;
inline constexpr size_t kXorbFooterNonceSize = 4;
inline constexpr size_t kXorbFooterBufferSize = 16;

// The footer's length (info_length) for n chunks: 92 + 40 n.
constexpr size_t XorbFooterInfoLength(size_t num_chunks) { return 92 + 40 * num_chunks; }

struct XorbFooter {
  Hash xorb_hash;
  std::vector<Hash> chunk_hashes;
  std::vector<uint32_t> boundary_offsets;  // see the layout above
  std::vector<uint32_t> unpacked_offsets;
  std::array<uint8_t, kXorbFooterNonceSize> nonce{};

  size_t num_chunks() const { return chunk_hashes.size(); }
  friend bool operator==(const XorbFooter&, const XorbFooter&) = default;
};

// The footer describing a xorb with the given hash and chunk table (XorbBuilder's or
// ParseAndVerifyXorb's output).
XorbFooter MakeXorbFooter(const Hash& xorb_hash, const XorbChunkTable& table,
                          const std::array<uint8_t, kXorbFooterNonceSize>& nonce = {});

// Appends the footer and the trailing u32 info_length to *out (so a stored object is the
// chunk records followed by this). Requires the three vectors to have equal length, at most
// kXorbMaxChunks (InvalidArgument otherwise, *out unchanged).
Status AppendXorbFooter(const XorbFooter& footer, std::vector<uint8_t>* out);

// Parses the footer at the end of a stored xorb object (chunk records + footer + u32
// info_length). Validates: the info_length fits the object and equals 92 + 40 n; idents;
// versions (footer 1, hashes 0, boundaries 1; version-0 footers are rejected as
// unsupported); the three copies of n agree with each other and the length; both
// offsets-from-end; boundary offsets strictly increasing by at least 9 bytes (a header and
// a payload byte) with the last equal to the footer's start (0 when n = 0); unpacked
// offsets increasing by 1..131072 per chunk; n <= kXorbMaxChunks and footer start <=
// kXorbMaxSize. Allocates at most 40 n bytes, and n is bounded by the object's size.
// Errors: InvalidArgument (malformed), ResourceExhausted (limits).
Result<XorbFooter> ParseXorbFooter(std::span<const uint8_t> object);

struct StoredXorbParts {
  std::span<const uint8_t> chunk_bytes;  // the chunk records: object[0, footer start)
  XorbFooter footer;
};

// Splits a stored xorb object into its chunk records and its parsed footer (see
// ParseXorbFooter). The chunk bytes are a view into `object`.
Result<StoredXorbParts> SplitStoredXorb(std::span<const uint8_t> object);

// Checks that footer.xorb_hash is the xorb hash of the footer's chunk hashes and sizes
// (from the unpacked offsets). Corruption if not. Requires a footer that ParseXorbFooter
// accepted or MakeXorbFooter built.
Status CheckXorbFooterHash(const XorbFooter& footer);

}  // namespace xet
