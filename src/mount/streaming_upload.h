// The upload of a staged file that is being written sequentially, run while it is written:
// a file written from empty by appends only is chunked, hashed, deduplicated and sent as
// its bytes reach the staging file, so its commit waits only for the tail instead of
// reading and uploading the whole staging file then (docs/bench-log/mount.md, "Streaming
// commit"). Nothing is registered here: the commit's batch still decides when the file
// becomes the remote version, so a crash loses at most uncommitted writes as before; the
// xorbs of an abandoned stream are merely unreferenced.
//
// Behind the upload, the staging file's bytes it has read are written back and dropped from
// the page cache, so a long sequential write keeps reusing a bounded set of pages.
//
// Thread-safe.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>

#include "client/upload/uploader.h"
#include "common/mutex.h"
#include "common/result.h"

namespace xet {

class StreamingUpload {
 public:
  // Starts uploading the staging file at `path`, whose bytes [0, available) are written,
  // on a thread of its own. Counts itself in `running` while it exists. `cas` and
  // `running` must outlive the object.
  StreamingUpload(CasClient& cas, UploadOptions options, const std::string& path,
                  uint64_t available, std::atomic<int>& running);
  // Abandons the upload unless Finish ran, and waits for its thread.
  ~StreamingUpload();
  StreamingUpload(const StreamingUpload&) = delete;
  StreamingUpload& operator=(const StreamingUpload&) = delete;

  // The staging file now holds bytes [0, end) (end >= end()).
  void Extend(uint64_t end);
  // The bytes the upload has been told about.
  uint64_t end() const;
  // The file is complete at end(): waits for the upload and returns it (once).
  Result<UploadedFile> Finish();

 private:
  class Source;  // the upload's reader of the staging file (streaming_upload.cc)
  // The shared state of the writer and the upload's reader.
  struct Feed {
    mutable Mutex mu;
    CondVar cv;
    uint64_t available GUARDED_BY(mu) = 0;
    bool sealed GUARDED_BY(mu) = false;     // no bytes past `available` will come
    bool abandoned GUARDED_BY(mu) = false;  // the reader fails at once
  };

  Feed feed_;
  std::atomic<int>& running_;
  Mutex result_mu_;
  bool done_ GUARDED_BY(result_mu_) = false;  // the upload ended: status_, and file_ if OK
  Status status_ GUARDED_BY(result_mu_);
  UploadedFile file_ GUARDED_BY(result_mu_);
  std::thread thread_;
};

}  // namespace xet
