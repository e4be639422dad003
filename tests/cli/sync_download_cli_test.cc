// `xetstore sync hf://buckets/... DIR` (bucket -> local) against a real `xetstore serve`:
// a first, a repeated and an incremental sync, deletes, filters, dry runs, plan files,
// checksum mode, and paths that must not lead outside DIR.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "support/cli_fixture.h"
#include "support/test_support.h"

namespace xet {
namespace {

using testing::CliServerTest;
using testing::ReadLocalFile;
using testing::WriteLocalFile;

// Every entry under `dir` that is not a directory, relative path -> content.
std::map<std::string, std::string> LocalFiles(const std::string& dir) {
  std::map<std::string, std::string> out;
  if (!std::filesystem::exists(dir)) return out;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
    if (!e.is_directory()) {
      out[std::filesystem::relative(e.path(), dir).generic_string()] =
          ReadLocalFile(e.path().string());
    }
  }
  return out;
}

class SyncDownloadCliTest : public CliServerTest {
 protected:
  void SetUp() override {
    CliServerTest::SetUp();
    CreateBucket("team/data");
    src_ = LocalDir("up");
    dst_ = LocalDir("down") + "/copy";  // does not exist yet: sync creates it
  }

  // Uploads `files` (path -> content) below hf://buckets/team/data/m.
  void Upload(const std::map<std::string, std::string>& files) {
    const std::string dir = LocalDir("stage");
    for (const auto& [path, data] : files) WriteLocalFile(dir + "/" + path, data);
    const auto r = Run("cp -q -r " + dir + " hf://buckets/team/data/m");
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }

  // `xetstore sync --json <args>` (the summary object) after checking it succeeded.
  nlohmann::json SyncJson(const std::string& args) {
    const auto r = Run("sync --json " + args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    if (r.exit_code != 0) return {};
    return nlohmann::json::parse(r.out);
  }

  const std::string remote_ = "hf://buckets/team/data/m";
  std::string src_, dst_;
};

TEST_F(SyncDownloadCliTest, FirstSyncDownloadsAllThenNothingThenTheChangedFile) {
  std::map<std::string, std::string> files = {
      {"a.txt", "alpha"},
      {"empty", ""},
      {"d/big.bin", testing::RandomString(2'500'000, 1)},
      {"d/e/deep.bin", testing::RandomString(50'000, 2)},
  };
  Upload(files);

  auto j = SyncJson(remote_ + " " + dst_);
  EXPECT_EQ(j["operation"], "sync");
  EXPECT_EQ(j["direction"], "download");
  EXPECT_EQ(j["transfers"], 4);
  EXPECT_EQ(j["files"], 4);
  EXPECT_EQ(j["bytes"], 2'550'005);
  EXPECT_EQ(LocalFiles(dst_), files);  // byte-exact, and no .xetpart left
  // Each file carries the remote mtime, so the next sync finds it unchanged.
  for (const auto& [path, f] : RemoteFiles("team/data", "m")) {
    EXPECT_EQ(testing::LocalMtimeMs(dst_ + "/" + path.substr(2)), f.mtime) << path;
  }

  j = SyncJson(remote_ + " " + dst_);
  EXPECT_EQ(j["transfers"], 0);
  EXPECT_EQ(j["files"], 0);
  EXPECT_EQ(j["bytes"], 0);
  EXPECT_EQ(j["unchanged"], 4);

  // A new version in the bucket is pulled; nothing else is.
  files["d/e/deep.bin"] = testing::RandomString(60'000, 3);
  Upload({{"d/e/deep.bin", files["d/e/deep.bin"]}});
  const auto r = Run("sync " + remote_ + " " + dst_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out,
            "download: " + remote_ + "/d/e/deep.bin -> " + dst_ + "/d/e/deep.bin (size-changed)\n");
  EXPECT_NE(r.err.find("sync: 1 downloaded (58.6 KiB), 0 deleted, 3 unchanged\n"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(LocalFiles(dst_), files);
}

TEST_F(SyncDownloadCliTest, DeletesLocalExtrasOnlyWithDelete) {
  Upload({{"keep.txt", "k"}});
  WriteLocalFile(dst_ + "/extra.txt", "x");
  WriteLocalFile(dst_ + "/sub/extra2.txt", "x2");
  WriteLocalFile(dst_ + "/notes.md", "mine");
  // A partial download of an earlier run is neither compared nor deleted.
  WriteLocalFile(dst_ + "/old.bin.xetpart", "partial");

  auto j = SyncJson(remote_ + " " + dst_);
  EXPECT_EQ(j["transfers"], 1);
  EXPECT_EQ(j["deletes"], 0);
  EXPECT_EQ(j["kept"], 3);
  EXPECT_EQ(LocalFiles(dst_).size(), 5u);

  // Excluded files are protected from --delete.
  j = SyncJson("--delete --exclude '*.md' " + remote_ + " " + dst_);
  EXPECT_EQ(j["deletes"], 2);
  EXPECT_EQ(j["transfers"], 0);
  const auto left = LocalFiles(dst_);
  EXPECT_EQ(left, (std::map<std::string, std::string>{
                      {"keep.txt", "k"}, {"notes.md", "mine"}, {"old.bin.xetpart", "partial"}}));
}

TEST_F(SyncDownloadCliTest, IncludeAndExcludeApplyInOrder) {
  Upload({{"a.txt", "a"}, {"b.bin", "b"}, {"logs/x.log", "x"}, {"logs/keep.txt", "k"}});
  auto j = SyncJson("--exclude 'logs/*' --include '*.txt' " + remote_ + " " + dst_);
  EXPECT_EQ(j["transfers"], 3);
  EXPECT_EQ(j["excluded"], 1);
  EXPECT_EQ(LocalFiles(dst_), (std::map<std::string, std::string>{
                                  {"a.txt", "a"}, {"b.bin", "b"}, {"logs/keep.txt", "k"}}));
}

TEST_F(SyncDownloadCliTest, DryRunChangesNothing) {
  Upload({{"new.txt", "new"}});
  WriteLocalFile(dst_ + "/old.txt", "old");
  auto r = Run("sync --dry-run --delete " + remote_ + " " + dst_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "(dry run) download: " + remote_ + "/new.txt -> " + dst_ + "/new.txt (new)\n" +
                       "(dry run) delete: " + dst_ + "/old.txt (not-in-source)\n");
  EXPECT_EQ(r.err, "(dry run) 1 to download (3 B), 1 to delete, 0 unchanged\n");
  EXPECT_EQ(LocalFiles(dst_), (std::map<std::string, std::string>{{"old.txt", "old"}}));
  // Into a directory that does not exist: it is not created.
  const std::string missing = LocalDir("d2") + "/not-yet";
  r = Run("sync -n " + remote_ + " " + missing);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(std::filesystem::exists(missing));
}

TEST_F(SyncDownloadCliTest, PlanThenApply) {
  Upload({{"a.txt", "a"}, {"b.txt", "b"}});
  WriteLocalFile(dst_ + "/stale.txt", "s");
  const std::string plan = LocalDir("plans") + "/plan.jsonl";
  auto r = Run("sync --delete --plan " + plan + " " + remote_ + " " + dst_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "plan written to " + plan + ": 2 to download (2 B), 1 to delete, 0 unchanged\n");
  EXPECT_EQ(LocalFiles(dst_).size(), 1u);  // planning changed nothing
  std::istringstream lines(ReadLocalFile(plan));
  std::vector<nlohmann::json> ops;
  for (std::string line; std::getline(lines, line);) ops.push_back(nlohmann::json::parse(line));
  ASSERT_EQ(ops.size(), 4u);
  EXPECT_EQ(ops[0]["direction"], "download");
  EXPECT_EQ(ops[0]["source"], remote_);
  EXPECT_EQ(ops[0]["destination"], dst_);
  EXPECT_EQ(ops[1]["op"], "download");
  EXPECT_EQ(ops[3]["op"], "delete");

  // Applying runs exactly those operations: c.txt, added since, is not fetched.
  Upload({{"c.txt", "c"}});
  auto j = SyncJson("--apply " + plan + " " + remote_ + "/ " + dst_ + "/");
  EXPECT_EQ(j["transfers"], 2);
  EXPECT_EQ(j["deletes"], 1);
  EXPECT_EQ(LocalFiles(dst_), (std::map<std::string, std::string>{{"a.txt", "a"}, {"b.txt", "b"}}));
  // The upload-direction plan is refused here.
  r = Run("sync --apply " + plan + " " + dst_ + " " + remote_);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("is a plan for " + remote_ + " -> " + dst_), std::string::npos) << r.err;
}

TEST_F(SyncDownloadCliTest, ChecksumModeComparesContentNotTimes) {
  Upload({{"same.bin", testing::RandomString(5000, 1)}});
  ASSERT_EQ(SyncJson(remote_ + " " + dst_)["transfers"], 1);
  // Local bytes changed behind sync's back, same size and mtime: only --checksum notices.
  const int64_t mtime = testing::LocalMtimeMs(dst_ + "/same.bin");
  WriteLocalFile(dst_ + "/same.bin", testing::RandomString(5000, 2));
  const struct timespec t = {static_cast<time_t>(mtime / 1000),
                             static_cast<long>(mtime % 1000) * 1'000'000};
  const struct timespec times[2] = {t, t};
  ASSERT_EQ(::utimensat(AT_FDCWD, (dst_ + "/same.bin").c_str(), times, 0), 0);
  EXPECT_EQ(SyncJson(remote_ + " " + dst_)["transfers"], 0);
  auto j = SyncJson("--checksum " + remote_ + " " + dst_);
  EXPECT_EQ(j["transfers"], 1);
  EXPECT_EQ(ReadLocalFile(dst_ + "/same.bin"), testing::RandomString(5000, 1));
}

TEST_F(SyncDownloadCliTest, NeverWritesThroughASymlinkedDirectory) {
  Upload({{"sub/x.txt", "x"}});
  const std::string outside = LocalDir("outside");
  std::filesystem::create_directories(dst_);
  std::filesystem::create_directory_symlink(outside, dst_ + "/sub");
  const auto r = Run("sync " + remote_ + " " + dst_);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find(dst_ + "/sub is a symbolic link; refusing to write or delete through it"),
            std::string::npos)
      << r.err;
  EXPECT_TRUE(std::filesystem::is_empty(outside));
}

// A FIFO where a file belongs is replaced by the file, as rsync does (`cp` writes into it
// instead): sync mirrors, and writing into a FIFO nobody reads would wait forever.
TEST_F(SyncDownloadCliTest, ReplacesAFifoWhereAFileBelongs) {
  Upload({{"pipe", "pipe content"}, {"other.txt", "o"}});
  std::filesystem::create_directories(dst_);
  ASSERT_EQ(::mkfifo((dst_ + "/pipe").c_str(), 0600), 0);
  const auto r = Run("sync -q " + remote_ + " " + dst_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(std::filesystem::is_regular_file(dst_ + "/pipe"));
  const std::map<std::string, std::string> want = {{"pipe", "pipe content"}, {"other.txt", "o"}};
  EXPECT_EQ(LocalFiles(dst_), want);
}

// A source path with nothing under it is an error, not an empty directory: a typo with
// --delete must not empty the destination.
TEST_F(SyncDownloadCliTest, MissingSourceIsAnErrorAndDeletesNothing) {
  Upload({{"a.txt", "a"}});
  WriteLocalFile(dst_ + "/mine.txt", "keep me");
  const auto r = Run("sync --delete hf://buckets/team/data/typo " + dst_);
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_EQ(r.err.find("xetstore: error: hf://buckets/team/data/typo: no such file or directory"),
            0u)
      << r.err;
  EXPECT_EQ(LocalFiles(dst_), (std::map<std::string, std::string>{{"mine.txt", "keep me"}}));
  // The bucket's root is a directory even when nothing is below the synced prefix.
  CreateBucket("team/empty");
  const auto j = SyncJson("hf://buckets/team/empty " + LocalDir("e"));
  EXPECT_EQ(j["transfers"], 0);
}

TEST_F(SyncDownloadCliTest, RemoteToRemoteAndLocalToLocalAreRefused) {
  auto r = Run("sync " + remote_ + " hf://buckets/team/data/other");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "xetstore: error: sync between two buckets is not supported: copy on the server "
            "with xetstore cp -r " +
                remote_ + " hf://buckets/team/data/other\n");
  r = Run("sync " + src_ + " " + dst_);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.find("xetstore: error: neither side is hf://buckets/"), 0u) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

}  // namespace
}  // namespace xet
