#include "server/cas/file_chunk_hashes.h"

#include <charconv>
#include <utility>

#include "format/chunker.h"
#include "format/merkle.h"

namespace xet {
namespace {

// A half-open byte range [start, end).
struct Span {
  uint64_t start = 0;
  uint64_t end = 0;
};

// The window/gap state machine, fed the file's chunks in order. Mirrors the behaviour of
// xet-core's ChunkWindowBuilder (see the header comment for the rules).
class WindowBuilder {
 public:
  explicit WindowBuilder(std::span<const Span> dirty) : dirty_(dirty) {}

  void AddChunk(const ChunkInfo& chunk) {
    const uint64_t start = cursor_;
    const uint64_t end = cursor_ + chunk.size;
    const bool overlaps = Overlaps(dirty_idx_, start, end);
    if (!in_window_) {
      if (overlaps) {
        OpenWindow(end);
      } else {
        gap_.push_back(chunk);
      }
    } else if (overlaps || Overlaps(dirty_idx_ + 1, start, end)) {
      if (!overlaps) ++dirty_idx_;
      windows_.back().end = end;
      tails_.back().clear();
      SkipRangesStartingBefore(end);
      prev_clean_size_.reset();
    } else {
      // Past the dirty data: grow until two consecutive clean chunks of stable size.
      windows_.back().end = end;
      tails_.back().push_back(chunk);
      const bool stable =
          prev_clean_size_ && IsStableChunkSize(*prev_clean_size_) && IsStableChunkSize(chunk.size);
      prev_clean_size_ = chunk.size;
      if (stable) {
        ++dirty_idx_;
        gap_starts_file_ = false;
        in_window_ = false;
        prev_clean_size_.reset();
      }
    }
    cursor_ = end;
  }

  // Closes the trailing gap; moves the windows, their clean tails and the windows + 1 gap
  // subtrees into *answer.
  void Finish(FileChunkHashes* answer) && {
    PushGap(/*at_end=*/true);
    answer->windows = std::move(windows_);
    answer->window_tails = std::move(tails_);
    answer->hash_ranges = std::move(gaps_);
  }

 private:
  bool Overlaps(size_t idx, uint64_t start, uint64_t end) const {
    return idx < dirty_.size() && end > dirty_[idx].start && start < dirty_[idx].end;
  }

  // Every later dirty range that starts before `end` joins the open window.
  void SkipRangesStartingBefore(uint64_t end) {
    while (dirty_idx_ + 1 < dirty_.size() && end > dirty_[dirty_idx_ + 1].start) ++dirty_idx_;
  }

  void PushGap(bool at_end) {
    if (gap_.empty()) {
      gaps_.emplace_back(std::nullopt);
    } else {
      gaps_.emplace_back(MerkleHashSubtree::FromChunks(gap_starts_file_, gap_, at_end));
    }
    gap_.clear();
  }

  void OpenWindow(uint64_t end) {
    PushGap(/*at_end=*/false);
    windows_.push_back({cursor_, end});
    tails_.emplace_back();
    SkipRangesStartingBefore(end);
    in_window_ = true;
    prev_clean_size_.reset();
  }

  std::span<const Span> dirty_;
  size_t dirty_idx_ = 0;
  bool in_window_ = false;
  bool gap_starts_file_ = true;  // no window has closed yet
  uint64_t cursor_ = 0;          // file offset of the next chunk
  std::optional<uint64_t> prev_clean_size_;
  std::vector<ChunkInfo> gap_;
  std::vector<ChunkWindow> windows_;
  std::vector<std::vector<ChunkInfo>> tails_;  // per window: its clean chunks past the dirty
  std::vector<std::optional<MerkleHashSubtree>> gaps_;
};

// Sorted, merged, clamped to [0, file_size), as half-open spans.
Result<std::vector<Span>> NormalizeDirty(std::span<const ByteRange> dirty, uint64_t file_size) {
  if (dirty.empty()) return Status::InvalidArgument("no dirty ranges");
  for (const ByteRange& r : dirty) {
    if (r.last < r.first) return Status::InvalidArgument("dirty range ends before it starts");
  }
  std::vector<Span> out;
  for (const ByteRange& r : NormalizeByteRanges(dirty)) {
    if (r.first >= file_size) break;  // sorted: every later range is past the end too
    out.push_back({r.first, r.last >= file_size ? file_size : r.last + 1});
  }
  if (out.empty()) return Status::InvalidArgument("no dirty range lies inside the file");
  return out;
}

Status TermCorruption(size_t term, std::string_view what) {
  return Status::Corruption("file term " + std::to_string(term) + ": " + std::string(what));
}

}  // namespace

bool IsStableChunkSize(uint64_t size) {
  return size >= 2 * kMinChunkSize && size < kMaxChunkSize - kMinChunkSize;
}

Result<std::vector<ByteRange>> ParseDirtyRangesHeader(std::string_view value) {
  RangeParseOptions options;
  options.allow_open_end = true;
  XET_ASSIGN_OR_RETURN(std::vector<ByteRange> ranges, ParseByteRanges(value, options));
  if (ranges.empty()) return Status::InvalidArgument("X-Range-Dirty names no range");
  return ranges;
}

Result<FileChunkHashes> ComputeFileChunkHashes(const FileRecord& file, const XorbLookup& lookup,
                                               std::span<const ByteRange> dirty) {
  XET_ASSIGN_OR_RETURN(const std::vector<Span> ranges, NormalizeDirty(dirty, file.size));

  FileChunkHashes answer;
  answer.file_size = file.size;
  WindowBuilder builder(ranges);
  std::vector<const XorbRecord*> term_xorbs;
  term_xorbs.reserve(file.terms.size());
  uint64_t offset = 0;
  for (size_t t = 0; t < file.terms.size(); ++t) {
    const FileTerm& term = file.terms[t];
    const XorbRecord* xorb = lookup(term.xorb_hash);
    if (xorb == nullptr) return TermCorruption(t, "unknown xorb " + term.xorb_hash.ToHex());
    if (term.chunk_start >= term.chunk_end || term.chunk_end > xorb->chunks.size()) {
      return TermCorruption(t, "chunk range outside the xorb");
    }
    const auto& rows = xorb->chunks;
    uint32_t prev_end = term.chunk_start == 0 ? 0 : rows[term.chunk_start - 1].uncompressed_end;
    const uint32_t first_end = prev_end;
    for (uint32_t i = term.chunk_start; i < term.chunk_end; ++i) {
      if (rows[i].uncompressed_end < prev_end) return TermCorruption(t, "xorb chunk table");
      builder.AddChunk({rows[i].hash, uint64_t{rows[i].uncompressed_end} - prev_end});
      prev_end = rows[i].uncompressed_end;
    }
    if (prev_end - first_end != term.unpacked_bytes) {
      return TermCorruption(t, "unpacked size disagrees with the xorb");
    }
    answer.total_chunks += term.chunk_end - term.chunk_start;
    offset += term.unpacked_bytes;
    term_xorbs.push_back(xorb);
  }
  if (offset != file.size) return Status::Corruption("file terms do not add up to its size");

  std::move(builder).Finish(&answer);
  if (answer.windows.empty()) return Status::Internal("dirty ranges overlap no chunk");
  const std::vector<ChunkWindow>& windows = answer.windows;

  // One verification hash per term lying wholly outside the windows (both ascending), and
  // one per maximal run of a term's chunks outside the windows (its pieces in the gaps).
  std::vector<Hash> hashes;
  size_t w = 0;
  uint64_t term_start = 0;
  for (size_t t = 0; t < file.terms.size(); ++t) {
    const FileTerm& term = file.terms[t];
    const uint64_t term_end = term_start + term.unpacked_bytes;
    while (w < windows.size() && windows[w].end <= term_start) ++w;
    const bool overlaps = w < windows.size() && windows[w].start < term_end;
    const auto& rows = term_xorbs[t]->chunks;
    if (!overlaps) {
      hashes.clear();
      for (uint32_t i = term.chunk_start; i < term.chunk_end; ++i) hashes.push_back(rows[i].hash);
      answer.gap_verification.push_back(VerificationHash(hashes));
      answer.gap_piece_verification.push_back(answer.gap_verification.back());
    } else {
      // Walk the term's chunks; windows are on chunk boundaries, so a chunk is wholly in
      // a window or wholly in a gap.
      size_t wi = w;
      uint64_t pos = term_start;
      uint32_t prev_end = term.chunk_start == 0 ? 0 : rows[term.chunk_start - 1].uncompressed_end;
      hashes.clear();
      for (uint32_t i = term.chunk_start; i < term.chunk_end; ++i) {
        const uint64_t chunk_end = pos + (rows[i].uncompressed_end - prev_end);
        while (wi < windows.size() && windows[wi].end <= pos) ++wi;
        const bool in_window = wi < windows.size() && windows[wi].start < chunk_end;
        if (in_window) {
          if (!hashes.empty()) answer.gap_piece_verification.push_back(VerificationHash(hashes));
          hashes.clear();
        } else {
          hashes.push_back(rows[i].hash);
        }
        prev_end = rows[i].uncompressed_end;
        pos = chunk_end;
      }
      if (!hashes.empty()) answer.gap_piece_verification.push_back(VerificationHash(hashes));
    }
    term_start = term_end;
  }
  return answer;
}

std::string SerializeFileChunkHashes(const FileChunkHashes& answer) {
  std::string out;
  char num[24];
  const auto append_u64 = [&](uint64_t v) {
    out.append(num, static_cast<size_t>(std::to_chars(num, num + sizeof(num), v).ptr - num));
  };
  out.append("{\"totalChunks\":");
  append_u64(answer.total_chunks);
  out.append(",\"fileSize\":");
  append_u64(answer.file_size);
  out.append(",\"windows\":[");
  for (size_t i = 0; i < answer.windows.size(); ++i) {
    if (i > 0) out.push_back(',');
    out.append("{\"dirtyByteRange\":[");
    append_u64(answer.windows[i].start);
    out.push_back(',');
    append_u64(answer.windows[i].end);
    out.append("]}");
  }
  out.append("],\"hashRanges\":[");
  for (size_t i = 0; i < answer.hash_ranges.size(); ++i) {
    if (i > 0) out.push_back(',');
    if (answer.hash_ranges[i]) {
      answer.hash_ranges[i]->AppendJson(&out);
    } else {
      out.append("null");
    }
  }
  out.append("],\"gapVerification\":[");
  char hex[64];
  for (size_t i = 0; i < answer.gap_verification.size(); ++i) {
    if (i > 0) out.push_back(',');
    out.push_back('"');
    answer.gap_verification[i].ToHex(hex);
    out.append(hex, sizeof(hex));
    out.push_back('"');
  }
  out.append("],\"gapPieceVerification\":[");
  for (size_t i = 0; i < answer.gap_piece_verification.size(); ++i) {
    if (i > 0) out.push_back(',');
    out.push_back('"');
    answer.gap_piece_verification[i].ToHex(hex);
    out.append(hex, sizeof(hex));
    out.push_back('"');
  }
  out.append("],\"windowTails\":[");
  for (size_t w = 0; w < answer.window_tails.size(); ++w) {
    if (w > 0) out.push_back(',');
    out.push_back('[');
    const auto& tail = answer.window_tails[w];
    for (size_t i = 0; i < tail.size(); ++i) {
      if (i > 0) out.push_back(',');
      out.append("{\"hash\":\"");
      tail[i].hash.ToHex(hex);
      out.append(hex, sizeof(hex));
      out.append("\",\"size\":");
      append_u64(tail[i].size);
      out.push_back('}');
    }
    out.push_back(']');
  }
  out.append("]}");
  return out;
}

Result<std::string> BuildFileChunkHashesJson(const FileRecord& file, const XorbLookup& lookup,
                                             std::span<const ByteRange> dirty) {
  XET_ASSIGN_OR_RETURN(const FileChunkHashes answer, ComputeFileChunkHashes(file, lookup, dirty));
  return SerializeFileChunkHashes(answer);
}

}  // namespace xet
