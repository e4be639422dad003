// How the index backends key bucket entries, and the listing cursor they hand out: shared by
// store/sqlite and store/postgres so both order, range-scan and page identically.
//
// Entry keys are the entry's path compared bytewise. An explicit directory entry is stored
// at its path + "/" (MarkerKey): no valid path ends in '/', so it never collides with a
// file, and it is the first key of the directory's range [DirLower, DirUpper), which holds
// exactly the keys that start with dir + "/" ('0' is the byte after '/').
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "common/result.h"
#include "store/bucket_records.h"

namespace xet {

inline std::string MarkerKey(std::string_view path) { return std::string(path) + "/"; }
inline std::string DirLower(std::string_view dir) { return std::string(dir) + "/"; }
inline std::string DirUpper(std::string_view dir) { return std::string(dir) + "0"; }

// "NAMESPACE/BUCKET", the bucket's scope.
std::string BucketFullName(std::string_view ns, std::string_view name);
// "NAMESPACE/BUCKET" split at its first '/'; nullopt without one.
std::optional<std::pair<std::string_view, std::string_view>> SplitBucketFullName(
    std::string_view full);
Status BucketNotFound(std::string_view ns, std::string_view name);

// Where a bucket listing resumes (Index::ListBuckets' `after`): the (namespace, name) pair
// to list strictly after. "NAMESPACE/BUCKET" is that bucket; a bare namespace is after every
// bucket in it ('\x7f' sorts after every valid bucket name); "" is before everything.
std::pair<std::string, std::string> BucketListingStart(std::string_view after);

// The record of a bucket created at `now_ms`: no files yet.
BucketRecord NewBucketRecord(std::string ns, std::string name, bool is_private, int64_t now_ms);

// A failed operation of a batch (its one-line error), and a successful one.
BucketOpResult BucketOpFailed(std::string error);
BucketOpResult BucketOpDone(uint64_t changed);

// Where a listing page stopped: after the entry stored at key `path` (a file, or in
// recursive listings a directory entry's key, path + "/"), or (non-recursive listings) after
// every entry below directory `path`. Encoded as lowercase hex of a kind byte ('f' or 'd')
// followed by the path, so it travels in URLs unescaped.
struct TreeCursor {
  bool after_directory = false;
  std::string path;
};

std::string EncodeTreeCursor(const TreeCursor& c);
// InvalidArgument("malformed listing cursor") unless `text` is what EncodeTreeCursor makes.
Result<TreeCursor> DecodeTreeCursor(std::string_view text);

}  // namespace xet
