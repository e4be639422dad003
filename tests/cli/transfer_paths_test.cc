// Path mapping of `xetstore cp` (cli/transfer_paths.h).
#include "cli/transfer_paths.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "support/temp_dir.h"

namespace xet::cli {
namespace {

RemotePath Remote(const std::string& s) {
  auto p = ParseRemotePath(s);
  EXPECT_TRUE(p.ok()) << s;
  return *p;
}

void Write(const std::string& path, const std::string& data) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path, std::ios::binary) << data;
}

TEST(CliTransferPaths, JoinAndBaseName) {
  EXPECT_EQ(JoinBucketPath("", "c"), "c");
  EXPECT_EQ(JoinBucketPath("a/b", ""), "a/b");
  EXPECT_EQ(JoinBucketPath("a/b", "c/d"), "a/b/c/d");
  EXPECT_EQ(BaseName("a/b.txt"), "b.txt");
  EXPECT_EQ(BaseName("b.txt"), "b.txt");
  EXPECT_EQ(BaseName(""), "");
}

TEST(CliTransferPaths, RemoteFileTarget) {
  EXPECT_EQ(*RemoteFileTarget(Remote("hf://buckets/n/b/x/y.bin"), "a.bin"), "x/y.bin");
  EXPECT_EQ(*RemoteFileTarget(Remote("hf://buckets/n/b/x/"), "a.bin"), "x/a.bin");
  EXPECT_EQ(*RemoteFileTarget(Remote("hf://buckets/n/b"), "a.bin"), "a.bin");
  EXPECT_EQ(*RemoteFileTarget(Remote("hf://buckets/n/b/"), "a.bin"), "a.bin");
  // A file path needs no source name (stdin).
  EXPECT_EQ(*RemoteFileTarget(Remote("hf://buckets/n/b/x"), ""), "x");
  EXPECT_EQ(RemoteFileTarget(Remote("hf://buckets/n/b/x/"), "").status().code(),
            Status::Code::kInvalidArgument);
  EXPECT_EQ(RemoteFileTarget(Remote("hf://buckets/n/b/"), "bad\\name").status().code(),
            Status::Code::kInvalidArgument);
}

TEST(CliTransferPaths, StatLocalFile) {
  testing::TempDir dir;
  Write(dir.path() + "/f", "12345");
  struct stat st {};
  ASSERT_EQ(::stat((dir.path() + "/f").c_str(), &st), 0);
  auto f = StatLocalFile(dir.path() + "/f");
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->size, 5u);
  EXPECT_EQ(f->mtime_ms, int64_t{st.st_mtim.tv_sec} * 1000 + st.st_mtim.tv_nsec / 1'000'000);
  EXPECT_EQ(StatLocalFile(dir.path() + "/missing").status().code(), Status::Code::kNotFound);
  EXPECT_EQ(StatLocalFile(dir.path()).status().code(), Status::Code::kInvalidArgument);
  ASSERT_EQ(::mkfifo((dir.path() + "/fifo").c_str(), 0600), 0);
  EXPECT_EQ(StatLocalFile(dir.path() + "/fifo").status().code(), Status::Code::kInvalidArgument);
  // A symbolic link is followed to its file.
  std::filesystem::create_symlink(dir.path() + "/f", dir.path() + "/link");
  EXPECT_EQ(StatLocalFile(dir.path() + "/link")->size, 5u);
}

TEST(CliTransferPaths, LocalFileTarget) {
  testing::TempDir dir;
  EXPECT_EQ(LocalFileTarget(dir.path(), "a.bin"), dir.path() + "/a.bin");
  EXPECT_EQ(LocalFileTarget(dir.path() + "/new/", "a.bin"), dir.path() + "/new/a.bin");
  EXPECT_EQ(LocalFileTarget(dir.path() + "/x.bin", "a.bin"), dir.path() + "/x.bin");
}

TEST(CliTransferPaths, LocalPathBelowRefusesPathsLeavingTheRoot) {
  testing::TempDir dir;
  const std::string root = dir.path();
  EXPECT_EQ(*LocalPathBelow(root, "a/b.txt"), root + "/a/b.txt");
  EXPECT_EQ(*LocalPathBelow(root, "not/yet/there.txt"), root + "/not/yet/there.txt");
  for (const char* bad : {"../x", "a/../../x", "/etc/passwd", "a//b", "./a", "", "a/", "a\\b"}) {
    EXPECT_EQ(LocalPathBelow(root, bad).status().code(), Status::Code::kCorruption) << bad;
  }
  // A directory on the way that is a symbolic link is not written through.
  std::filesystem::create_directory(root + "/real");
  std::filesystem::create_directory_symlink("/tmp", root + "/link");
  EXPECT_TRUE(LocalPathBelow(root, "real/x").ok());
  EXPECT_EQ(LocalPathBelow(root, "link/x").status().code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(LocalPathBelow(root, "real/../link/x").status().code(), Status::Code::kCorruption);
  // A final component that is a link is fine: downloads rename over it, deletes unlink it.
  EXPECT_TRUE(LocalPathBelow(root, "link").ok());
  // The root itself may be a link.
  EXPECT_EQ(*LocalPathBelow(root + "/link", "x"), root + "/link/x");
}

}  // namespace
}  // namespace xet::cli
