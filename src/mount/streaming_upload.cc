#include "mount/streaming_upload.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <utility>

#include "common/errno_status.h"
#include "common/unique_fd.h"

namespace xet {

namespace {

// Pages behind the reader are written back in windows of this size and dropped two windows
// later, without waiting: by then that window's writeback has mostly finished, and the few
// pages still dirty or under writeback simply stay cached.
constexpr uint64_t kWritebackWindow = 32ull << 20;

}  // namespace

// Reads the staging file from its start as the writer extends it: waits while the reader
// has caught up, ends where the writer sealed it, fails once the writer abandoned it.
class StreamingUpload::Source final : public ByteSource {
 public:
  Source(Feed& feed, UniqueFd fd) : feed_(feed), fd_(std::move(fd)) {}

  Result<size_t> Read(std::span<uint8_t> buf) override {
    uint64_t available = 0;
    {
      MutexLock lock(feed_.mu);
      while (pos_ == feed_.available && !feed_.sealed && !feed_.abandoned) feed_.cv.Wait(feed_.mu);
      if (feed_.abandoned) return Status::Cancelled("the streamed file changed");
      available = feed_.available;
    }
    const size_t want = static_cast<size_t>(std::min<uint64_t>(buf.size(), available - pos_));
    if (want == 0) return size_t{0};  // sealed
    ssize_t n = -1;
    do {
      n = ::pread(fd_.get(), buf.data(), want, static_cast<off_t>(pos_));
    } while (n < 0 && errno == EINTR);
    if (n < 0) return StatusFromErrno("reading the staging file", errno);
    if (n == 0) return Status::IoError("the staging file is shorter than written");
    pos_ += static_cast<uint64_t>(n);
    ReleaseBehind();
    return static_cast<size_t>(n);
  }

 private:
  // Starts the writeback of each full window read, and drops the one two windows back.
  void ReleaseBehind() {
    while (pos_ - started_ >= kWritebackWindow) {
      (void)::sync_file_range(fd_.get(), static_cast<off_t>(started_),
                              static_cast<off_t>(kWritebackWindow), SYNC_FILE_RANGE_WRITE);
      started_ += kWritebackWindow;
      if (started_ >= dropped_ + 2 * kWritebackWindow) {
        (void)::posix_fadvise(fd_.get(), static_cast<off_t>(dropped_),
                              static_cast<off_t>(kWritebackWindow), POSIX_FADV_DONTNEED);
        dropped_ += kWritebackWindow;
      }
    }
  }

  Feed& feed_;
  UniqueFd fd_;
  uint64_t pos_ = 0;
  uint64_t started_ = 0;  // writeback started for [0, started_)
  uint64_t dropped_ = 0;  // dropped from the page cache: [0, dropped_)
};

StreamingUpload::StreamingUpload(CasClient& cas, UploadOptions options, const std::string& path,
                                 uint64_t available, std::atomic<int>& running)
    : running_(running) {
  running_ += 1;
  {
    MutexLock lock(feed_.mu);
    feed_.available = available;
  }
  thread_ = std::thread([this, &cas, options = std::move(options), path] {
    UploadItem item;
    item.name = path;
    item.open = [this, path]() -> Result<std::unique_ptr<ByteSource>> {
      const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
      if (fd < 0) return StatusFromErrno("opening " + path, errno);
      return std::unique_ptr<ByteSource>(new Source(feed_, UniqueFd(fd)));
    };
    Uploader uploader(cas, options);
    auto files = uploader.Upload(std::span<const UploadItem>(&item, 1));
    MutexLock lock(result_mu_);
    done_ = true;
    if (!files.ok()) {
      status_ = files.status();
    } else if (files->size() != 1) {
      status_ = Status::Internal("streaming upload: no result");
    } else {
      file_ = std::move((*files)[0]);
    }
  });
}

StreamingUpload::~StreamingUpload() {
  {
    MutexLock lock(feed_.mu);
    if (!feed_.sealed) feed_.abandoned = true;
    feed_.cv.NotifyAll();
  }
  if (thread_.joinable()) thread_.join();
  running_ -= 1;
}

void StreamingUpload::Extend(uint64_t end) {
  MutexLock lock(feed_.mu);
  feed_.available = std::max(feed_.available, end);
  feed_.cv.NotifyAll();
}

uint64_t StreamingUpload::end() const {
  MutexLock lock(feed_.mu);
  return feed_.available;
}

Result<UploadedFile> StreamingUpload::Finish() {
  {
    MutexLock lock(feed_.mu);
    if (feed_.abandoned) return Status::Cancelled("the streamed file changed");
    feed_.sealed = true;
    feed_.cv.NotifyAll();
  }
  if (thread_.joinable()) thread_.join();
  MutexLock lock(result_mu_);
  if (!done_) return Status::Internal("streaming upload: finished twice");
  done_ = false;
  if (!status_.ok()) return status_;
  return std::move(file_);
}

}  // namespace xet
