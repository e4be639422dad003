#include "client/upload/file_hasher.h"

#include <gtest/gtest.h>

#include "format/chunker.h"
#include "format/keyed_hash.h"
#include "support/test_support.h"

namespace xet {
namespace {

// Expected digest computed the direct way: whole-buffer chunking, one-shot hashes.
FileDigest DirectDigest(std::span<const uint8_t> data) {
  FileDigest d;
  uint64_t prev = 0;
  for (uint64_t end : ChunkBoundaries(data)) {
    d.chunks.push_back({ChunkHash(data.subspan(prev, end - prev)), end - prev});
    prev = end;
  }
  d.file_hash = FileHash(d.chunks);
  d.size = data.size();
  d.sha256 = Sha256Of(data);
  return d;
}

TEST(FileHasher, MatchesDirectComputationAcrossBlockBoundaries) {
  // 3 blocks and a bit, so chunks straddle the 4 MiB block edges.
  for (size_t n : {0ul, 1ul, 8191ul, 3 * kDigestBlockSize + 12345}) {
    const auto data = testing::TextLikeBytes(n, n + 1);
    MemorySource src(data);
    std::vector<ChunkInfo> streamed;
    FileHashOptions opts;
    opts.on_chunk = [&](const ChunkInfo& c) { streamed.push_back(c); };
    auto got = DigestSource(src, opts);
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    const FileDigest want = DirectDigest(data);
    EXPECT_EQ(got->chunks, want.chunks) << n;
    EXPECT_EQ(streamed, want.chunks) << n;
    EXPECT_EQ(got->file_hash, want.file_hash) << n;
    EXPECT_EQ(got->size, n);
    EXPECT_EQ(got->sha256, want.sha256) << n;
  }
}

TEST(FileHasher, EmptyFileHashIsZero) {
  MemorySource src({});
  auto got = DigestSource(src);
  ASSERT_TRUE(got.ok());
  EXPECT_TRUE(got->file_hash.IsZero());
  EXPECT_TRUE(got->chunks.empty());
  EXPECT_EQ(Sha256Hex(got->sha256),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

class FailingSource final : public ByteSource {
 public:
  explicit FailingSource(size_t fail_after) : fail_after_(fail_after) {}
  Result<size_t> Read(std::span<uint8_t> buf) override {
    if (served_ >= fail_after_) return Status::IoError("disk on fire");
    const size_t n = std::min(buf.size(), fail_after_ - served_);
    std::fill_n(buf.data(), n, uint8_t{1});
    served_ += n;
    return n;
  }

 private:
  size_t fail_after_, served_ = 0;
};

TEST(FileHasher, ReadErrorIsReturnedNotSwallowed) {
  for (size_t fail_after : {0ul, 100ul, 2 * kDigestBlockSize + 5}) {
    FailingSource src(fail_after);
    auto got = DigestSource(src);
    ASSERT_FALSE(got.ok());
    EXPECT_EQ(got.status().code(), Status::Code::kIoError);
    EXPECT_NE(got.status().message().find("disk on fire"), std::string::npos);
  }
}

TEST(FileSource, MissingFileIsNotFound) {
  auto src = OpenFileSource("/nonexistent/dir/file.bin");
  ASSERT_FALSE(src.ok());
  EXPECT_EQ(src.status().code(), Status::Code::kNotFound);
}

}  // namespace
}  // namespace xet
