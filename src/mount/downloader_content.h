// A ContentSource over the client's Downloader: every read asks for its own byte range.
// Simple and memory-light; the mount's default is the planned RangeReader.
#pragma once

#include <memory>

#include "client/download/downloader.h"
#include "mount/content_source.h"

namespace xet {

class DownloaderContent final : public ContentSource {
 public:
  // `cas` must outlive this object.
  DownloaderContent(CasClient& cas, DownloadOptions options);
  void Prefetch(const Hash& file, uint64_t size) override;
  std::unique_ptr<FileStream> Open(const Hash& file, uint64_t size) override;

 private:
  Downloader downloader_;
};

}  // namespace xet
