// Parsing of a bucket batch body (POST /api/buckets/NS/NAME/batch): NDJSON, one JSON
// object per line, each an operation:
//   {"type": "addFile", "path", "xetHash", "mtime"? (unix ms), "contentType"?, "posix"?}
//   {"type": "deleteFile", "path"}
//   {"type": "copyFile", "path", "xetHash", "sourceRepoType": "bucket", "sourceRepoId"}
//   {"type": "copyPrefix", "from", "to", "sourceRepoId"?}   (xetstore extension)
//   {"type": "movePrefix", "from", "to", "noReplace"?}      (xetstore extension)
//   {"type": "addDirectory", "path", "mtime"?, "posix"?}    (xetstore extension)
//   {"type": "setMetadata", "path", "mtime"?, "posix"}      (xetstore extension)
// "posix" is protocol/posix_metadata.h's object; its type bits must fit the operation (a
// regular file, a symbolic link or a special file (FIFO, socket, device node) for addFile,
// where a symbolic link's or special file's xetHash is the empty file's, 64 zeros; a
// directory for addDirectory).
// Two kinds of errors: a body that is not NDJSON objects fails as a whole (nothing is
// applied); an object that is not a valid operation (unknown type, missing or mistyped
// field, invalid path or hash, copy from a non-bucket repository, a move into itself) fails
// alone and is reported in the answer's "failed" list.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "store/bucket_records.h"

namespace xet {

inline constexpr size_t kMaxBatchOps = 100'000;
// Longest line accepted (a valid operation needs a few KiB plus its "posix" object, at most
// 128 KiB as encoded: two 1 KiB paths, even fully \u-escaped, a hash, a content type and a
// posix object with room for escapes). Bounds the JSON DOM built per line.
inline constexpr size_t kMaxBatchLineBytes = 256 << 10;
// Longest "contentType" accepted; it is echoed as a response header.
inline constexpr size_t kMaxContentTypeBytes = 255;

// One line of the body, in order.
struct BatchRequestOp {
  // What the answer reports for this operation: its "path" (for prefix operations its
  // "from"), or "" when neither is a string.
  std::string path;
  // The validated operation (paths checked with protocol/bucket_path.h; source_bucket is the
  // full name of another bucket, or empty for this one); unset when the line is invalid.
  std::optional<BucketOp> op;
  std::string error;  // why the line is invalid, when !op
};

// Parses `body` for the bucket named `bucket_full_name` ("NS/NAME"). Blank lines are
// skipped; a trailing '\r' is ignored. InvalidArgument when a line is not a JSON object
// (or nests deeper than server/json_parse.h allows) or is longer than kMaxBatchLineBytes;
// ResourceExhausted when there are more than `max_ops` operations. Memory: the result has
// room for exactly its operations (blank lines cost none), and each line's JSON is freed
// once it is read.
Result<std::vector<BatchRequestOp>> ParseBatchRequest(std::string_view body,
                                                      std::string_view bucket_full_name,
                                                      size_t max_ops = kMaxBatchOps);

}  // namespace xet
