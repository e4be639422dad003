#include "client/cas/reconstruction_json.h"

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "client/transport/json_fields.h"
#include "format/xorb_limits.h"

namespace xet {
namespace {

using nlohmann::json;

// The array `key` of `obj` as unsigned values no larger than `max`: nullopt when absent,
// false in *ok when present but not such an array of exactly `count` values.
std::optional<std::vector<uint64_t>> UintArray(const json& obj, const char* key, size_t count,
                                               uint64_t max, bool* ok) {
  *ok = true;
  const json* a = wire_json::Field(obj, key);
  if (a == nullptr) return std::nullopt;
  if (!a->is_array() || a->size() != count) {
    *ok = false;
    return std::nullopt;
  }
  std::vector<uint64_t> out;
  out.reserve(count);
  for (const json& v : *a) {
    if (!v.is_number_unsigned() || v.get<uint64_t>() > max) {
      *ok = false;
      return std::nullopt;
    }
    out.push_back(v.get<uint64_t>());
  }
  return out;
}

// The shape checks of ParseReconstructionJson; json type errors cannot occur (every access
// is checked), but the caller still guards against nlohmann exceptions.
Result<Reconstruction> ReconstructionFrom(const json& j) {
  constexpr std::string_view kDoc = "reconstruction";
  if (!j.is_object()) return wire_json::Bad(kDoc, "not a JSON object");
  Reconstruction r;
  const auto offset = wire_json::U64(j, "offset_into_first_range");
  if (!offset) return wire_json::Bad(kDoc, "missing \"offset_into_first_range\"");
  r.offset_into_first_range = *offset;
  const json* terms = wire_json::Field(j, "terms");
  if (terms == nullptr || !terms->is_array()) return wire_json::Bad(kDoc, "missing \"terms\"");
  r.terms.reserve(terms->size());
  for (const json& t : *terms) {
    ReconTerm term;
    const auto hex = wire_json::Str(t, "hash");
    const auto hash = hex ? Hash::FromHex(*hex) : std::nullopt;
    if (!hash)
      return wire_json::Bad(kDoc, "term " + std::to_string(r.terms.size()) + ": bad \"hash\"");
    term.xorb_hash = *hash;
    const json* range = wire_json::Field(t, "range");
    if (range == nullptr || !wire_json::GetU64(t, "unpacked_length", &term.unpacked_length) ||
        !wire_json::GetU32(*range, "start", &term.chunk_start) ||
        !wire_json::GetU32(*range, "end", &term.chunk_end) || term.chunk_end <= term.chunk_start) {
      return wire_json::Bad(kDoc,
                            "term " + std::to_string(r.terms.size()) + ": bad range or length");
    }
    // Chunk detail (xetstore extension): one length per chunk, adding up to the term.
    bool ok = true;
    auto lengths =
        UintArray(t, "chunk_lengths", term.chunk_end - term.chunk_start, UINT32_MAX, &ok);
    if (lengths) {
      uint64_t sum = 0;
      for (uint64_t len : *lengths) sum += len;
      ok = sum == term.unpacked_length;
      term.chunk_lengths.assign(lengths->begin(), lengths->end());
    }
    if (!ok) {
      return wire_json::Bad(kDoc, "term " + std::to_string(r.terms.size()) +
                                      ": bad \"chunk_lengths\" (one per chunk, adding up to "
                                      "\"unpacked_length\")");
    }
    r.terms.push_back(std::move(term));
  }
  if (!r.terms.empty() && r.offset_into_first_range >= r.terms[0].unpacked_length) {
    return wire_json::Bad(kDoc, "\"offset_into_first_range\" is past the first term");
  }
  const json* xorbs = wire_json::Field(j, "xorbs");
  if (xorbs == nullptr || !xorbs->is_object()) return wire_json::Bad(kDoc, "missing \"xorbs\"");
  std::unordered_map<Hash, size_t, HashHasher> index;
  r.xorbs.reserve(xorbs->size());
  for (const auto& [key, entries] : xorbs->items()) {
    const auto hash = Hash::FromHex(key);
    if (!hash) return wire_json::Bad(kDoc, "bad xorb hash key");
    // Two spellings of one hash (hex digits are case-insensitive) would list it twice.
    if (!index.emplace(*hash, r.xorbs.size()).second) {
      return wire_json::Bad(kDoc, "xorb " + key + " is listed twice");
    }
    if (!entries.is_array())
      return wire_json::Bad(kDoc, "xorb " + key + ": fetch entries are not a list");
    std::vector<FetchEntry> list;
    list.reserve(entries.size());
    for (const json& e : entries) {
      FetchEntry fe;
      auto url = wire_json::Str(e, "url");
      if (!url || url->empty())
        return wire_json::Bad(kDoc, "xorb " + key + ": fetch entry without \"url\"");
      fe.url = std::move(*url);
      const json* ranges = wire_json::Field(e, "ranges");
      if (ranges == nullptr || !ranges->is_array() || ranges->empty()) {
        return wire_json::Bad(kDoc, "xorb " + key + ": fetch entry without \"ranges\"");
      }
      for (const json& rg : *ranges) {
        // Plain values, not optionals: GCC 12 misreports optionals here as uninitialized.
        const json* chunks = wire_json::Field(rg, "chunks");
        const json* bytes = wire_json::Field(rg, "bytes");
        FetchRange fr;
        if (chunks == nullptr || bytes == nullptr ||
            !wire_json::GetU32(*chunks, "start", &fr.chunk_start) ||
            !wire_json::GetU32(*chunks, "end", &fr.chunk_end) ||
            !wire_json::GetU64(*bytes, "start", &fr.byte_start) ||
            !wire_json::GetU64(*bytes, "end", &fr.byte_end) || fr.chunk_end <= fr.chunk_start ||
            fr.byte_end < fr.byte_start) {
          return wire_json::Bad(kDoc, "xorb " + key + ": bad fetch range");
        }
        // Inside a xorb (the spec's limit: 64 MiB serialized): the client sizes its buffers
        // by these numbers. Chunk indices allocate nothing, so their count is not bounded here.
        if (fr.byte_end >= kXorbMaxSize) {
          return wire_json::Bad(kDoc, "xorb " + key + ": fetch range past the end a xorb can have");
        }
        // Chunk detail: each chunk's start and the end, ascending, spanning the bytes.
        bool ok = true;
        auto offsets = UintArray(rg, "chunk_offsets", size_t{fr.chunk_end} - fr.chunk_start + 1,
                                 UINT64_MAX, &ok);
        if (offsets) {
          ok = offsets->front() == fr.byte_start && offsets->back() == fr.byte_end + 1;
          for (size_t i = 1; ok && i < offsets->size(); ++i) ok = (*offsets)[i - 1] < (*offsets)[i];
          fr.chunk_offsets = std::move(*offsets);
        }
        if (!ok) {
          return wire_json::Bad(kDoc, "xorb " + key +
                                          ": bad \"chunk_offsets\" (ascending chunk starts and "
                                          "the end, spanning the range's bytes)");
        }
        fe.ranges.push_back(std::move(fr));
      }
      list.push_back(std::move(fe));
    }
    if (list.empty()) return wire_json::Bad(kDoc, "xorb " + key + ": no fetch entries");
    r.xorbs.emplace_back(*hash, std::move(list));
  }
  for (const ReconTerm& t : r.terms) {
    if (!index.contains(t.xorb_hash)) {
      return wire_json::Bad(kDoc, "term xorb " + t.xorb_hash.ToHex() + " has no fetch entries");
    }
  }
  return r;
}

}  // namespace

Result<Reconstruction> ParseReconstructionJson(std::string_view body) {
  try {
    XET_ASSIGN_OR_RETURN(json j, wire_json::ParseBody(body, "reconstruction"));
    return ReconstructionFrom(j);
  } catch (const json::exception& e) {
    return wire_json::Bad("reconstruction", e.what());
  }
}

}  // namespace xet
