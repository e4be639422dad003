#include "mount/staged_file.h"

#include <gtest/gtest.h>
#include <linux/magic.h>
#include <sys/vfs.h>

#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "support/server_process.h"

namespace xet {
namespace {

class StagedFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::MakeTempDir("staged-file");
    staging_ = std::make_unique<StagingDir>(dir_);
    remote_.resize(100000);
    std::mt19937 rng(1);
    for (auto& b : remote_) b = static_cast<uint8_t>(rng());
  }

  StagedFile::RemoteRead Remote() {
    return [this](uint64_t off, std::span<uint8_t> out) {
      EXPECT_LE(off + out.size(), remote_.size());
      std::memcpy(out.data(), remote_.data() + off, out.size());
      fetched_ += out.size();
      return Status::Ok();
    };
  }

  std::vector<uint8_t> ReadAll(StagedFile& f) {
    std::vector<uint8_t> out(f.size() + 10);
    auto n = f.Read(0, out, Remote());
    EXPECT_TRUE(n.ok());
    out.resize(n.ok() ? *n : 0);
    return out;
  }

  std::string dir_;
  std::unique_ptr<StagingDir> staging_;
  std::vector<uint8_t> remote_;
  uint64_t fetched_ = 0;
};

TEST_F(StagedFileTest, WriteFetchesNothingAndReadFetchesOnlyGaps) {
  auto f = StagedFile::Create(*staging_, remote_.size());
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  const std::vector<uint8_t> patch(1000, 0xAB);
  ASSERT_TRUE((*f)->Write(5000, patch).ok());
  EXPECT_EQ(fetched_, 0u);
  EXPECT_EQ((*f)->missing_bytes(), remote_.size() - patch.size());

  std::vector<uint8_t> buf(2000);
  auto n = (*f)->Read(4500, buf, Remote());
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, 2000u);
  EXPECT_EQ(fetched_, 1000u);  // [4500,5000) and [6000,6500), not the written bytes
  EXPECT_EQ(0, std::memcmp(buf.data(), remote_.data() + 4500, 500));
  EXPECT_EQ(buf[500], 0xAB);
  EXPECT_EQ(0, std::memcmp(buf.data() + 1500, remote_.data() + 6000, 500));

  ASSERT_TRUE((*f)->FetchAll(Remote()).ok());
  EXPECT_EQ((*f)->missing_bytes(), 0u);
  std::vector<uint8_t> expected = remote_;
  std::memcpy(expected.data() + 5000, patch.data(), patch.size());
  EXPECT_EQ(ReadAll(**f), expected);
}

TEST_F(StagedFileTest, WritePastTheEndLeavesZeros) {
  auto f = StagedFile::Create(*staging_, 0);
  ASSERT_TRUE(f.ok());
  const std::vector<uint8_t> tail = {1, 2, 3};
  ASSERT_TRUE((*f)->Write(10, tail).ok());
  EXPECT_EQ((*f)->size(), 13u);
  EXPECT_EQ(ReadAll(**f), (std::vector<uint8_t>{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3}));
  EXPECT_EQ(fetched_, 0u);
}

TEST_F(StagedFileTest, TruncateShrinkThenGrowReadsZerosNotTheOldBytes) {
  auto f = StagedFile::Create(*staging_, remote_.size());
  ASSERT_TRUE(f.ok());
  ASSERT_TRUE((*f)->Truncate(100).ok());
  ASSERT_TRUE((*f)->Truncate(200).ok());
  const auto all = ReadAll(**f);
  ASSERT_EQ(all.size(), 200u);
  EXPECT_EQ(0, std::memcmp(all.data(), remote_.data(), 100));
  for (size_t i = 100; i < 200; ++i) ASSERT_EQ(all[i], 0) << i;
  EXPECT_EQ(fetched_, 100u);
}

TEST_F(StagedFileTest, RemoteErrorsPropagateAndNothingIsMarkedLocal) {
  auto f = StagedFile::Create(*staging_, 1000);
  ASSERT_TRUE(f.ok());
  std::vector<uint8_t> buf(10);
  auto n = (*f)->Read(
      0, buf, [](uint64_t, std::span<uint8_t>) { return Status::Unavailable("server down"); });
  EXPECT_EQ(n.status().code(), Status::Code::kUnavailable);
  EXPECT_EQ((*f)->missing_bytes(), 1000u);
}

TEST_F(StagedFileTest, StagingFilesAreReusedEmptyAndRemovedWithTheirDirectory) {
  std::string path;
  {
    auto f = StagedFile::Create(*staging_, 10);
    ASSERT_TRUE(f.ok());
    ASSERT_TRUE((*f)->Write(0, std::vector<uint8_t>(100, 1)).ok());
    path = (*f)->path();
  }
  ASSERT_TRUE(std::filesystem::exists(path));
  EXPECT_EQ(std::filesystem::file_size(path), 0u);  // emptied when given back
  {
    auto again = StagedFile::Create(*staging_, 5);
    ASSERT_TRUE(again.ok());
    EXPECT_EQ((*again)->path(), path);  // the same file, handed out again
    std::vector<uint8_t> buf(5, 0xFF);
    auto n = (*again)->Read(0, buf, Remote());
    ASSERT_TRUE(n.ok());
    EXPECT_EQ(0, std::memcmp(buf.data(), remote_.data(), 5));  // not the old bytes
  }
  staging_.reset();
  EXPECT_FALSE(std::filesystem::exists(path));
  StagingDir missing(dir_ + "/missing/dir");
  EXPECT_FALSE(StagedFile::Create(missing, 0).ok());
}

TEST_F(StagedFileTest, ASizePastTheFileSystemsLimitIsResourceExhausted) {
  struct statfs fs {};
  ASSERT_EQ(::statfs(dir_.c_str(), &fs), 0);
  if (fs.f_type != EXT4_SUPER_MAGIC) GTEST_SKIP() << "needs ext4's 16 TiB file size limit";
  auto f = StagedFile::Create(*staging_, 0);
  ASSERT_TRUE(f.ok());
  const Status s = (*f)->Truncate(999'999'999'999'999ull);  // past ext4's limit
  EXPECT_EQ(s.code(), Status::Code::kResourceExhausted) << s.ToString();
}

}  // namespace
}  // namespace xet
