#include "client/sync/local_tree.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/capability.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "support/temp_dir.h"
#include "support/test_support.h"

namespace xet {
namespace {

namespace fs = std::filesystem;

void WriteFile(const std::string& path, const std::string& content) {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream(path, std::ios::binary) << content;
}

// Sets a file's mtime to `sec` seconds and `nsec` nanoseconds (without following links).
void SetMtime(const std::string& path, time_t sec, long nsec) {
  const struct timespec times[2] = {{sec, nsec}, {sec, nsec}};
  ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), times, AT_SYMLINK_NOFOLLOW), 0) << path;
}

std::vector<std::string> SortedPaths(const LocalTree& tree) {
  std::vector<std::string> paths;
  for (const auto& f : tree.files) paths.push_back(f.path);
  std::sort(paths.begin(), paths.end());
  return paths;
}

const SyncFile* Find(const LocalTree& tree, const std::string& path) {
  for (const auto& f : tree.files) {
    if (f.path == path) return &f;
  }
  return nullptr;
}

TEST(LocalTreeTest, ListsFilesRecursivelyWithSizeAndMillisecondMtime) {
  testing::TempDir dir;
  const std::string root = dir.path();
  WriteFile(root + "/a.txt", "hello");
  WriteFile(root + "/sub/deeper/b.bin", std::string(1000, 'x'));
  WriteFile(root + "/sub/empty", "");
  fs::create_directories(root + "/empty-dir");
  SetMtime(root + "/a.txt", 1'700'000'000, 123'999'999);  // rounds down to ...123 ms
  SetMtime(root + "/sub/deeper/b.bin", 5, 0);

  auto tree = ListLocalTree(root);
  ASSERT_TRUE(tree.ok()) << tree.status().ToString();
  EXPECT_EQ(SortedPaths(*tree),
            (std::vector<std::string>{"a.txt", "sub/deeper/b.bin", "sub/empty"}));
  EXPECT_TRUE(tree->skipped.empty());
  const SyncFile* a = Find(*tree, "a.txt");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->size, 5u);
  EXPECT_EQ(a->mtime_ms, 1'700'000'000'123);
  EXPECT_FALSE(a->xet_hash.has_value());
  const SyncFile* b = Find(*tree, "sub/deeper/b.bin");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->size, 1000u);
  EXPECT_EQ(b->mtime_ms, 5000);
}

TEST(LocalTreeTest, FollowsFileLinksButNotDirectoryLinks) {
  testing::TempDir dir;
  testing::TempDir outside;
  const std::string root = dir.path();
  WriteFile(outside.path() + "/target.bin", "0123456789");
  WriteFile(outside.path() + "/d/inner", "z");
  SetMtime(outside.path() + "/target.bin", 42, 0);
  fs::create_symlink(outside.path() + "/target.bin", root + "/link.bin");
  fs::create_directory_symlink(outside.path() + "/d", root + "/dirlink");
  fs::create_symlink(root + "/nowhere", root + "/dangling");
  ASSERT_EQ(::mkfifo((root + "/fifo").c_str(), 0600), 0);

  auto tree = ListLocalTree(root);
  ASSERT_TRUE(tree.ok()) << tree.status().ToString();
  EXPECT_EQ(SortedPaths(*tree), (std::vector<std::string>{"link.bin"}));
  const SyncFile* link = Find(*tree, "link.bin");
  ASSERT_NE(link, nullptr);
  EXPECT_EQ(link->size, 10u);         // the target's
  EXPECT_EQ(link->mtime_ms, 42'000);  // the target's
  std::vector<std::string> skipped = tree->skipped;
  std::sort(skipped.begin(), skipped.end());
  EXPECT_EQ(skipped, (std::vector<std::string>{
                         "dangling: dangling symbolic link",
                         "dirlink: symbolic link to a directory (not followed)",
                         "fifo: not a regular file",
                     }));
}

TEST(LocalTreeTest, SkipsNamesThatAreNotBucketPaths) {
  testing::TempDir dir;
  WriteFile(dir.path() + "/back\\slash", "x");
  WriteFile(dir.path() + "/ok", "x");
  auto tree = ListLocalTree(dir.path());
  ASSERT_TRUE(tree.ok()) << tree.status().ToString();
  EXPECT_EQ(SortedPaths(*tree), (std::vector<std::string>{"ok"}));
  ASSERT_EQ(tree->skipped.size(), 1u);
  EXPECT_EQ(tree->skipped[0], "back\\slash: path may not contain '\\'");
}

TEST(LocalTreeTest, RootMustBeAnExistingDirectory) {
  testing::TempDir dir;
  EXPECT_EQ(ListLocalTree(dir.path() + "/missing").status().code(), Status::Code::kNotFound);
  WriteFile(dir.path() + "/file", "x");
  EXPECT_EQ(ListLocalTree(dir.path() + "/file").status().code(), Status::Code::kInvalidArgument);
  auto empty = ListLocalTree(dir.path() + "/");
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(SortedPaths(*empty), (std::vector<std::string>{"file"}));
}

// Clears the calling thread's effective capabilities (capabilities are per thread on
// Linux), so that even root obeys permission bits in it. Returns whether that worked.
bool DropThisThreadsEffectiveCapabilities() {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2]{};
  if (::syscall(SYS_capget, &header, data) != 0) return false;
  data[0].effective = 0;
  data[1].effective = 0;
  return ::syscall(SYS_capset, &header, data) == 0;
}

// Runs as root too (CI does): the listing runs on a thread without capabilities.
TEST(LocalTreeTest, UnreadableDirectoryFailsTheListing) {
  testing::TempDir dir;
  WriteFile(dir.path() + "/locked/secret", "x");
  ASSERT_EQ(::chmod((dir.path() + "/locked").c_str(), 0), 0);
  bool dropped = false;
  Status listed;
  std::thread([&] {
    dropped = DropThisThreadsEffectiveCapabilities();
    listed = ListLocalTree(dir.path()).status();
  }).join();
  ::chmod((dir.path() + "/locked").c_str(), 0700);  // so TempDir can remove it
  ASSERT_TRUE(dropped);
  EXPECT_EQ(listed.code(), Status::Code::kIoError) << listed.ToString();
}

TEST(LocalTreeTest, UnixMillisRoundsDownAndClampsBefore1970) {
  EXPECT_EQ(UnixMillis({1, 999'999'999}), 1999);
  EXPECT_EQ(UnixMillis({0, 0}), 0);
  EXPECT_EQ(UnixMillis({-1, 500'000'000}), 0);
}

TEST(LocalTreeTest, LocalHasherGivesTheXetFileHash) {
  testing::TempDir dir;
  const auto vector = testing::LoadConformanceJson("extra.json")["splitmix64_seed0_1000000"];
  const auto data = testing::SplitMix64Bytes(0, 1'000'000);
  WriteFile(dir.path() + "/sub/data.bin", std::string(data.begin(), data.end()));
  const SyncHasher hasher = MakeLocalHasher(dir.path());
  auto hash = hasher({"sub/data.bin", data.size(), 0, std::nullopt});
  ASSERT_TRUE(hash.ok()) << hash.status().ToString();
  EXPECT_EQ(hash->ToHex(), vector["file_hash"].get<std::string>());
  EXPECT_EQ(hasher({"missing", 1, 0, std::nullopt}).status().code(), Status::Code::kNotFound);
}

}  // namespace
}  // namespace xet
