#include "client/upload/partial_edit.h"

#include <algorithm>
#include <string>

#include "client/upload/file_hasher.h"
#include "format/chunker.h"
#include "format/merkle.h"
#include "format/merkle_subtree.h"
#include "format/shard_types.h"

namespace xet {
namespace {

using Span = std::pair<uint64_t, uint64_t>;  // [start, end)

Status Inconsistent(const std::string& what) { return Status::Corruption("partial edit: " + what); }

// One chunk of the base file, as its reconstruction lays it out.
struct BaseChunk {
  uint64_t start = 0;
  uint64_t size = 0;
  size_t term = 0;     // index into the reconstruction's terms
  uint32_t index = 0;  // chunk index in the term's xorb
};

struct BaseLayout {
  std::vector<BaseChunk> chunks;   // ascending
  std::vector<Hash> term_xorbs;    // per term
  std::vector<size_t> term_first;  // position of each term's first chunk
  std::vector<size_t> term_end;    // one past each term's last chunk
  uint64_t size = 0;

  // Position of the chunk starting at `offset` (chunks.size() for the end of the file), or
  // nullopt when no chunk boundary lies there.
  std::optional<size_t> BoundaryAt(uint64_t offset) const {
    if (offset == size) return chunks.size();
    auto it = std::lower_bound(chunks.begin(), chunks.end(), offset,
                               [](const BaseChunk& c, uint64_t off) { return c.start < off; });
    if (it == chunks.end() || it->start != offset) return std::nullopt;
    return static_cast<size_t>(it - chunks.begin());
  }
};

Result<BaseLayout> LayoutOf(const Reconstruction& r, uint64_t size) {
  if (r.offset_into_first_range != 0) return Inconsistent("reconstruction starts mid-term");
  BaseLayout base;
  base.size = size;
  uint64_t pos = 0;
  for (size_t t = 0; t < r.terms.size(); ++t) {
    const ReconTerm& term = r.terms[t];
    if (term.chunk_lengths.size() != size_t{term.chunk_end} - term.chunk_start) {
      return Inconsistent("reconstruction without chunk detail");
    }
    base.term_xorbs.push_back(term.xorb_hash);
    base.term_first.push_back(base.chunks.size());
    for (size_t k = 0; k < term.chunk_lengths.size(); ++k) {
      const uint64_t len = term.chunk_lengths[k];
      if (len == 0 || len > kMaxChunkSize) return Inconsistent("reconstruction chunk length");
      base.chunks.push_back({pos, len, t, term.chunk_start + static_cast<uint32_t>(k)});
      pos += len;
    }
    base.term_end.push_back(base.chunks.size());
  }
  if (pos != size) return Inconsistent("reconstruction does not add up to the file size");
  return base;
}

// A run of base chunks within one base term, as a shard term.
struct Piece {
  FileDataSequenceEntry term;
  size_t first = 0;  // base chunk positions [first, last)
  size_t last = 0;
};

// The base chunks [first, last) cut into one piece per base term they touch.
Result<std::vector<Piece>> BasePieces(const BaseLayout& base, size_t first, size_t last) {
  std::vector<Piece> out;
  size_t p = first;
  while (p < last) {
    const size_t t = base.chunks[p].term;
    const size_t end = std::min(last, base.term_end[t]);
    uint64_t bytes = 0;
    for (size_t q = p; q < end; ++q) bytes += base.chunks[q].size;
    if (bytes > UINT32_MAX) return Inconsistent("a term larger than 4 GiB");
    Piece piece;
    piece.term.cas_hash = base.term_xorbs[t];
    piece.term.unpacked_segment_bytes = static_cast<uint32_t>(bytes);
    piece.term.chunk_index_start = base.chunks[p].index;
    piece.term.chunk_index_end = base.chunks[end - 1].index + 1;
    piece.first = p;
    piece.last = end;
    out.push_back(piece);
    p = end;
  }
  return out;
}

// Sorted and merged (overlapping or touching spans joined), empty spans dropped.
std::vector<Span> Merged(std::vector<Span> spans) {
  std::sort(spans.begin(), spans.end());
  std::vector<Span> out;
  for (const Span& s : spans) {
    if (s.first >= s.second) continue;
    if (!out.empty() && s.first <= out.back().second) {
      out.back().second = std::max(out.back().second, s.second);
    } else {
      out.push_back(s);
    }
  }
  return out;
}

// Joins the spans separated by the smallest gaps until at most `max` remain.
std::vector<Span> Coalesced(std::vector<Span> spans, size_t max) {
  max = std::max<size_t>(1, max);
  if (spans.size() <= max) return spans;
  std::vector<uint64_t> gaps;
  for (size_t i = 1; i < spans.size(); ++i) gaps.push_back(spans[i].first - spans[i - 1].second);
  const size_t joins = spans.size() - max;
  std::nth_element(gaps.begin(), gaps.begin() + static_cast<ptrdiff_t>(joins - 1), gaps.end());
  const uint64_t threshold = gaps[joins - 1];
  std::vector<Span> out{spans[0]};
  for (size_t i = 1; i < spans.size(); ++i) {
    if (spans[i].first - out.back().second <= threshold) {
      out.back().second = spans[i].second;
    } else {
      out.push_back(spans[i]);
    }
  }
  return out;
}

bool Intersects(const std::vector<Span>& spans, uint64_t start, uint64_t end) {
  auto it = std::lower_bound(spans.begin(), spans.end(), start,
                             [](const Span& s, uint64_t v) { return s.second <= v; });
  return it != spans.end() && it->first < end;
}

bool Inside(const std::vector<DirtyWindow>& windows, const Span& s) {
  return std::any_of(windows.begin(), windows.end(),
                     [&](const DirtyWindow& w) { return w.start <= s.first && s.second <= w.end; });
}

Status ReadFully(ByteSource& source, std::span<uint8_t> out) {
  size_t done = 0;
  while (done < out.size()) {
    XET_ASSIGN_OR_RETURN(size_t n, source.Read(out.subspan(done)));
    if (n == 0) return Status::IoError("edited content ended early");
    done += n;
  }
  return Status::Ok();
}

// A window's part: base chunks found in place, or a fragment the Uploader chunks.
struct Part {
  bool base = false;
  size_t chunk_first = 0, chunk_last = 0;  // the window's chunks [first, last)
  size_t base_first = 0;                   // base position of chunk_first (base parts)
  size_t item = 0;                         // upload item (fragments)
};

// A term of the new file with its verification hash.
struct VerifiedTerm {
  FileDataSequenceEntry term;
  Hash verification;
};

struct WindowPlan {
  uint64_t start = 0, end = 0;  // new-content offsets
  std::vector<ChunkInfo> chunks;
  std::vector<Part> parts;
};

// Where a window's re-chunking may stop early: the unchanged base chunks the window ends
// with (from the server's windowTails), starting at offset `start`, and the end of the
// window's last changed byte.
struct WindowTail {
  std::span<const ChunkInfo> chunks;
  uint64_t start = 0;
  uint64_t changed_end = 0;
};

// Chunks [w.start, w.end) of the new content from the window's start, reading it in steps.
// With `tail`: at the first cut at or past tail->changed_end that is a tail chunk's start,
// the chunker is in step with the base (it cut where the base has a boundary, and the bytes
// from there on are the base's), so the rest of the window is the tail's chunks, unread.
// Otherwise the whole window is read, and its last chunk must end where chunking the whole
// file would cut (unless the window ends the file). Returns the bytes read.
Result<uint64_t> ChunkWindow(EditedContent& content, uint64_t new_size,
                             const std::optional<WindowTail>& tail, WindowPlan* w) {
  std::vector<uint64_t> tail_starts;
  if (tail) {
    uint64_t at = tail->start;
    for (const ChunkInfo& c : tail->chunks) {
      tail_starts.push_back(at);
      at += c.size;
    }
  }
  std::vector<ChunkInfo> chunks;
  uint64_t cut = w->start;
  std::optional<size_t> joined;  // the tail chunk the chunking met
  ChunkHashStream stream([&](const ChunkInfo& c) {
    if (joined) return;
    chunks.push_back(c);
    cut += c.size;
    if (tail && cut >= tail->changed_end) {
      const auto it = std::lower_bound(tail_starts.begin(), tail_starts.end(), cut);
      if (it != tail_starts.end() && *it == cut) {
        joined = static_cast<size_t>(it - tail_starts.begin());
      }
    }
  });
  // Small steps with a tail (it usually starts a chunk or two past the last change), large
  // ones without.
  std::vector<uint8_t> buf(tail ? kMaxChunkSize / 2 : 1 << 20);
  uint64_t pos = w->start;
  while (pos < w->end && !joined) {
    uint64_t end = std::min<uint64_t>(w->end, pos + buf.size());
    // Never read past the next tail boundary before knowing whether the chunking meets it
    // (a cut right at the end of the bytes read is seen: it depends on the bytes before it).
    const auto next = std::upper_bound(tail_starts.begin(), tail_starts.end(), pos);
    if (next != tail_starts.end() && *next < end) end = *next;
    const auto block = std::span<uint8_t>(buf).first(end - pos);
    XET_RETURN_IF_ERROR(content.Prepare(pos, end));
    XET_ASSIGN_OR_RETURN(auto source, content.Open(pos, end));
    XET_RETURN_IF_ERROR(ReadFully(*source, block));
    stream.Consume(block);
    pos = end;
  }
  if (joined) {
    chunks.insert(chunks.end(), tail->chunks.begin() + static_cast<ptrdiff_t>(*joined),
                  tail->chunks.end());
    w->chunks = std::move(chunks);
    return pos - w->start;
  }
  w->chunks = stream.Finish();
  if (w->end == new_size || w->chunks.empty()) return pos - w->start;
  const uint64_t last = w->chunks.back().size;
  XET_ASSIGN_OR_RETURN(auto source, content.Open(w->end - last, w->end));
  buf.resize(last);
  XET_RETURN_IF_ERROR(ReadFully(*source, buf));
  if (!EndsOnChunkerCut(buf)) {
    return Inconsistent("the chunker does not re-synchronize at the end of window [" +
                        std::to_string(w->start) + ", " + std::to_string(w->end) + ")");
  }
  return pos - w->start;
}

// The tail of window i, when the server sent it and it applies: the window keeps its end in
// the new content, that end is within the base's kept bytes, and the tail's chunks are the
// base's chunks there (by offset and length; their hashes are checked by the server when it
// registers the file). nullopt when it does not apply; Corruption when it contradicts the base.
Result<std::optional<WindowTail>> TailOf(const FileChunkHashesAnswer& answer, size_t i,
                                         const BaseLayout& base, const std::vector<Span>& changed,
                                         uint64_t base_kept, const WindowPlan& w) {
  if (!answer.window_tails || w.end != answer.windows[i].end || w.end > base_kept) {
    return std::optional<WindowTail>();
  }
  WindowTail tail;
  tail.chunks = (*answer.window_tails)[i];
  uint64_t bytes = 0;
  for (const ChunkInfo& c : tail.chunks) bytes += c.size;
  tail.start = w.end - bytes;
  uint64_t at = tail.start;
  for (const ChunkInfo& c : tail.chunks) {
    const auto p = base.BoundaryAt(at);
    if (!p || *p >= base.chunks.size() || base.chunks[*p].size != c.size) {
      return Inconsistent("a window tail is not the base's chunks");
    }
    at += c.size;
  }
  tail.changed_end = w.start;
  for (const Span& s : changed) {
    if (s.first < w.end && s.second > w.start) tail.changed_end = std::min(s.second, w.end);
  }
  if (tail.changed_end > tail.start) return Inconsistent("a window tail holds changed bytes");
  return std::optional<WindowTail>(tail);
}

// Splits a chunked window into runs of base chunks found in place (the same bytes, outside
// every changed range, at the same offset and of the same length as a base chunk: that
// chunk, already stored) and runs of other chunks (fragments to upload).
void SplitWindow(const BaseLayout& base, const std::vector<Span>& changed, uint64_t base_kept,
                 WindowPlan* window) {
  WindowPlan& w = *window;
  uint64_t pos = w.start;
  for (size_t j = 0; j < w.chunks.size(); ++j) {
    const uint64_t end = pos + w.chunks[j].size;
    std::optional<size_t> at;
    if (end <= base_kept && !Intersects(changed, pos, end)) {
      at = base.BoundaryAt(pos);
      if (at && (*at >= base.chunks.size() || base.chunks[*at].size != w.chunks[j].size)) {
        at.reset();
      }
    }
    Part* last = w.parts.empty() ? nullptr : &w.parts.back();
    const bool extends = last != nullptr && last->base == at.has_value() &&
                         (!at || last->base_first + (j - last->chunk_first) == *at);
    if (extends) {
      last->chunk_last = j + 1;
    } else {
      Part part;
      part.base = at.has_value();
      part.chunk_first = j;
      part.chunk_last = j + 1;
      part.base_first = at.value_or(0);
      w.parts.push_back(part);
    }
    pos = end;
  }
}

// The new file's hash: the gaps' subtrees merged with the windows' chunks.
Result<Hash> ComposeFileHash(const FileChunkHashesAnswer& answer,
                             const std::vector<WindowPlan>& plans, uint64_t new_size) {
  std::vector<MerkleHashSubtree> runs;
  for (size_t i = 0; i < plans.size(); ++i) {
    if (answer.gaps[i]) runs.push_back(*answer.gaps[i]);
    runs.push_back(MerkleHashSubtree::FromChunks(plans[i].start == 0, plans[i].chunks,
                                                 plans[i].end == new_size));
  }
  if (answer.gaps.back()) runs.push_back(*answer.gaps.back());
  auto merged = MerkleHashSubtree::Merge(runs);
  if (!merged.ok()) return Inconsistent("merging the gap subtrees: " + merged.status().message());
  const std::optional<Hash> root = merged->Root();
  if (!root) return Inconsistent("the merged subtrees do not close into a root");
  return FileHashFromRoot(*root);
}

// The gaps' terms: the base's terms cut to each gap (window edges are base chunk
// boundaries: checked before), verified by the server's gapPieceVerification, which must
// agree with its gapVerification for the terms wholly in a gap.
Result<std::vector<std::vector<VerifiedTerm>>> GapTerms(const FileChunkHashesAnswer& answer,
                                                        const BaseLayout& base) {
  std::vector<std::vector<VerifiedTerm>> gaps(answer.gaps.size());
  const std::vector<Hash>& piece_hashes = *answer.gap_piece_verification;
  size_t next_piece = 0;
  size_t next_whole = 0;
  for (size_t g = 0; g < answer.gaps.size(); ++g) {
    const uint64_t start = g == 0 ? 0 : answer.windows[g - 1].end;
    const uint64_t end = g == answer.windows.size() ? base.size : answer.windows[g].start;
    XET_ASSIGN_OR_RETURN(const auto pieces,
                         BasePieces(base, *base.BoundaryAt(start), *base.BoundaryAt(end)));
    for (const Piece& p : pieces) {
      if (next_piece >= piece_hashes.size()) return Inconsistent("too few gapPieceVerification");
      const Hash& h = piece_hashes[next_piece++];
      const size_t t = base.chunks[p.first].term;
      if (p.first == base.term_first[t] && p.last == base.term_end[t]) {
        if (next_whole >= answer.gap_verification.size() ||
            answer.gap_verification[next_whole++] != h) {
          return Inconsistent("gapVerification disagrees with gapPieceVerification");
        }
      }
      gaps[g].push_back({p.term, h});
    }
  }
  if (next_piece != piece_hashes.size() || next_whole != answer.gap_verification.size()) {
    return Inconsistent("too many gap verification entries");
  }
  return gaps;
}

// The new file's shard file info: the gaps' terms, and in each window the base runs' terms
// (verified with the window's own chunk hashes) and the fragments' (from the upload).
Result<FileInfo> ComposeFileInfo(const Hash& file_hash,
                                 const std::vector<std::vector<VerifiedTerm>>& gaps,
                                 const std::vector<WindowPlan>& plans, const BaseLayout& base,
                                 std::span<const UploadedFile> results) {
  FileInfo info;
  info.file_hash = file_hash;
  info.flags = kFileFlagWithVerification;
  const auto add = [&](const FileDataSequenceEntry& term, const Hash& verification) {
    info.terms.push_back(term);
    FileVerificationEntry v;
    v.range_hash = verification;
    info.verification.push_back(v);
  };
  for (size_t i = 0; i <= plans.size(); ++i) {
    for (const VerifiedTerm& t : gaps[i]) add(t.term, t.verification);
    if (i == plans.size()) break;
    const WindowPlan& w = plans[i];
    for (const Part& part : w.parts) {
      if (part.base) {
        const size_t n = part.chunk_last - part.chunk_first;
        XET_ASSIGN_OR_RETURN(auto pieces, BasePieces(base, part.base_first, part.base_first + n));
        for (const Piece& p : pieces) {
          std::vector<Hash> hashes;
          for (size_t q = p.first; q < p.last; ++q) {
            hashes.push_back(w.chunks[part.chunk_first + (q - part.base_first)].hash);
          }
          add(p.term, VerificationHash(hashes));
        }
        continue;
      }
      const UploadedFile& f = results[part.item];
      const auto want = std::span<const ChunkInfo>(w.chunks).subspan(
          part.chunk_first, part.chunk_last - part.chunk_first);
      if (!std::equal(f.chunks.begin(), f.chunks.end(), want.begin(), want.end()) ||
          f.terms.size() != f.verification.size()) {
        return Status::Internal("partial edit: a fragment chunked differently from its window");
      }
      for (size_t k = 0; k < f.terms.size(); ++k) add(f.terms[k], f.verification[k].range_hash);
    }
  }
  return info;
}

}  // namespace

Result<std::optional<UploadedFile>> UploadEdited(CasClient& cas, const FileEdit& edit,
                                                 EditedContent& content,
                                                 const PartialEditOptions& options,
                                                 PartialEditStats* stats) {
  using Skip = std::optional<UploadedFile>;
  if (edit.base_kept > edit.base_size || edit.base_kept > edit.new_size) {
    return Status::InvalidArgument("partial edit: base_kept past the base or the new size");
  }
  if (edit.new_size == 0 || edit.base_kept == 0 || edit.base_size < options.min_base_size) {
    return Skip();
  }
  // What may differ, in base offsets: the changed ranges within the kept bytes, and the
  // base's tail from its last kept byte when the file was truncated or grown.
  std::vector<Span> changed;
  for (const Span& s : edit.changed) {
    if (s.first >= s.second || s.second > edit.new_size) {
      return Status::InvalidArgument("partial edit: changed range outside the new content");
    }
    changed.emplace_back(s.first, std::min(s.second, edit.base_kept));
  }
  changed = Merged(std::move(changed));
  uint64_t changed_bytes = 0;
  for (const Span& s : changed) changed_bytes += s.second - s.first;
  const bool tail_changed = edit.new_size != edit.base_size || edit.base_kept != edit.base_size;
  std::vector<Span> dirty = changed;
  if (tail_changed) dirty.emplace_back(edit.base_kept - 1, edit.base_size);
  dirty = Merged(std::move(dirty));
  if (dirty.empty()) {
    // Nothing changed: the base is the file.
    return Skip(UploadedFile{edit.base_hash, edit.base_size, {}});
  }
  if (static_cast<double>(changed_bytes) >
      options.max_changed_fraction * static_cast<double>(edit.base_size)) {
    return Skip();
  }
  dirty = Coalesced(std::move(dirty), options.max_dirty_ranges);

  std::vector<ByteRange> request;
  for (const Span& s : dirty) request.push_back({s.first, s.second - 1});
  XET_ASSIGN_OR_RETURN(const FileChunkHashesAnswer answer,
                       cas.GetFileChunkHashes(edit.base_hash, edit.base_size, request));
  if (!answer.gap_piece_verification) {
    return Status::Unimplemented("partial edit: the server sends no gapPieceVerification");
  }
  for (const Span& s : dirty) {
    if (!Inside(answer.windows, s)) return Inconsistent("a dirty range outside every window");
  }
  if (answer.gaps.back().has_value() && tail_changed) {
    return Inconsistent("the last window does not reach the end of the changed base");
  }
  XET_ASSIGN_OR_RETURN(const Reconstruction recon,
                       cas.GetReconstruction(edit.base_hash, std::nullopt, /*chunk_detail=*/true));
  XET_ASSIGN_OR_RETURN(const BaseLayout base, LayoutOf(recon, edit.base_size));
  if (answer.total_chunks != base.chunks.size()) {
    return Inconsistent("chunk count differs from the reconstruction");
  }
  for (const DirtyWindow& w : answer.windows) {
    if (!base.BoundaryAt(w.start) || !base.BoundaryAt(w.end)) {
      return Inconsistent("a window edge is not a chunk boundary of the base");
    }
  }

  XET_ASSIGN_OR_RETURN(const auto gaps, GapTerms(answer, base));

  // The windows in new-content offsets, chunked, split into base runs and fragments.
  std::vector<WindowPlan> plans(answer.windows.size());
  std::vector<UploadItem> items;
  PartialEditStats local_stats;
  local_stats.windows = plans.size();
  for (size_t i = 0; i < plans.size(); ++i) {
    WindowPlan& w = plans[i];
    w.start = answer.windows[i].start;
    w.end = answer.windows[i].end == edit.base_size ? edit.new_size : answer.windows[i].end;
    std::optional<WindowTail> tail;
    if (options.use_window_tails) {
      XET_ASSIGN_OR_RETURN(tail, TailOf(answer, i, base, changed, edit.base_kept, w));
    }
    XET_ASSIGN_OR_RETURN(const uint64_t read, ChunkWindow(content, edit.new_size, tail, &w));
    local_stats.window_bytes += read;
    SplitWindow(base, changed, edit.base_kept, &w);
    uint64_t pos = w.start;
    for (Part& part : w.parts) {
      uint64_t bytes = 0;
      for (size_t j = part.chunk_first; j < part.chunk_last; ++j) bytes += w.chunks[j].size;
      if (!part.base) {
        part.item = items.size();
        UploadItem item;
        item.name = "window bytes " + std::to_string(pos) + "-" + std::to_string(pos + bytes);
        item.size_hint = bytes;
        item.fragment = true;
        item.open = [&content, start = pos, end = pos + bytes] { return content.Open(start, end); };
        items.push_back(std::move(item));
        local_stats.fragment_bytes += bytes;
      }
      pos += bytes;
    }
  }

  XET_ASSIGN_OR_RETURN(const Hash file_hash, ComposeFileHash(answer, plans, edit.new_size));

  const auto compose = [&](std::span<const UploadedFile> results) -> Result<std::vector<FileInfo>> {
    XET_ASSIGN_OR_RETURN(FileInfo info, ComposeFileInfo(file_hash, gaps, plans, base, results));
    if (info.size() != edit.new_size) {
      return Status::Internal("partial edit: composed terms do not add up to the new size");
    }
    return std::vector<FileInfo>{std::move(info)};
  };

  Uploader uploader(cas, options.upload);
  XET_RETURN_IF_ERROR(uploader.Upload(items, compose).status());
  if (stats) *stats = local_stats;
  return Skip(UploadedFile{file_hash, edit.new_size, {}});
}

}  // namespace xet
