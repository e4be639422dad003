// libFuzzer target: the X-Range-Dirty header of GET /v2/file-chunk-hashes and the answer
// computed from it (server/cas/file_chunk_hashes.h), over a synthetic file.
//
// Input: "HEADER\nCHUNKS": the header value, then the file's chunks, two bytes each
// (little-endian size unit; chunk size = 1 + unit * 2, so 1 B .. 128 KiB and often a
// "stable" size), grouped eight per xorb, one term per xorb. No newline: the whole input
// is the header of a fixed three-chunk file.
// Properties:
//   - ParseDirtyRangesHeader never crashes; errors carry a message; an accepted set is
//     non-empty with first <= last;
//   - ComputeFileChunkHashes on a well-formed file fails only with InvalidArgument, and
//     exactly when no dirty range starts inside the file;
//   - on success: totals match the file; windows are ascending, disjoint, non-empty, on
//     chunk boundaries and inside the file; every dirty byte inside the file is in a
//     window; hashRanges has windows + 1 entries, null exactly for empty gaps;
//     gapVerification has one hash per term overlapping no window, gapPieceVerification
//     one per (non-empty gap, term overlapping it); the JSON answer parses and agrees
//     with the structure, and the client's parser accepts it unchanged;
//   - heap growth stays linear in the input.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "client/cas/file_chunk_hashes_json.h"
#include "fuzz/support/heap_meter.h"
#include "fuzz/support/property_check.h"
#include "server/cas/file_chunk_hashes.h"

namespace {

using xet::ByteRange;

constexpr xet::fuzz::PropertyCheck Check("dirty_ranges_fuzzer");

struct SyntheticFile {
  xet::FileRecord file;
  std::map<xet::Hash, xet::XorbRecord> xorbs;
  std::vector<uint64_t> boundaries;  // chunk starts, then the file size
};

xet::Hash NumberedHash(uint64_t n, uint8_t kind) {
  uint8_t bytes[32] = {};
  for (int i = 0; i < 8; ++i) bytes[i] = static_cast<uint8_t>(n >> (8 * i));
  bytes[31] = kind;
  return xet::Hash::FromBytes(bytes);
}

SyntheticFile MakeFile(const std::vector<uint32_t>& chunk_sizes) {
  SyntheticFile f;
  constexpr size_t kChunksPerXorb = 8;
  uint64_t offset = 0;
  for (size_t i = 0; i < chunk_sizes.size(); i += kChunksPerXorb) {
    xet::XorbRecord xorb;
    xorb.hash = NumberedHash(i, 1);
    uint32_t raw = 0, packed = 0;
    for (size_t k = i; k < std::min(chunk_sizes.size(), i + kChunksPerXorb); ++k) {
      f.boundaries.push_back(offset);
      raw += chunk_sizes[k];
      packed += chunk_sizes[k] + 8;
      offset += chunk_sizes[k];
      xorb.chunks.push_back({NumberedHash(k, 2), packed, raw});
    }
    xorb.object_size = packed;
    f.file.terms.push_back({xorb.hash, 0, static_cast<uint32_t>(xorb.chunks.size()), raw});
    f.xorbs.emplace(xorb.hash, std::move(xorb));
  }
  f.file.size = offset;
  f.file.file_hash = NumberedHash(offset, 3);
  f.boundaries.push_back(offset);
  return f;
}

bool IsBoundary(const SyntheticFile& f, uint64_t at) {
  return std::binary_search(f.boundaries.begin(), f.boundaries.end(), at);
}

void CheckAnswer(const SyntheticFile& f, const std::vector<ByteRange>& dirty) {
  const xet::XorbLookup lookup = [&](const xet::Hash& h) -> const xet::XorbRecord* {
    auto it = f.xorbs.find(h);
    return it == f.xorbs.end() ? nullptr : &it->second;
  };
  bool any_inside = false;
  for (const ByteRange& r : dirty) any_inside = any_inside || r.first < f.file.size;
  auto answer = xet::ComputeFileChunkHashes(f.file, lookup, dirty);
  if (!answer.ok()) {
    Check(!answer.status().message().empty(), "error without a message");
    Check(answer.status().code() == xet::Status::Code::kInvalidArgument,
          "a well-formed file failed with something other than InvalidArgument");
    Check(!any_inside, "rejected although a dirty range starts inside the file");
    return;
  }
  Check(any_inside, "accepted although no dirty range starts inside the file");
  const xet::FileChunkHashes& a = *answer;
  Check(a.file_size == f.file.size, "fileSize");
  Check(a.total_chunks == f.boundaries.size() - 1, "totalChunks");
  Check(!a.windows.empty(), "no window");
  for (size_t i = 0; i < a.windows.size(); ++i) {
    const xet::ChunkWindow& w = a.windows[i];
    Check(w.start < w.end && w.end <= f.file.size, "window empty or outside the file");
    Check(IsBoundary(f, w.start) && IsBoundary(f, w.end), "window not on chunk boundaries");
    if (i > 0) Check(a.windows[i - 1].end <= w.start, "windows overlap or are unordered");
  }
  for (const ByteRange& r : dirty) {
    if (r.first >= f.file.size) continue;
    const uint64_t last = std::min<uint64_t>(r.last, f.file.size - 1);
    // Every byte of [r.first, last] lies in a window: walk the windows from r.first.
    uint64_t at = r.first;
    for (const xet::ChunkWindow& w : a.windows) {
      if (w.start <= at && at < w.end) at = w.end;
    }
    Check(at > last, "a dirty byte lies outside every window");
  }
  Check(a.hash_ranges.size() == a.windows.size() + 1, "hashRanges size");
  for (size_t g = 0; g <= a.windows.size(); ++g) {
    const uint64_t start = g == 0 ? 0 : a.windows[g - 1].end;
    const uint64_t end = g == a.windows.size() ? f.file.size : a.windows[g].start;
    Check(a.hash_ranges[g].has_value() == (start < end), "null exactly for an empty gap");
  }
  size_t clean_terms = 0;
  uint64_t term_start = 0;
  for (const xet::FileTerm& t : f.file.terms) {
    const uint64_t term_end = term_start + t.unpacked_bytes;
    bool overlaps = false;
    for (const xet::ChunkWindow& w : a.windows) {
      overlaps = overlaps || (w.start < term_end && term_start < w.end);
    }
    clean_terms += overlaps ? 0 : 1;
    term_start = term_end;
  }
  Check(a.gap_verification.size() == clean_terms, "gapVerification count");
  // gapPieceVerification: one per (non-empty gap, term overlapping it). Touching windows
  // leave an empty gap between them, which holds no chunk and so no piece.
  size_t pieces = 0;
  for (size_t g = 0; g <= a.windows.size(); ++g) {
    const uint64_t start = g == 0 ? 0 : a.windows[g - 1].end;
    const uint64_t end = g == a.windows.size() ? f.file.size : a.windows[g].start;
    if (start >= end) continue;
    uint64_t t0 = 0;
    for (const xet::FileTerm& t : f.file.terms) {
      const uint64_t t1 = t0 + t.unpacked_bytes;
      pieces += (t0 < end && start < t1) ? 1 : 0;
      t0 = t1;
    }
  }
  Check(a.gap_piece_verification.size() == pieces, "gapPieceVerification count");

  const std::string text = xet::SerializeFileChunkHashes(a);
  const auto j = nlohmann::json::parse(text, nullptr, false);
  Check(j.is_object(), "answer is not a JSON object");
  Check(j["windows"].size() == a.windows.size() && j["hashRanges"].size() == a.hash_ranges.size() &&
            j["gapVerification"].size() == a.gap_verification.size() &&
            j["totalChunks"] == a.total_chunks && j["fileSize"] == a.file_size,
        "JSON disagrees with the answer");
  // The client's parser (client/cas/file_chunk_hashes_json.h) accepts it as it is.
  const auto parsed = xet::ParseFileChunkHashesJson(text, f.file.size);
  Check(parsed.ok(), "the client rejects the server's answer");
  Check(parsed->windows.size() == a.windows.size() && parsed->gaps == a.hash_ranges &&
            parsed->gap_piece_verification == a.gap_piece_verification,
        "the client reads another answer");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  xet::fuzz::HeapScope heap;
  const size_t nl = input.find('\n');
  const std::string_view header = input.substr(0, nl);
  auto dirty = xet::ParseDirtyRangesHeader(header);
  if (!dirty.ok()) {
    Check(!dirty.status().message().empty(), "error without a message");
    return 0;
  }
  Check(!dirty->empty(), "accepted an empty set");
  for (const ByteRange& r : *dirty) Check(r.first <= r.last, "first > last");

  std::vector<uint32_t> sizes;
  if (nl == std::string_view::npos) {
    sizes = {20000, 70000, 5};
  } else {
    const std::string_view rest = input.substr(nl + 1);
    for (size_t i = 0; i + 1 < rest.size() && sizes.size() < 512; i += 2) {
      const uint32_t unit =
          static_cast<uint8_t>(rest[i]) | (static_cast<uint8_t>(rest[i + 1]) << 8);
      sizes.push_back(1 + unit * 2);
    }
  }
  if (!sizes.empty()) CheckAnswer(MakeFile(sizes), *dirty);
  heap.Check("dirty_ranges_fuzzer", size, 256, 1 << 20);
  return 0;
}
