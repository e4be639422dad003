// The JSON answer of GET /v2/file-chunk-hashes/{file_id} as the client reads it (the
// partial-edit upload, client/upload/partial_edit.h, uses it): for the byte ranges about
// to be rewritten, the chunk-aligned windows to re-chunk, a merkle subtree summarizing each
// unchanged gap between them, and verification hashes for the base file's terms (or parts
// of terms) in the gaps. The server side and the exact semantics are
// server/cas/file_chunk_hashes.h. Never throws: an answer that is not the expected document
// is Corruption with a message naming what is wrong.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "format/hash.h"
#include "format/merkle.h"
#include "format/merkle_subtree.h"

namespace xet {

// A window [start, end) of the base file's bytes, on chunk boundaries.
struct DirtyWindow {
  uint64_t start = 0;
  uint64_t end = 0;
  friend bool operator==(const DirtyWindow&, const DirtyWindow&) = default;
};

struct FileChunkHashesAnswer {
  uint64_t total_chunks = 0;
  uint64_t file_size = 0;
  std::vector<DirtyWindow> windows;  // ascending, disjoint, non-empty, inside the file
  // windows.size() + 1 entries: the gap before each window, then the trailing gap; nullopt
  // exactly for an empty gap.
  std::vector<std::optional<MerkleHashSubtree>> gaps;
  std::vector<Hash> gap_verification;  // terms wholly in a gap, in file order
  // xetstore extension: one hash per (gap, term overlapping it), in file order; nullopt
  // when the server does not send the field.
  std::optional<std::vector<Hash>> gap_piece_verification;
  // xetstore extension: per window, the unchanged chunks it ends with (hash and size); nullopt
  // when the server does not send the field.
  std::optional<std::vector<std::vector<ChunkInfo>>> window_tails;
};

// Parses and validates an answer about a file of `file_size` bytes. Besides the shape
// (every field present with its type; hashes as Xet hex strings), checks that fileSize is
// `file_size`, that windows are non-empty, ascending, disjoint and end within the file,
// that there is one gap entry per window plus one, null exactly when the gap is empty, and
// that each gap's subtree is well formed (consistent level counts), says it starts the file
// only for the first gap and ends it only for the last, and holds exactly the gap's bytes
// (the sizes of its nodes add up to the gap's length); and, when present, that there is one
// window tail per window, of chunks of 1 to kMaxChunkSize bytes that fit in their window.
// Corruption otherwise.
Result<FileChunkHashesAnswer> ParseFileChunkHashesJson(std::string_view body, uint64_t file_size);

}  // namespace xet
