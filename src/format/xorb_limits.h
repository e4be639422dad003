// Size limits of the xorb format (Xet spec, xorb.md), shared by the compression layer, the
// xorb builder and parsers, and the footer.
#pragma once

#include <cstddef>
#include <cstdint>

namespace xet {

// Largest uncompressed chunk a xorb record may hold: the chunker's maximum chunk size,
// 128 KiB. Every chunk record's uncompressed size is in [1, kXorbMaxChunkSize].
inline constexpr size_t kXorbMaxChunkSize = 128 * 1024;

// Largest serialized xorb (chunk records only, without a stored footer): 64 MiB. The CAS
// server rejects larger uploads.
inline constexpr size_t kXorbMaxSize = 64 * 1024 * 1024;

// Largest number of chunk records in one xorb.
inline constexpr size_t kXorbMaxChunks = 8192;

// Every chunk record starts with an 8-byte header: version u8, compressed size u24 LE,
// compression scheme u8, uncompressed size u24 LE.
inline constexpr size_t kXorbChunkHeaderSize = 8;
inline constexpr uint8_t kXorbChunkHeaderVersion = 0;

}  // namespace xet
