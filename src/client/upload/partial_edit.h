// Uploading an edited version of a file without reading or sending its unchanged bytes
// (the client side of GET /v2/file-chunk-hashes, server/cas/file_chunk_hashes.h).
//
// Given the base version (hash, size) and which byte ranges of the new content may differ
// from it, UploadEdited asks the server for the chunk-aligned windows around those ranges
// and merkle summaries of the unchanged gaps between them, then:
//  - reads only the windows' new content (EditedContent fetches the window bytes that are
//    still the base's) and chunks each window from its start, until the chunking meets a
//    boundary of the unchanged base chunks the window ends with (the server's windowTails:
//    the rest of the window is those chunks, unread), or else to the window's end, checking
//    that its last chunk ends where chunking the whole new file would cut; either way the
//    new file's chunks are the base's in the gaps and the windows' elsewhere;
//  - uploads, through one Uploader session, only the windows' chunks that are not base
//    chunks at the same place (runs of them as fragments, deduplicated as usual);
//  - composes the new file's hash from the gap subtrees and the windows' chunks, and its
//    shard file info from the base's terms cut to the gaps (verification hashes from the
//    server's gapPieceVerification), the base chunks found in windows, and the fragments'
//    terms; the server checks both against its stored chunks when it registers the shard.
// The file hash equals that of a full upload of the same bytes (the Xet file hash depends
// only on the content). The composed file carries no SHA-256.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "client/cas/cas_client.h"
#include "client/upload/uploader.h"
#include "common/byte_source.h"
#include "common/result.h"
#include "format/hash.h"

namespace xet {

// The new content of a file being uploaded as an edit of a base version.
class EditedContent {
 public:
  virtual ~EditedContent() = default;
  // Makes [start, end) of the new content readable through Open, fetching bytes that are
  // still only the base's. Called on UploadEdited's thread, one range at a time.
  virtual Status Prepare(uint64_t start, uint64_t end) = 0;
  // A reader of the prepared range [start, end) of the new content. May be called from any
  // thread, several at once.
  virtual Result<std::unique_ptr<ByteSource>> Open(uint64_t start, uint64_t end) = 0;
};

// What changed between the base and the new content. The new content is the base's bytes
// [0, base_kept) at the same offsets, except where `changed` says they may differ, and then
// bytes [base_kept, new_size) that are all new (a file truncated to base_kept then grown,
// or appended to: base_kept = base_size).
struct FileEdit {
  Hash base_hash;
  uint64_t base_size = 0;
  uint64_t base_kept = 0;  // <= base_size and <= new_size
  uint64_t new_size = 0;
  // Half-open ranges [start, end) of the new content that may differ from the base:
  // ascending, disjoint, within [0, new_size). Ranges past base_kept may be omitted.
  std::vector<std::pair<uint64_t, uint64_t>> changed;
};

struct PartialEditOptions {
  uint64_t min_base_size = 8ull << 20;  // smaller bases are uploaded whole
  // Changed base bytes above this fraction of the base: uploaded whole.
  double max_changed_fraction = 0.5;
  // Dirty ranges sent to the server at most (nearest ones merged beyond it).
  size_t max_dirty_ranges = 256;
  // Stop re-chunking a window where it meets the unchanged chunks it ends with (the
  // server's windowTails); false reads every window whole.
  bool use_window_tails = true;
  UploadOptions upload;  // the session that uploads the windows' new chunks
};

// Byte counts of one partial upload (for tests and logs).
struct PartialEditStats {
  uint64_t window_bytes = 0;    // new-content bytes read (of the windows)
  uint64_t fragment_bytes = 0;  // of them, handed to the Uploader (not base chunks)
  size_t windows = 0;
};

// Uploads the new content as an edit of the base and registers it as a file (visible to the
// CAS token's scope, like any upload; naming it in a bucket is the caller's job).
// Returns the base itself when nothing changed, and nullopt without uploading anything
// when the partial path does not apply (a base below min_base_size, too much changed,
// nothing left of the base, an empty new file); the caller then uploads the file whole. Errors:
// NotFound when the server does not know the base or lacks the route (or the gapPieceVerification
// extension: Unimplemented); Corruption when an answer is malformed or inconsistent with the base's
// reconstruction, or a window does not re-synchronize the chunker; and any error of reading
// `content` or of the upload. After any error the caller may upload the file whole: nothing was
// registered.
Result<std::optional<UploadedFile>> UploadEdited(CasClient& cas, const FileEdit& edit,
                                                 EditedContent& content,
                                                 const PartialEditOptions& options,
                                                 PartialEditStats* stats = nullptr);

}  // namespace xet
