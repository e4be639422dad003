#include "client/cas/file_chunk_hashes_json.h"

#include <nlohmann/json.hpp>
#include <string>

#include "client/transport/json_fields.h"
#include "format/chunker.h"

namespace xet {
namespace {

using nlohmann::json;

constexpr std::string_view kChunkHashesDoc = "file chunk hashes";

Result<std::vector<Hash>> HashList(const json& j, const char* key) {
  const json* a = wire_json::Field(j, key);
  if (a == nullptr || !a->is_array()) {
    return wire_json::Bad(kChunkHashesDoc, std::string("missing \"") + key + "\"");
  }
  std::vector<Hash> out;
  out.reserve(a->size());
  for (const json& v : *a) {
    const auto hash = v.is_string() ? Hash::FromHex(v.get_ref<const std::string&>()) : std::nullopt;
    if (!hash) return wire_json::Bad(kChunkHashesDoc, std::string("bad hash in \"") + key + "\"");
    out.push_back(*hash);
  }
  return out;
}

// The bytes a subtree summarizes: every chunk appears in exactly one node (unmerged, or
// inside a merged node whose size is the sum of its chunks').
std::optional<uint64_t> SubtreeBytes(const MerkleHashSubtree& t) {
  uint64_t sum = 0;
  for (const ChunkInfo& n : t.nodes()) {
    if (n.size > UINT64_MAX - sum) return std::nullopt;
    sum += n.size;
  }
  return sum;
}

Result<FileChunkHashesAnswer> AnswerFrom(const json& j, uint64_t file_size) {
  if (!j.is_object()) return wire_json::Bad(kChunkHashesDoc, "not a JSON object");
  FileChunkHashesAnswer a;
  if (!wire_json::GetU64(j, "totalChunks", &a.total_chunks) ||
      !wire_json::GetU64(j, "fileSize", &a.file_size)) {
    return wire_json::Bad(kChunkHashesDoc, "missing \"totalChunks\" or \"fileSize\"");
  }
  if (a.file_size != file_size) {
    return wire_json::Bad(kChunkHashesDoc, "\"fileSize\" " + std::to_string(a.file_size) +
                                               " is not the " + std::to_string(file_size) +
                                               " bytes of the file");
  }
  const json* windows = wire_json::Field(j, "windows");
  if (windows == nullptr || !windows->is_array() || windows->empty()) {
    return wire_json::Bad(kChunkHashesDoc, "missing \"windows\"");
  }
  uint64_t prev_end = 0;
  for (const json& w : *windows) {
    const json* r = wire_json::Field(w, "dirtyByteRange");
    if (r == nullptr || !r->is_array() || r->size() != 2 || !(*r)[0].is_number_unsigned() ||
        !(*r)[1].is_number_unsigned()) {
      return wire_json::Bad(kChunkHashesDoc, "window without a \"dirtyByteRange\" pair");
    }
    const DirtyWindow win{(*r)[0].get<uint64_t>(), (*r)[1].get<uint64_t>()};
    if (win.start >= win.end || win.end > file_size || win.start < prev_end) {
      return wire_json::Bad(kChunkHashesDoc, "window [" + std::to_string(win.start) + ", " +
                                                 std::to_string(win.end) +
                                                 ") is empty, outside the file or out of order");
    }
    prev_end = win.end;
    a.windows.push_back(win);
  }
  const json* gaps = wire_json::Field(j, "hashRanges");
  if (gaps == nullptr || !gaps->is_array() || gaps->size() != a.windows.size() + 1) {
    return wire_json::Bad(kChunkHashesDoc,
                          "\"hashRanges\" does not have one entry per window plus one");
  }
  for (size_t g = 0; g < gaps->size(); ++g) {
    const uint64_t start = g == 0 ? 0 : a.windows[g - 1].end;
    const uint64_t end = g == a.windows.size() ? file_size : a.windows[g].start;
    const json& entry = (*gaps)[g];
    const std::string what = "gap " + std::to_string(g) + ": ";
    if (entry.is_null()) {
      if (start != end) return wire_json::Bad(kChunkHashesDoc, what + "null for a non-empty gap");
      a.gaps.emplace_back(std::nullopt);
      continue;
    }
    auto subtree = MerkleHashSubtree::FromJson(entry.dump());
    if (!subtree.ok()) return wire_json::Bad(kChunkHashesDoc, what + subtree.status().message());
    if (subtree->at_start() != (g == 0) || subtree->at_end() != (g == a.windows.size())) {
      return wire_json::Bad(kChunkHashesDoc, what + "wrong at_start / at_end");
    }
    if (SubtreeBytes(*subtree) != end - start || start == end) {
      return wire_json::Bad(kChunkHashesDoc, what + "its subtree does not hold the gap's " +
                                                 std::to_string(end - start) + " bytes");
    }
    a.gaps.emplace_back(std::move(*subtree));
  }
  XET_ASSIGN_OR_RETURN(a.gap_verification, HashList(j, "gapVerification"));
  if (wire_json::Field(j, "gapPieceVerification") != nullptr) {
    XET_ASSIGN_OR_RETURN(a.gap_piece_verification, HashList(j, "gapPieceVerification"));
  }
  if (const json* tails = wire_json::Field(j, "windowTails"); tails != nullptr) {
    if (!tails->is_array() || tails->size() != a.windows.size()) {
      return wire_json::Bad(kChunkHashesDoc, "\"windowTails\" does not have one entry per window");
    }
    a.window_tails.emplace();
    for (size_t w = 0; w < tails->size(); ++w) {
      const json& tail = (*tails)[w];
      const std::string what = "window tail " + std::to_string(w) + ": ";
      if (!tail.is_array()) return wire_json::Bad(kChunkHashesDoc, what + "not a list");
      std::vector<ChunkInfo> chunks;
      uint64_t bytes = 0;
      for (const json& c : tail) {
        const auto hex = wire_json::Str(c, "hash");
        const auto hash = hex ? Hash::FromHex(*hex) : std::nullopt;
        uint64_t size = 0;
        if (!hash || !wire_json::GetU64(c, "size", &size) || size == 0 || size > kMaxChunkSize) {
          return wire_json::Bad(kChunkHashesDoc, what + "a chunk without a hash and a size");
        }
        bytes += size;
        chunks.push_back({*hash, size});
      }
      if (bytes > a.windows[w].end - a.windows[w].start) {
        return wire_json::Bad(kChunkHashesDoc, what + "longer than its window");
      }
      a.window_tails->push_back(std::move(chunks));
    }
  }
  return a;
}

}  // namespace

Result<FileChunkHashesAnswer> ParseFileChunkHashesJson(std::string_view body, uint64_t file_size) {
  XET_ASSIGN_OR_RETURN(const json j, wire_json::ParseBody(body, kChunkHashesDoc));
  try {
    return AnswerFrom(j, file_size);
  } catch (const json::exception& e) {  // not expected: every access is checked
    return wire_json::Bad(kChunkHashesDoc, e.what());
  }
}

}  // namespace xet
