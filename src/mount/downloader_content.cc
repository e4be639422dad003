#include "mount/downloader_content.h"

#include <algorithm>
#include <cstring>

namespace xet {

namespace {

class DownloaderStream final : public FileStream {
 public:
  DownloaderStream(Downloader& d, const Hash& file, uint64_t size)
      : downloader_(d), file_(file), size_(size) {}

  Result<size_t> Read(uint64_t offset, std::span<uint8_t> out) override {
    if (offset >= size_ || out.empty()) return size_t{0};
    const uint64_t n = std::min<uint64_t>(out.size(), size_ - offset);
    size_t got = 0;
    XET_RETURN_IF_ERROR(
        downloader_.DownloadRange(file_, offset, offset + n - 1, [&](std::string_view bytes) {
          const size_t take = std::min(bytes.size(), static_cast<size_t>(n) - got);
          std::memcpy(out.data() + got, bytes.data(), take);
          got += take;
          return true;
        }));
    return got;
  }

 private:
  Downloader& downloader_;
  Hash file_;
  uint64_t size_;
};

}  // namespace

DownloaderContent::DownloaderContent(CasClient& cas, DownloadOptions options)
    : downloader_(cas, std::move(options)) {}

void DownloaderContent::Prefetch(const Hash&, uint64_t) {}

std::unique_ptr<FileStream> DownloaderContent::Open(const Hash& file, uint64_t size) {
  return std::make_unique<DownloaderStream>(downloader_, file, size);
}

}  // namespace xet
