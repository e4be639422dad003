// One page of a bucket listing (Index::ListBucketTree), as both index backends build it:
// which key range to read next and how the rows read fold into the page's items. The
// backend runs the reads; this class decides what they are and what the rows become.
//
// A listing of directory `prefix` reads the keys of its range in order (bucket_keys.h). A
// recursive listing makes every key an item: files, and explicit directory entries as
// directories. A non-recursive one makes a file directly below the prefix an item, and each
// subdirectory one directory item (with its explicit entry when it has one), after which
// the walk seeks past the subdirectory's range instead of reading the keys inside it.
//
//   XET_ASSIGN_OR_RETURN(BucketTreeWalk walk, BucketTreeWalk::Begin(prefix, rec, cursor, n));
//   while (!walk.done()) {
//     for each row of "keys from walk.lower() (inclusive if walk.lower_inclusive()) below
//                      walk.upper() (if set), in key order":
//       XET_ASSIGN_OR_RETURN(auto next, walk.Offer(key, is_dir_entry, posix_size, read));
//       if (next != BucketTreeWalk::Next::kMore) break;
//     if the rows ran out: walk.EndOfRange(); or, a bounded read that may have stopped short:
//       walk.ContinueAfter(last_key);
//   }
//   return walk.TakePage();
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "common/result.h"
#include "store/bucket_keys.h"
#include "store/bucket_records.h"

namespace xet {

class BucketTreeWalk {
 public:
  // What the backend does after offering a row.
  enum class Next {
    kMore,    // offer the next row of the current read
    kReseek,  // stop this read and start another at lower(): the walk skipped a subdirectory
    kFull,    // stop reading: the page is complete (done() is true)
  };

  // A walk of the listing of `prefix` ("" = the whole bucket; otherwise a path without a
  // trailing '/'), `limit` items per page, starting at the beginning or (non-empty
  // `cursor`) after the cursor. InvalidArgument when `limit` is 0, or the cursor is not one
  // EncodeTreeCursor made or belongs to another listing.
  static Result<BucketTreeWalk> Begin(std::string_view prefix, bool recursive,
                                      std::string_view cursor, size_t limit);

  // The page when `prefix` names a file: that file alone, or nothing when resuming (that
  // page has no next cursor).
  BucketTreePage FilePage(BucketEntry file) const;

  // The range of the next read: keys from lower(), inclusive when lower_inclusive(), up to
  // upper() exclusive when set.
  const std::string& lower() const { return lower_; }
  bool lower_inclusive() const { return lower_inclusive_; }
  const std::optional<std::string>& upper() const { return upper_; }

  // Takes the next row of the current read (rows in key order, none before lower()): its
  // key, whether it is an explicit directory entry, and the size of its POSIX metadata.
  // `read_entry` decodes the row; it is called only when the item carries the entry, and its
  // error is returned. Requires !done().
  Result<Next> Offer(std::string_view key, bool directory_entry, size_t posix_bytes,
                     const std::function<Result<BucketEntry>()>& read_entry);

  // The current read ended because the range has no more keys: the page is complete.
  void EndOfRange() { done_ = true; }
  // The current read ended at its own row limit after `last_key`: the next read starts
  // after that key. A read that may include an exclusive lower bound's own row (which Offer
  // passes over) must ask for at least 2 rows, or it may never get past that row.
  void ContinueAfter(std::string_view last_key);

  // True once the page is complete (EndOfRange, or Offer returned kFull).
  bool done() const { return done_; }
  // The page; call once, when done().
  BucketTreePage TakePage() { return std::move(page_); }

 private:
  BucketTreeWalk(std::string dir, bool recursive, size_t limit);
  Status ResumeAfter(const TreeCursor& cursor);

  std::string dir_;  // "" or the listed directory + "/"
  bool recursive_;
  size_t limit_;
  bool resumed_ = false;
  std::string lower_;
  bool lower_inclusive_ = true;
  std::optional<std::string> upper_;
  size_t posix_bytes_ = 0;  // of the page's items so far: bounds the page's memory
  BucketTreePage page_;
  bool done_ = false;
};

}  // namespace xet
