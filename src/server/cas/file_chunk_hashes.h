// GET /v2/file-chunk-hashes/{file_id}: for a file and the byte ranges a client is about to
// rewrite ("dirty" ranges, header X-Range-Dirty), the chunk-aligned windows it must
// re-chunk, opaque merkle subtrees (format/merkle_subtree.h) summarizing the unchanged gaps
// around them, and the verification hash of every term that lies wholly in a gap. With
// these a client composes the edited file's hash and shard without touching the unchanged
// chunks. Pure: no I/O. Semantics follow xet-core's server model
// (xet_client/src/cas_client/chunk_window_builder.rs, build_file_chunk_hashes_response).
//
// The computation, over the file's chunks in order (terms expanded through their xorbs'
// chunk tables):
//  1. Dirty ranges (inclusive, as in the header) are sorted and overlapping or adjacent
//     ones merged, then clamped to [0, file size); ranges starting at or past the end are
//     dropped. None left: InvalidArgument (400).
//  2. A window opens at the first chunk overlapping a dirty range (so its start is that
//     chunk's start: windows are expanded outward to chunk boundaries) and covers every
//     chunk overlapping that range or a later one it reaches. A window then keeps growing
//     past its last dirty chunk until the chunker is known to re-synchronize: it ends after
//     the second of two consecutive clean chunks whose sizes both lie in
//     [2 * kMinChunkSize, kMaxChunkSize - kMinChunkSize) (xet-core's stable CDC boundary),
//     or at the end of the file. A dirty range reached while a window is open (including
//     during that extension) joins the window, so windows never share a chunk (two windows
//     may still touch, with an empty gap between them).
//  3. hashRanges has windows + 1 entries: the subtree of the clean chunks before the first
//     window, between consecutive windows, and after the last; null when that gap has no
//     chunks. A gap's subtree has at_start when it begins the file (only the first gap can)
//     and at_end only for the trailing gap.
//  4. gapVerification: for each term, in order, that overlaps no window, VerificationHash
//     of the term's chunk hashes (the value the file's shard carries for that term).
//  5. gapPieceVerification (a xetstore extension; stock clients ignore the field): for each
//     gap in order, for each term overlapping it in order, VerificationHash of the term's
//     chunks that lie in the gap. A term cut by a window edge thus gets the hash of its
//     part in the gap, so a client can reference that part (a shorter chunk range of the
//     same xorb) in the edited file's shard without reading it. For a term wholly in a gap
//     the entry equals its gapVerification entry.
//  6. windowTails (a xetstore extension, like 5): for each window, the hash and size of each
//     chunk of its extension past the last chunk overlapping a dirty range (the unchanged
//     chunks it ends with). A client whose re-chunking of a window meets one of those
//     chunks' boundaries knows the rest of the window without reading it.
//
// JSON (camelCase; field order as xet-core serializes FileChunkHashesResponse):
//   {"totalChunks":N,"fileSize":N,"windows":[{"dirtyByteRange":[START,END]},...],
//    "hashRanges":[null|SUBTREE,...],"gapVerification":["<xet hex>",...],
//    "gapPieceVerification":["<xet hex>",...],
//    "windowTails":[[{"hash":"<xet hex>","size":N},...],...]}
// dirtyByteRange ends are exclusive.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "format/hash.h"
#include "format/merkle_subtree.h"
#include "protocol/byte_range.h"
#include "server/cas/reconstruction.h"  // XorbLookup
#include "store/index_records.h"

namespace xet {

// A window [start, end) of file bytes, on chunk boundaries.
struct ChunkWindow {
  uint64_t start = 0;
  uint64_t end = 0;
  friend bool operator==(const ChunkWindow&, const ChunkWindow&) = default;
};

struct FileChunkHashes {
  uint64_t total_chunks = 0;
  uint64_t file_size = 0;
  std::vector<ChunkWindow> windows;                  // ascending, disjoint, non-empty
  std::vector<std::vector<ChunkInfo>> window_tails;  // one per window (6. above)
  // windows.size() + 1 entries; nullopt for an empty gap.
  std::vector<std::optional<MerkleHashSubtree>> hash_ranges;
  std::vector<Hash> gap_verification;
  std::vector<Hash> gap_piece_verification;
};

// True for a chunk size that, twice in a row, marks a boundary the chunker always
// re-synchronizes to: [2 * kMinChunkSize, kMaxChunkSize - kMinChunkSize).
bool IsStableChunkSize(uint64_t size);

// Parses the X-Range-Dirty header value (`bytes=A-B[,C-D]...`, inclusive ends, as
// ParseByteRanges accepts; open ends `A-` are allowed and clamp to the file). Ranges are
// returned as written. InvalidArgument when malformed or empty, ResourceExhausted beyond
// kMaxByteRanges ranges.
Result<std::vector<ByteRange>> ParseDirtyRangesHeader(std::string_view value);

// Computes the answer for `file` (see the file comment). `lookup` gives the chunk table of
// each xorb the terms name (called once per term).
// Errors:
//   InvalidArgument  no dirty ranges, a range with last < first, or no range left after
//                    clamping to the file (always so for an empty file).
//   Corruption       a term names an unknown xorb, a chunk range outside the xorb's table,
//                    an empty range, or an unpacked size that disagrees with the table; or
//                    the terms do not add up to file.size.
Result<FileChunkHashes> ComputeFileChunkHashes(const FileRecord& file, const XorbLookup& lookup,
                                               std::span<const ByteRange> dirty);

// The response body for `answer`.
std::string SerializeFileChunkHashes(const FileChunkHashes& answer);

// ComputeFileChunkHashes, then SerializeFileChunkHashes.
Result<std::string> BuildFileChunkHashesJson(const FileRecord& file, const XorbLookup& lookup,
                                             std::span<const ByteRange> dirty);

}  // namespace xet
