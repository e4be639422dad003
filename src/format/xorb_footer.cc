#include "format/xorb_footer.h"

#include <cstring>
#include <string>

#include "format/byte_io.h"
#include "format/merkle.h"

namespace xet {
namespace {

constexpr size_t kIdentSize = 7;
constexpr char kIdentFooter[kIdentSize + 1] = "XETBLOB";
constexpr char kIdentHashes[kIdentSize + 1] = "XBLBHSH";
constexpr char kIdentBoundaries[kIdentSize + 1] = "XBLBBND";
// Bytes before the hashes section: ident, version, xorb hash.
constexpr size_t kHeadSize = kIdentSize + 1 + Hash::kSize;
// Fixed bytes of a section: ident, version, u32 count.
constexpr size_t kSectionHeadSize = kIdentSize + 1 + 4;

Status Malformed(const std::string& msg) { return Status::InvalidArgument("xorb footer: " + msg); }

bool ReadIdent(ByteReader& r, const char* expected) {
  std::span<const uint8_t> ident;
  return r.ReadSpan(kIdentSize, &ident) && std::memcmp(ident.data(), expected, kIdentSize) == 0;
}

}  // namespace

XorbFooter MakeXorbFooter(const Hash& xorb_hash, const XorbChunkTable& table,
                          const std::array<uint8_t, kXorbFooterNonceSize>& nonce) {
  XorbFooter f;
  f.xorb_hash = xorb_hash;
  f.chunk_hashes.reserve(table.size());
  for (const ChunkInfo& c : table.chunks) f.chunk_hashes.push_back(c.hash);
  f.boundary_offsets = table.boundary_offsets;
  f.unpacked_offsets = table.unpacked_offsets;
  f.nonce = nonce;
  return f;
}

Status AppendXorbFooter(const XorbFooter& f, std::vector<uint8_t>* out) {
  const size_t n = f.chunk_hashes.size();
  if (f.boundary_offsets.size() != n || f.unpacked_offsets.size() != n) {
    return Status::InvalidArgument(
        "xorb footer: chunk hash, boundary and unpacked offset counts differ");
  }
  if (n > kXorbMaxChunks) {
    return Status::InvalidArgument("xorb footer: more than 8192 chunks");
  }
  const uint32_t n32 = static_cast<uint32_t>(n);
  const size_t info_length = XorbFooterInfoLength(n);
  out->reserve(out->size() + info_length + 4);
  ByteWriter w(out);
  w.Bytes(kIdentFooter, kIdentSize);
  w.U8(kXorbFooterVersion);
  w.PutHash(f.xorb_hash);
  w.Bytes(kIdentHashes, kIdentSize);
  w.U8(kXorbFooterHashesVersion);
  w.U32(n32);
  for (const Hash& h : f.chunk_hashes) w.PutHash(h);
  w.Bytes(kIdentBoundaries, kIdentSize);
  w.U8(kXorbFooterBoundariesVersion);
  w.U32(n32);
  for (uint32_t v : f.boundary_offsets) w.U32(v);
  for (uint32_t v : f.unpacked_offsets) w.U32(v);
  w.U32(n32);
  w.U32(static_cast<uint32_t>(info_length - kHeadSize));  // hashes section to the end
  w.U32(static_cast<uint32_t>(info_length - kHeadSize - kSectionHeadSize -
                              Hash::kSize * n));  // boundaries section to the end
  w.Bytes(f.nonce.data(), f.nonce.size());
  w.Zeros(kXorbFooterBufferSize - kXorbFooterNonceSize);
  w.U32(static_cast<uint32_t>(info_length));
  return Status::Ok();
}

Result<XorbFooter> ParseXorbFooter(std::span<const uint8_t> object) {
  if (object.size() < 4) {
    return Malformed("object of " + std::to_string(object.size()) +
                     " bytes is too short for the info length");
  }
  uint32_t info_length = 0;
  ByteReader(object.subspan(object.size() - 4)).ReadU32(&info_length);
  if (info_length > object.size() - 4) {
    return Malformed("info length " + std::to_string(info_length) + " exceeds the " +
                     std::to_string(object.size() - 4) + " bytes before it");
  }
  if (info_length < XorbFooterInfoLength(0) || (info_length - XorbFooterInfoLength(0)) % 40 != 0) {
    return Malformed("info length " + std::to_string(info_length) + " is not 92 + 40 * num_chunks");
  }
  const size_t n = (info_length - XorbFooterInfoLength(0)) / 40;
  if (n > kXorbMaxChunks) {
    return Status::ResourceExhausted("xorb footer: " + std::to_string(n) +
                                     " chunks exceed the 8192-chunk limit");
  }
  const size_t footer_start = object.size() - 4 - info_length;
  if (footer_start > kXorbMaxSize) {
    return Status::ResourceExhausted("xorb footer: chunk records of " +
                                     std::to_string(footer_start) +
                                     " bytes exceed the 64 MiB limit");
  }
  // From here every read is within the info_length bytes, which hold exactly n chunks.
  ByteReader r(object.subspan(footer_start, info_length));
  XorbFooter f;
  uint8_t version = 0;
  if (!ReadIdent(r, kIdentFooter)) return Malformed("bad ident (expected XETBLOB)");
  r.ReadU8(&version);
  if (version != kXorbFooterVersion) {
    return Malformed("unsupported version " + std::to_string(version) + " (expected 1)");
  }
  r.ReadHash(&f.xorb_hash);

  if (!ReadIdent(r, kIdentHashes)) return Malformed("bad hashes section ident (expected XBLBHSH)");
  r.ReadU8(&version);
  if (version != kXorbFooterHashesVersion) {
    return Malformed("unsupported hashes section version " + std::to_string(version));
  }
  uint32_t count = 0;
  r.ReadU32(&count);
  if (count != n) {
    return Malformed("hashes section num_chunks " + std::to_string(count) +
                     " disagrees with the info length's " + std::to_string(n));
  }
  f.chunk_hashes.resize(n);
  for (Hash& h : f.chunk_hashes) r.ReadHash(&h);

  if (!ReadIdent(r, kIdentBoundaries)) {
    return Malformed("bad boundaries section ident (expected XBLBBND)");
  }
  r.ReadU8(&version);
  if (version != kXorbFooterBoundariesVersion) {
    return Malformed("unsupported boundaries section version " + std::to_string(version));
  }
  r.ReadU32(&count);
  if (count != n) {
    return Malformed("boundaries section num_chunks " + std::to_string(count) +
                     " disagrees with the info length's " + std::to_string(n));
  }
  f.boundary_offsets.resize(n);
  for (uint32_t& v : f.boundary_offsets) r.ReadU32(&v);
  f.unpacked_offsets.resize(n);
  for (uint32_t& v : f.unpacked_offsets) r.ReadU32(&v);

  r.ReadU32(&count);
  if (count != n) {
    return Malformed("num_chunks " + std::to_string(count) + " disagrees with the info length's " +
                     std::to_string(n));
  }
  uint32_t hashes_from_end = 0;
  uint32_t boundaries_from_end = 0;
  r.ReadU32(&hashes_from_end);
  r.ReadU32(&boundaries_from_end);
  const size_t want_hashes = info_length - kHeadSize;
  const size_t want_boundaries = want_hashes - kSectionHeadSize - Hash::kSize * n;
  if (hashes_from_end != want_hashes) {
    return Malformed("hashes_section_offset_from_end " + std::to_string(hashes_from_end) +
                     ", expected " + std::to_string(want_hashes));
  }
  if (boundaries_from_end != want_boundaries) {
    return Malformed("boundary_section_offset_from_end " + std::to_string(boundaries_from_end) +
                     ", expected " + std::to_string(want_boundaries));
  }
  std::array<uint8_t, kXorbFooterBufferSize> buffer{};
  r.ReadBytes(buffer.data(), buffer.size());
  std::memcpy(f.nonce.data(), buffer.data(), kXorbFooterNonceSize);
  if (!r.AtEnd()) return Malformed("internal size mismatch");  // unreachable by construction

  uint64_t prev_boundary = 0;
  uint64_t prev_unpacked = 0;
  for (size_t i = 0; i < n; ++i) {
    const uint64_t b = f.boundary_offsets[i];
    const uint64_t u = f.unpacked_offsets[i];
    if (b < prev_boundary + kXorbChunkHeaderSize + 1) {
      return Malformed("chunk " + std::to_string(i) + " boundary offset " + std::to_string(b) +
                       " is not at least 9 bytes past " + std::to_string(prev_boundary));
    }
    if (u <= prev_unpacked || u - prev_unpacked > kXorbMaxChunkSize) {
      return Malformed("chunk " + std::to_string(i) + " unpacked offset " + std::to_string(u) +
                       " is not 1..131072 bytes past " + std::to_string(prev_unpacked));
    }
    prev_boundary = b;
    prev_unpacked = u;
  }
  if (prev_boundary != footer_start) {
    return Malformed("last chunk boundary " + std::to_string(prev_boundary) +
                     " is not the footer's start " + std::to_string(footer_start));
  }
  return f;
}

Result<StoredXorbParts> SplitStoredXorb(std::span<const uint8_t> object) {
  XET_ASSIGN_OR_RETURN(XorbFooter footer, ParseXorbFooter(object));
  const size_t chunk_end = footer.boundary_offsets.empty() ? 0 : footer.boundary_offsets.back();
  return StoredXorbParts{object.first(chunk_end), std::move(footer)};
}

Status CheckXorbFooterHash(const XorbFooter& footer) {
  const size_t n = footer.chunk_hashes.size();
  if (footer.unpacked_offsets.size() != n) {
    return Status::InvalidArgument("xorb footer: chunk hash and unpacked offset counts differ");
  }
  std::vector<ChunkInfo> chunks(n);
  uint64_t prev = 0;
  for (size_t i = 0; i < n; ++i) {
    chunks[i] = {footer.chunk_hashes[i], footer.unpacked_offsets[i] - prev};
    prev = footer.unpacked_offsets[i];
  }
  const Hash computed = XorbHash(chunks);
  if (computed != footer.xorb_hash) {
    return Status::Corruption("xorb footer: hash " + footer.xorb_hash.ToHex() +
                              " does not match its chunks' xorb hash " + computed.ToHex());
  }
  return Status::Ok();
}

}  // namespace xet
