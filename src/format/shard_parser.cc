#include "format/shard_parser.h"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <string>
#include <string_view>

namespace xet {
namespace {

uint32_t LoadU32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, sizeof(v));  // little-endian host (see hash.cc)
  return v;
}
uint64_t LoadU64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

std::string Dec(uint64_t v) {
  char buf[24];
  const auto res = std::to_chars(buf, buf + sizeof(buf), v);
  return std::string(buf, res.ptr);
}
std::string Hex(uint64_t v) {
  char buf[24];
  const auto res = std::to_chars(buf, buf + sizeof(buf), v, 16);
  return "0x" + std::string(buf, res.ptr);
}

Status Error(uint64_t offset, std::string_view what) {
  std::string msg = "shard: at offset ";
  msg += Dec(offset);
  msg += ": ";
  msg += what;
  return Status::InvalidArgument(msg);
}

bool AllZero(const uint8_t* p, size_t n) {
  return std::all_of(p, p + n, [](uint8_t b) { return b == 0; });
}

// Reads the records of the file info and CAS info sections from a span that starts at the
// beginning of the shard and ends where the footer (if any) starts. Offsets are absolute.
class SectionReader {
 public:
  explicit SectionReader(std::span<const uint8_t> data) : data_(data) {}

  size_t pos() const { return pos_; }
  size_t remaining() const { return data_.size() - pos_; }
  void set_pos(size_t p) { pos_ = p; }

  // The next 48-byte record, or an error naming `what` if fewer bytes remain.
  Result<const uint8_t*> Record(std::string_view what) {
    if (remaining() < kShardEntrySize) {
      return Error(pos_, "truncated: expected " + std::string(what) + " (48 bytes), but only " +
                             Dec(remaining()) + " bytes remain");
    }
    const uint8_t* p = data_.data() + pos_;
    pos_ += kShardEntrySize;
    return p;
  }

  // Fails unless `records` more 48-byte records fit in what remains.
  Status RequireRecords(uint64_t records, size_t count_offset, std::string_view what) const {
    if (records > remaining() / kShardEntrySize) {
      return Error(count_offset, std::string(what) + " needs " + Dec(records) +
                                     " records of 48 bytes, but only " + Dec(remaining()) +
                                     " bytes remain");
    }
    return Status::Ok();
  }

 private:
  std::span<const uint8_t> data_;
  size_t pos_ = 0;
};

// Bookend: 32 × 0xFF, then 16 zero bytes.
Status CheckBookendTail(const uint8_t* rec, size_t rec_offset, std::string_view section) {
  if (!AllZero(rec + Hash::kSize, kShardEntrySize - Hash::kSize)) {
    return Error(rec_offset + Hash::kSize,
                 std::string(section) + " bookend: bytes 32..47 must be zero");
  }
  return Status::Ok();
}

Result<FileInfo> ParseFileBody(SectionReader& r, const uint8_t* hdr, size_t hdr_offset) {
  FileInfo f;
  f.file_hash = Hash::FromBytes(hdr);
  f.flags = LoadU32(hdr + 32);
  const uint32_t num_entries = LoadU32(hdr + 36);
  f.reserved = LoadU64(hdr + 40);
  if ((f.flags & ~kKnownFileFlags) != 0) {
    return Error(hdr_offset + 32, "file flags " + Hex(f.flags) + " have unknown bits " +
                                      Hex(f.flags & ~kKnownFileFlags));
  }
  const uint64_t records =
      uint64_t{num_entries} * (f.has_verification() ? 2 : 1) + (f.has_metadata_ext() ? 1 : 0);
  XET_RETURN_IF_ERROR(
      r.RequireRecords(records, hdr_offset + 36, "file with num_entries " + Dec(num_entries)));

  f.terms.reserve(num_entries);
  for (uint32_t i = 0; i < num_entries; ++i) {
    XET_ASSIGN_OR_RETURN(const uint8_t* p, r.Record("a file data sequence entry"));
    FileDataSequenceEntry t;
    t.cas_hash = Hash::FromBytes(p);
    t.cas_flags = LoadU32(p + 32);
    t.unpacked_segment_bytes = LoadU32(p + 36);
    t.chunk_index_start = LoadU32(p + 40);
    t.chunk_index_end = LoadU32(p + 44);
    f.terms.push_back(t);
  }
  if (f.has_verification()) {
    f.verification.reserve(num_entries);
    for (uint32_t i = 0; i < num_entries; ++i) {
      XET_ASSIGN_OR_RETURN(const uint8_t* p, r.Record("a file verification entry"));
      FileVerificationEntry v;
      v.range_hash = Hash::FromBytes(p);
      std::memcpy(v.reserved.data(), p + 32, v.reserved.size());
      f.verification.push_back(v);
    }
  }
  if (f.has_metadata_ext()) {
    XET_ASSIGN_OR_RETURN(const uint8_t* p, r.Record("a file metadata extension"));
    FileMetadataExt ext;
    ext.sha256 = Hash::FromBytes(p);
    std::memcpy(ext.reserved.data(), p + 32, ext.reserved.size());
    f.metadata_ext = ext;
  }
  return f;
}

Status ParseFileSection(SectionReader& r, std::vector<FileInfo>* files) {
  for (;;) {
    const size_t at = r.pos();
    XET_ASSIGN_OR_RETURN(const uint8_t* hdr,
                         r.Record("a file info header or the file info bookend"));
    if (Hash::FromBytes(hdr).IsAllOnes()) return CheckBookendTail(hdr, at, "file info");
    XET_ASSIGN_OR_RETURN(FileInfo f, ParseFileBody(r, hdr, at));
    if (!files->empty() && f.has_verification() != files->front().has_verification()) {
      return Error(at + 32, "file " + Dec(files->size()) +
                                (f.has_verification() ? " has" : " lacks") +
                                " verification entries but file 0 " +
                                (f.has_verification() ? "lacks" : "has") +
                                " them (all files or none must have them)");
    }
    files->push_back(std::move(f));
  }
}

Status ParseCasSection(SectionReader& r, std::vector<CasInfo>* cas_infos) {
  for (;;) {
    const size_t at = r.pos();
    XET_ASSIGN_OR_RETURN(const uint8_t* hdr, r.Record("a CAS info header or the CAS info bookend"));
    if (Hash::FromBytes(hdr).IsAllOnes()) return CheckBookendTail(hdr, at, "CAS info");
    CasInfo c;
    c.cas_hash = Hash::FromBytes(hdr);
    c.cas_flags = LoadU32(hdr + 32);
    const uint32_t num_entries = LoadU32(hdr + 36);
    c.num_bytes_in_cas = LoadU32(hdr + 40);
    c.num_bytes_on_disk = LoadU32(hdr + 44);
    XET_RETURN_IF_ERROR(
        r.RequireRecords(num_entries, at + 36, "CAS block with num_entries " + Dec(num_entries)));
    c.entries.reserve(num_entries);
    for (uint32_t i = 0; i < num_entries; ++i) {
      XET_ASSIGN_OR_RETURN(const uint8_t* p, r.Record("a CAS chunk entry"));
      CasChunkEntry e;
      e.chunk_hash = Hash::FromBytes(p);
      e.chunk_byte_range_start = LoadU32(p + 32);
      e.unpacked_segment_bytes = LoadU32(p + 36);
      e.flags = LoadU32(p + 40);
      e.reserved = LoadU32(p + 44);
      c.entries.push_back(e);
    }
    cas_infos->push_back(std::move(c));
  }
}

// Decodes the footer at `p` (200 bytes) without checking offsets.
ShardFooter DecodeFooter(const uint8_t* p) {
  ShardFooter f;
  f.version = LoadU64(p);
  f.file_info_offset = LoadU64(p + 8);
  f.cas_info_offset = LoadU64(p + 16);
  ShardLookupFields l;
  l.file_lookup_offset = LoadU64(p + 24);
  l.file_lookup_num_entry = LoadU64(p + 32);
  l.xorb_lookup_offset = LoadU64(p + 40);
  l.xorb_lookup_num_entry = LoadU64(p + 48);
  l.chunk_lookup_offset = LoadU64(p + 56);
  l.chunk_lookup_num_entry = LoadU64(p + 64);
  f.lookup = l;
  f.chunk_hash_hmac_key = Hash::FromBytes(p + 72);
  f.shard_creation_timestamp = LoadU64(p + 104);
  f.shard_key_expiry = LoadU64(p + 112);
  for (size_t i = 0; i < f.buffer.size(); ++i) f.buffer[i] = LoadU64(p + 120 + 8 * i);
  ShardStats s;
  s.stored_bytes_on_disk = LoadU64(p + 168);
  s.materialized_bytes = LoadU64(p + 176);
  s.stored_bytes = LoadU64(p + 184);
  f.stats = s;
  f.footer_offset = LoadU64(p + 192);
  return f;
}

}  // namespace

Status CheckShardLookupTables(const ShardLookupFields& l, uint64_t begin, uint64_t end) {
  const uint64_t footer_pos = end;
  const uint64_t size = end - begin;
  auto fail = [&](uint64_t field_offset, const std::string& what) {
    return Error(
        footer_pos + field_offset,
        Dec(size) + " bytes lie between the CAS info bookend (ends at " + Dec(begin) +
            ") and the footer, but the footer's lookup fields do not describe them: " + what);
  };
  if (l.file_lookup_offset != begin) {
    return fail(24,
                "file_lookup_offset is " + Dec(l.file_lookup_offset) + ", expected " + Dec(begin));
  }
  // Each table must fit in what is left, which also rules out overflow below.
  uint64_t pos = begin;
  const struct {
    uint64_t num;
    size_t record;
    uint64_t next_offset;  // the following table's offset field, or footer_offset
    size_t num_field;
    const char* name;
  } tables[] = {
      {l.file_lookup_num_entry, kShardFileLookupEntrySize, l.xorb_lookup_offset, 32, "file"},
      {l.xorb_lookup_num_entry, kShardXorbLookupEntrySize, l.chunk_lookup_offset, 48, "xorb"},
      {l.chunk_lookup_num_entry, kShardChunkLookupEntrySize, end, 64, "chunk"},
  };
  for (const auto& t : tables) {
    if (t.num > (end - pos) / t.record) {
      return fail(t.num_field, std::string(t.name) + " lookup table of " + Dec(t.num) +
                                   " records does not fit before the footer");
    }
    pos += t.num * t.record;
    if (t.next_offset != pos) {
      return fail(t.num_field + 8, std::string("the table after the ") + t.name +
                                       " lookup table should start at " + Dec(pos) + ", not " +
                                       Dec(t.next_offset));
    }
  }
  return Status::Ok();
}

Result<ShardHeader> ParseShardHeader(std::span<const uint8_t> data) {
  if (data.size() < kShardHeaderSize) {
    return Error(0, "truncated: a shard header needs 48 bytes, got " + Dec(data.size()));
  }
  ShardHeader h;
  std::memcpy(h.tag.data(), data.data(), h.tag.size());
  if (h.tag != kShardHeaderTag) return Error(0, "wrong header tag (not an MDB shard)");
  h.version = LoadU64(data.data() + 32);
  if (h.version != kShardHeaderVersion) {
    return Error(32, "header version " + Dec(h.version) + ", expected 2");
  }
  h.footer_size = LoadU64(data.data() + 40);
  if (h.footer_size != 0 && h.footer_size != kShardFooterSize) {
    return Error(40, "header footer_size " + Dec(h.footer_size) + ", expected 0 or 200");
  }
  return h;
}

Result<Shard> ParseShard(std::span<const uint8_t> data) {
  XET_ASSIGN_OR_RETURN(const ShardHeader header, ParseShardHeader(data));
  Shard shard;
  size_t sections_end = data.size();
  if (header.footer_size == kShardFooterSize) {
    // Header, two bookends and the footer at the least.
    constexpr size_t kMinSize = kShardHeaderSize + 2 * kShardEntrySize + kShardFooterSize;
    if (data.size() < kMinSize) {
      return Error(data.size(), "truncated: a shard with a footer needs at least " + Dec(kMinSize) +
                                    " bytes, got " + Dec(data.size()));
    }
    sections_end = data.size() - kShardFooterSize;
    ShardFooter footer = DecodeFooter(data.data() + sections_end);
    if (footer.version != kShardFooterVersion) {
      return Error(sections_end, "footer version " + Dec(footer.version) + ", expected 1");
    }
    if (footer.footer_offset != sections_end) {
      return Error(sections_end + 192, "footer_offset " + Dec(footer.footer_offset) +
                                           ", but the footer starts at " + Dec(sections_end));
    }
    if (footer.file_info_offset != kShardHeaderSize) {
      return Error(sections_end + 8, "footer file_info_offset " + Dec(footer.file_info_offset) +
                                         ", expected 48 (right after the header)");
    }
    shard.footer = std::move(footer);
  }

  SectionReader r(data.first(sections_end));
  r.set_pos(kShardHeaderSize);
  XET_RETURN_IF_ERROR(ParseFileSection(r, &shard.files));
  const size_t cas_start = r.pos();
  if (shard.footer && shard.footer->cas_info_offset != cas_start) {
    return Error(sections_end + 16, "footer cas_info_offset " + Dec(shard.footer->cas_info_offset) +
                                        ", but the CAS info section starts at " + Dec(cas_start));
  }
  XET_RETURN_IF_ERROR(ParseCasSection(r, &shard.cas_infos));
  const size_t cas_end = r.pos();

  if (!shard.footer) {
    if (cas_end != data.size()) {
      return Error(cas_end, Dec(data.size() - cas_end) +
                                " trailing bytes after the CAS info bookend of a shard "
                                "without footer");
    }
    return shard;
  }
  if (cas_end != sections_end) {
    XET_RETURN_IF_ERROR(CheckShardLookupTables(*shard.footer->lookup, cas_end, sections_end));
    shard.footer->lookup_tables.assign(data.begin() + static_cast<std::ptrdiff_t>(cas_end),
                                       data.begin() + static_cast<std::ptrdiff_t>(sections_end));
  }
  return shard;
}

}  // namespace xet
