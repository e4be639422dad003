// The private records of BucketFs (mount/bucket_fs.h): one FileState per file that is
// open or has changes waiting for their commit, one Handle per open file, one DirHandle
// per open directory. Included by BucketFs's own sources only.
#pragma once

#include <atomic>
#include <memory>
#include <vector>

#include "common/mutex.h"
#include "mount/bucket_fs.h"
#include "mount/streaming_upload.h"

namespace xet {

struct BucketFs::FileState {
  // A file whose committed version is (hash, size_bytes). Built before it is shared, so
  // without the lock (taking it under BucketFs::mu_ would order mu_ before it).
  FileState(Ino i, const Hash& hash, uint64_t size_bytes) NO_THREAD_SAFETY_ANALYSIS
      : ino(i),
        base_hash(hash),
        base_size(size_bytes),
        size(size_bytes) {}
  const Ino ino;
  Mutex mu;
  CondVar changed;
  // The committed version this file's content starts from.
  Hash base_hash GUARDED_BY(mu);
  uint64_t base_size GUARDED_BY(mu) = 0;
  // Written content, staged until committed (null: the content is the committed version).
  std::unique_ptr<StagedFile> staged GUARDED_BY(mu);
  uint64_t version GUARDED_BY(mu) = 0;            // bumped by every change of the content
  uint64_t committed_version GUARDED_BY(mu) = 0;  // the last version committed
  Status commit_error GUARDED_BY(mu);             // why the last commit failed, if it did
  uint64_t commit_attempts GUARDED_BY(mu) = 0;    // finished commit attempts
  // A close queued the commit of the content as it was then: writes wait until that commit
  // ran, so it never takes a version the next writer is in the middle of.
  bool commit_pending GUARDED_BY(mu) = false;
  // The staged size, readable without `mu` (stat must not wait for a running commit).
  std::atomic<uint64_t> size{0};
  std::atomic<bool> has_staged{false};
  // Open handles and running operations that need this state to stay the file's; changed
  // only under BucketFs::mu_ (the state is dropped only when none remain).
  std::atomic<int> pins{0};
  // Whether the staged content was only ever appended to since it was empty with no
  // remote bytes (what a streaming upload needs).
  bool appending GUARDED_BY(mu) = false;
  // The upload of that content running while it is written (mount/streaming_upload.h);
  // dropped by any other change. Destroyed before `staged` is.
  std::unique_ptr<StreamingUpload> stream GUARDED_BY(mu);
  // Written through a descriptor that bypasses the kernel's page cache since the last
  // commit: what the kernel cached may be older than the content.
  bool page_cache_stale GUARDED_BY(mu) = false;
  // Reads of the committed version for filling a staged file's gaps.
  std::shared_ptr<FileStream> base_stream GUARDED_BY(mu);

  bool dirty() const REQUIRES(mu) { return version != committed_version; }
};

struct BucketFs::Handle {
  std::shared_ptr<FileState> state;
  int flags = 0;
  bool direct = false;             // bypasses the kernel's page cache (BucketFs::BypassesPageCache)
  std::atomic<bool> wrote{false};  // set by concurrent writes
  // The committed version the descriptor opened (read while the file is not staged).
  Hash version_hash;
  uint64_t version_size = 0;
  Mutex mu;
  std::shared_ptr<FileStream> stream GUARDED_BY(mu);  // reads of that version, made lazily
};

struct BucketFs::DirHandle {
  std::vector<DirEntry> entries;
};

}  // namespace xet
