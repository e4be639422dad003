#include "mount/range_reader_content.h"

#include <utility>

namespace xet {

namespace {

class ReaderStream final : public FileStream {
 public:
  explicit ReaderStream(std::unique_ptr<RangeReader::Stream> stream) : stream_(std::move(stream)) {}
  Result<size_t> Read(uint64_t offset, std::span<uint8_t> out) override {
    return stream_->Read(offset, out);
  }

 private:
  std::unique_ptr<RangeReader::Stream> stream_;
};

}  // namespace

RangeReaderContent::RangeReaderContent(CasClient& cas, RangeReaderOptions options)
    : reader_(cas, std::move(options)) {}

void RangeReaderContent::Prefetch(const Hash& file, uint64_t size) {
  reader_.PrefetchPlan(file, size);
}

std::unique_ptr<FileStream> RangeReaderContent::Open(const Hash& file, uint64_t size) {
  return std::make_unique<ReaderStream>(reader_.Open(file, size));
}

std::unique_ptr<FileStream> RangeReaderContent::OpenForRanges(const Hash& file, uint64_t size) {
  return std::make_unique<ReaderStream>(reader_.Open(file, size, /*read_ahead=*/false));
}

}  // namespace xet
