#include "store/bucket_tree_walk.h"

#include <algorithm>
#include <utility>

#include "store/index.h"

namespace xet {

BucketTreeWalk::BucketTreeWalk(std::string dir, bool recursive, size_t limit)
    : dir_(std::move(dir)), recursive_(recursive), limit_(limit), lower_(dir_) {
  if (!dir_.empty()) upper_ = DirUpper(dir_.substr(0, dir_.size() - 1));
  page_.items.reserve(std::min<size_t>(limit, 4096));
}

Result<BucketTreeWalk> BucketTreeWalk::Begin(std::string_view prefix, bool recursive,
                                             std::string_view cursor, size_t limit) {
  if (limit == 0) return Status::InvalidArgument("listing limit must be at least 1");
  BucketTreeWalk walk(prefix.empty() ? std::string() : DirLower(prefix), recursive, limit);
  if (!cursor.empty()) {
    XET_ASSIGN_OR_RETURN(const TreeCursor resume, DecodeTreeCursor(cursor));
    XET_RETURN_IF_ERROR(walk.ResumeAfter(resume));
  }
  return walk;
}

Status BucketTreeWalk::ResumeAfter(const TreeCursor& cursor) {
  const Status bad = Status::InvalidArgument("listing cursor does not belong to this listing");
  if (!cursor.path.starts_with(dir_) || cursor.path.size() <= dir_.size()) return bad;
  if (cursor.after_directory && recursive_) return bad;
  if (!recursive_ && cursor.path.find('/', dir_.size()) != std::string::npos) return bad;
  resumed_ = true;
  if (cursor.after_directory) {
    lower_ = DirUpper(cursor.path);  // the first key past the directory's range
    lower_inclusive_ = true;
  } else {
    lower_ = cursor.path;
    lower_inclusive_ = false;
  }
  return Status::Ok();
}

BucketTreePage BucketTreeWalk::FilePage(BucketEntry file) const {
  BucketTreePage page;
  if (!resumed_) page.items.push_back({false, file.path, std::move(file)});
  return page;
}

Result<BucketTreeWalk::Next> BucketTreeWalk::Offer(
    std::string_view key, bool directory_entry, size_t posix_bytes,
    const std::function<Result<BucketEntry>()>& read_entry) {
  // The listed directory's own entry (its key is dir_) is not an item of it, and a read may
  // include an exclusive lower bound's own row.
  if (key.size() == dir_.size()) return Next::kMore;
  if (!lower_inclusive_ && key == lower_) return Next::kMore;
  // Another item exists: the page is full, and the cursor says where it stopped.
  if (page_.items.size() == limit_ || posix_bytes_ >= kMaxListingPosixBytes) {
    const BucketTreeItem& last = page_.items.back();
    page_.next_cursor = recursive_ && last.is_directory
                            ? EncodeTreeCursor({false, MarkerKey(last.path)})
                            : EncodeTreeCursor({last.is_directory, last.path});
    done_ = true;
    return Next::kFull;
  }
  const size_t slash = recursive_ ? std::string_view::npos : key.find('/', dir_.size());
  BucketTreeItem item;
  Next next = Next::kMore;
  if (slash == std::string_view::npos) {
    posix_bytes_ += posix_bytes;
    XET_ASSIGN_OR_RETURN(item.entry, read_entry());
    item.is_directory = directory_entry;
    item.path = item.entry.path;
  } else {
    // A subdirectory. Its own entry, if it has one, is the first key of its range.
    if (directory_entry && slash + 1 == key.size()) {
      posix_bytes_ += posix_bytes;
      XET_ASSIGN_OR_RETURN(item.entry, read_entry());
    }
    item.is_directory = true;
    item.path = std::string(key.substr(0, slash));
    lower_ = DirUpper(item.path);
    lower_inclusive_ = true;
    next = Next::kReseek;
  }
  page_.items.push_back(std::move(item));
  return next;
}

void BucketTreeWalk::ContinueAfter(std::string_view last_key) {
  lower_ = std::string(last_key);
  lower_inclusive_ = false;
}

}  // namespace xet
