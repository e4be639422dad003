// The mount's ContentSource over the client's RangeReader (client/download/range_reader.h):
// one reconstruction plan per file (fetched in the background at open), chunk-exact
// fetches, decoded chunks cached in memory and on disk, adaptive read-ahead per open file.
#pragma once

#include <memory>

#include "client/download/range_reader.h"
#include "mount/content_source.h"

namespace xet {

class RangeReaderContent final : public ContentSource {
 public:
  // `cas` must outlive this object.
  RangeReaderContent(CasClient& cas, RangeReaderOptions options);
  // OK, or why the chunk cache could not be opened.
  Status status() const { return reader_.status(); }
  void Prefetch(const Hash& file, uint64_t size) override;
  std::unique_ptr<FileStream> Open(const Hash& file, uint64_t size) override;
  std::unique_ptr<FileStream> OpenForRanges(const Hash& file, uint64_t size) override;

 private:
  RangeReader reader_;
};

}  // namespace xet
