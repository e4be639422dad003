// DeleteLocalFiles (client/bucket_transfer/local_delete.h): files and symbolic links go,
// missing files are fine, directories are refused and stop the run.
#include "client/bucket_transfer/local_delete.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "support/temp_dir.h"

namespace xet {
namespace {

namespace fs = std::filesystem;

void Touch(const fs::path& path) { std::ofstream(path) << "x"; }

TEST(DeleteLocalFiles, RemovesFilesAndSkipsMissingOnes) {
  testing::TempDir dir("local-delete");
  const fs::path root = dir.path();
  Touch(root / "a");
  fs::create_directories(root / "sub");
  Touch(root / "sub" / "b");
  const std::string paths[] = {(root / "a").string(), (root / "missing").string(),
                               (root / "sub" / "b").string()};
  const Status st = DeleteLocalFiles(paths);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_FALSE(fs::exists(root / "a"));
  EXPECT_FALSE(fs::exists(root / "sub" / "b"));
  EXPECT_TRUE(fs::is_directory(root / "sub"));  // only files go
}

TEST(DeleteLocalFiles, RemovesASymbolicLinkNotItsTarget) {
  testing::TempDir dir("local-delete");
  const fs::path root = dir.path();
  fs::create_directories(root / "target-dir");
  Touch(root / "target-dir" / "kept");
  fs::create_directory_symlink(root / "target-dir", root / "link");
  const std::string paths[] = {(root / "link").string()};
  const Status st = DeleteLocalFiles(paths);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_FALSE(fs::is_symlink(root / "link"));
  EXPECT_TRUE(fs::exists(root / "target-dir" / "kept"));
}

TEST(DeleteLocalFiles, RefusesADirectoryAndStopsThere) {
  testing::TempDir dir("local-delete");
  const fs::path root = dir.path();
  fs::create_directories(root / "d");
  Touch(root / "after");
  const std::string paths[] = {(root / "d").string(), (root / "after").string()};
  const Status st = DeleteLocalFiles(paths);
  EXPECT_EQ(st.code(), Status::Code::kInvalidArgument) << st.ToString();
  EXPECT_EQ(st.message(), "delete " + (root / "d").string() + ": is a directory, not a file");
  EXPECT_TRUE(fs::is_directory(root / "d"));
  EXPECT_TRUE(fs::exists(root / "after"));
}

}  // namespace
}  // namespace xet
