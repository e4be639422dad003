// `xetstore sync` against a real `xetstore serve`: what is sent on a first, a repeated and
// an incremental sync, deletes, filters, dry runs, plan files and checksum mode.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
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
using testing::WriteLocalFile;

// Sets a file's mtime to `ms` unix milliseconds.
void SetMtimeMs(const std::string& path, int64_t ms) {
  const struct timespec t = {static_cast<time_t>(ms / 1000),
                             static_cast<long>(ms % 1000) * 1000000};
  const struct timespec times[2] = {t, t};
  ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), times, 0), 0) << path;
}

std::set<std::string> Keys(const std::map<std::string, testing::ListedFile>& m) {
  std::set<std::string> out;
  for (const auto& [k, v] : m) out.insert(k);
  return out;
}

class SyncCliTest : public CliServerTest {
 protected:
  void SetUp() override {
    CliServerTest::SetUp();
    CreateBucket("team/data");
    dir_ = LocalDir("sync-src");
  }

  // `xetstore sync <args> --json` (the summary object) after checking it succeeded.
  nlohmann::json SyncJson(const std::string& args) {
    const auto r = Run("sync --json " + args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    if (r.exit_code != 0) return {};
    return nlohmann::json::parse(r.out);
  }

  std::string dir_;
};

TEST_F(SyncCliTest, FirstSyncUploadsAllThenNothingThenOnlyTheModifiedFiles) {
  constexpr size_t kFiles = 100;
  constexpr size_t kSize = 20'000;
  for (size_t i = 0; i < kFiles; ++i) {
    WriteLocalFile(dir_ + "/d" + std::to_string(i % 7) + "/f" + std::to_string(i) + ".bin",
                   testing::RandomString(kSize, i));
  }
  const std::string dst = "hf://buckets/team/data/mirror";

  auto j = SyncJson(dir_ + " " + dst);
  EXPECT_EQ(j["operation"], "sync");
  EXPECT_EQ(j["direction"], "upload");
  EXPECT_EQ(j["transfers"], kFiles);
  EXPECT_EQ(j["files"], kFiles);
  EXPECT_EQ(j["bytes"], kFiles * kSize);
  EXPECT_EQ(j["unchanged"], 0);
  auto files = RemoteFiles("team/data", "mirror");
  ASSERT_EQ(files.size(), kFiles);
  for (const std::string rel : {"d0/f0.bin", "d3/f52.bin", "d1/f99.bin"}) {
    const auto& f = files.at("mirror/" + rel);
    EXPECT_EQ(f.size, kSize);
    EXPECT_EQ(f.xet_hash, XetHashOf(dir_ + "/" + rel)) << rel;
    EXPECT_EQ(f.mtime, testing::LocalMtimeMs(dir_ + "/" + rel))
        << rel;  // the local mtime, recorded
  }

  // Nothing changed: nothing is read or sent.
  j = SyncJson(dir_ + " " + dst);
  EXPECT_EQ(j["transfers"], 0);
  EXPECT_EQ(j["files"], 0);
  EXPECT_EQ(j["bytes"], 0);
  EXPECT_EQ(j["bytes_sent"], 0);
  EXPECT_EQ(j["unchanged"], kFiles);

  // Rewrite 20 files with new random bytes of the same size: only they are read and sent.
  std::set<std::string> modified;
  for (size_t i = 0; i < kFiles; i += 5) {
    const std::string rel = "d" + std::to_string(i % 7) + "/f" + std::to_string(i) + ".bin";
    WriteLocalFile(dir_ + "/" + rel, testing::RandomString(kSize, 1000 + i));
    SetMtimeMs(dir_ + "/" + rel, 1'800'000'000'000 + static_cast<int64_t>(i));
    modified.insert("mirror/" + rel);
  }
  ASSERT_EQ(modified.size(), 20u);
  j = SyncJson(dir_ + " " + dst);
  EXPECT_EQ(j["transfers"], 20);
  EXPECT_EQ(j["files"], 20);
  EXPECT_EQ(j["bytes"], 20 * kSize);
  EXPECT_EQ(j["unchanged"], kFiles - 20);
  // Random bytes do not compress or deduplicate: about the 20 files' bytes go out, plus
  // chunk headers and one shard.
  const uint64_t sent = j["bytes_sent"];
  EXPECT_GE(sent, 20 * kSize);
  EXPECT_LT(sent, 20 * kSize + 64 * 1024);
  const auto after = RemoteFiles("team/data", "mirror");
  ASSERT_EQ(Keys(after), Keys(files));
  for (const auto& [path, f] : after) {
    const bool changed = f.xet_hash != files.at(path).xet_hash;
    EXPECT_EQ(changed, modified.contains(path)) << path;
  }
  EXPECT_EQ(after.at("mirror/d5/f40.bin").mtime, 1'800'000'000'040);
}

TEST_F(SyncCliTest, TextOutputListsOperationsAndASummary) {
  WriteLocalFile(dir_ + "/a.txt", "aaa");
  WriteLocalFile(dir_ + "/sub/b.txt", "bbbb");
  auto r = Run("sync " + dir_ + " hf://buckets/team/data");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "upload: " + dir_ + "/a.txt -> hf://buckets/team/data/a.txt (new)\n" +
                       "upload: " + dir_ +
                       "/sub/b.txt -> hf://buckets/team/data/sub/b.txt (new)\n");
  EXPECT_EQ(r.err.rfind("uploaded 2 files, 7 B read: ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find("\nsync: 2 uploaded (7 B), 0 deleted, 0 unchanged\n"), std::string::npos)
      << r.err;

  r = Run("sync " + dir_ + " hf://buckets/team/data");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "sync: 0 uploaded (0 B), 0 deleted, 2 unchanged\n");

  r = Run("sync -q " + dir_ + " hf://buckets/team/data");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out + r.err, "");
}

TEST_F(SyncCliTest, DeletesOnlyWithDelete) {
  WriteLocalFile(dir_ + "/keep.txt", "k");
  WriteLocalFile(dir_ + "/gone.txt", "g");
  WriteLocalFile(dir_ + "/sub/gone2.txt", "g2");
  ASSERT_EQ(SyncJson(dir_ + " hf://buckets/team/data/x")["transfers"], 3);
  // A file outside the synced prefix is never touched.
  const std::string other = LocalDir("other");
  WriteLocalFile(other + "/outside.txt", "o");
  ASSERT_EQ(Run("cp -q " + other + "/outside.txt hf://buckets/team/data/outside.txt").exit_code, 0);
  std::filesystem::remove(dir_ + "/gone.txt");
  std::filesystem::remove_all(dir_ + "/sub");

  auto j = SyncJson(dir_ + " hf://buckets/team/data/x");
  EXPECT_EQ(j["deletes"], 0);
  EXPECT_EQ(j["kept"], 2);
  EXPECT_EQ(Keys(RemoteFiles("team/data")),
            (std::set<std::string>{"outside.txt", "x/gone.txt", "x/keep.txt", "x/sub/gone2.txt"}));

  j = SyncJson("--delete " + dir_ + " hf://buckets/team/data/x");
  EXPECT_EQ(j["deletes"], 2);
  EXPECT_EQ(j["transfers"], 0);
  EXPECT_EQ(j["unchanged"], 1);
  EXPECT_EQ(Keys(RemoteFiles("team/data")), (std::set<std::string>{"outside.txt", "x/keep.txt"}));
}

TEST_F(SyncCliTest, IncludeAndExcludeApplyInOrder) {
  for (const char* f : {"a.txt", "b.bin", "logs/x.log", "logs/keep.txt", "logs/deep/y.txt"}) {
    WriteLocalFile(dir_ + "/" + f, f);
  }
  // Exclude logs/, then take .txt files back (also inside logs/): the later rule wins.
  auto j = SyncJson("--exclude 'logs/*' --include '*.txt' " + dir_ + " hf://buckets/team/data/one");
  EXPECT_EQ(j["transfers"], 4);
  EXPECT_EQ(j["excluded"], 1);
  EXPECT_EQ(Keys(RemoteFiles("team/data")),
            (std::set<std::string>{"one/a.txt", "one/b.bin", "one/logs/deep/y.txt",
                                   "one/logs/keep.txt"}));

  // The reverse order excludes all of logs/.
  const std::string dir2 = LocalDir("sync-src2");
  for (const char* f : {"a.txt", "logs/keep.txt"}) WriteLocalFile(dir2 + "/" + f, f);
  j = SyncJson("--include '*.txt' --exclude 'logs/*' " + dir2 + " hf://buckets/team/data/two");
  EXPECT_EQ(j["transfers"], 1);
  EXPECT_EQ(Keys(RemoteFiles("team/data", "two")), (std::set<std::string>{"two/a.txt"}));

  // Excluded files are not deleted either.
  std::filesystem::remove(dir_ + "/b.bin");
  std::filesystem::remove(dir_ + "/a.txt");
  j = SyncJson("--delete --exclude '*.bin' " + dir_ + " hf://buckets/team/data/one");
  EXPECT_EQ(j["deletes"], 1);    // a.txt; b.bin is excluded
  EXPECT_EQ(j["transfers"], 1);  // logs/x.log, no longer excluded
  EXPECT_EQ(Keys(RemoteFiles("team/data", "one")),
            (std::set<std::string>{"one/b.bin", "one/logs/deep/y.txt", "one/logs/keep.txt",
                                   "one/logs/x.log"}));
}

TEST_F(SyncCliTest, DryRunChangesNothing) {
  WriteLocalFile(dir_ + "/old.txt", "old");
  ASSERT_EQ(SyncJson(dir_ + " hf://buckets/team/data")["transfers"], 1);
  std::filesystem::remove(dir_ + "/old.txt");
  WriteLocalFile(dir_ + "/new.txt", "new");
  const auto before = RemoteFiles("team/data");

  auto r = Run("sync --dry-run --delete " + dir_ + " hf://buckets/team/data");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "(dry run) upload: " + dir_ +
                       "/new.txt -> hf://buckets/team/data/new.txt (new)\n" +
                       "(dry run) delete: hf://buckets/team/data/old.txt (not-in-source)\n");
  EXPECT_EQ(r.err, "(dry run) 1 to upload (3 B), 1 to delete, 0 unchanged\n");
  // --json prints the plan as JSON lines, the plan file's format.
  r = Run("sync -n --json --delete " + dir_ + " hf://buckets/team/data");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::istringstream lines(r.out);
  std::vector<nlohmann::json> plan;
  for (std::string line; std::getline(lines, line);) plan.push_back(nlohmann::json::parse(line));
  ASSERT_EQ(plan.size(), 3u);
  EXPECT_EQ(plan[0]["type"], "xetstore-sync-plan");
  EXPECT_EQ(plan[1]["op"], "upload");
  EXPECT_EQ(plan[1]["path"], "new.txt");
  EXPECT_EQ(plan[2]["op"], "delete");
  EXPECT_EQ(plan[2]["path"], "old.txt");

  const auto after = RemoteFiles("team/data");
  ASSERT_EQ(Keys(after), Keys(before));
  EXPECT_EQ(after.at("old.txt").xet_hash, before.at("old.txt").xet_hash);
}

TEST_F(SyncCliTest, PlanThenApply) {
  WriteLocalFile(dir_ + "/a.txt", "a");
  WriteLocalFile(dir_ + "/b.txt", "b");
  ASSERT_EQ(SyncJson(dir_ + " hf://buckets/team/data/p")["transfers"], 2);
  WriteLocalFile(dir_ + "/a.txt", "a, longer now");
  WriteLocalFile(dir_ + "/c.txt", "c");
  std::filesystem::remove(dir_ + "/b.txt");
  const std::string plan = LocalDir("plans") + "/plan.jsonl";

  auto r = Run("sync --delete --plan " + plan + " " + dir_ + " hf://buckets/team/data/p");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "plan written to " + plan + ": 2 to upload (14 B), 1 to delete, 0 unchanged\n");
  EXPECT_EQ(Keys(RemoteFiles("team/data")), (std::set<std::string>{"p/a.txt", "p/b.txt"}));
  const std::string text = testing::ReadLocalFile(plan);
  std::istringstream lines(text);
  std::vector<nlohmann::json> ops;
  for (std::string line; std::getline(lines, line);) ops.push_back(nlohmann::json::parse(line));
  ASSERT_EQ(ops.size(), 4u);
  EXPECT_EQ(ops[0]["source"], dir_);
  EXPECT_EQ(ops[0]["destination"], "hf://buckets/team/data/p");
  EXPECT_EQ(ops[1]["path"], "a.txt");
  EXPECT_EQ(ops[1]["reason"], "size-changed");
  EXPECT_EQ(ops[2]["path"], "c.txt");
  EXPECT_EQ(ops[3]["op"], "delete");
  EXPECT_EQ(ops[3]["path"], "b.txt");

  // Applying runs exactly those operations, even though the tree changed since: d.txt is
  // not in the plan. The same SRC and DST may be spelled differently.
  WriteLocalFile(dir_ + "/d.txt", "d");
  auto j = SyncJson("--apply " + plan + " " + dir_ + "/ hf://buckets/team/data/p/");
  EXPECT_EQ(j["transfers"], 2);
  EXPECT_EQ(j["deletes"], 1);
  EXPECT_FALSE(j.contains("unchanged"));  // nothing was compared
  const auto files = RemoteFiles("team/data");
  EXPECT_EQ(Keys(files), (std::set<std::string>{"p/a.txt", "p/c.txt"}));
  EXPECT_EQ(files.at("p/a.txt").xet_hash, XetHashOf(dir_ + "/a.txt"));

  // A plan is refused for another destination, or with planning flags.
  r = Run("sync --apply " + plan + " " + dir_ + " hf://buckets/team/data/elsewhere");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("is a plan for " + dir_ + " -> hf://buckets/team/data/p, not for"),
            std::string::npos)
      << r.err;
  r = Run("sync --delete --apply " + plan + " " + dir_ + " hf://buckets/team/data/p");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--apply carries out the plan as written"), std::string::npos) << r.err;
}

TEST_F(SyncCliTest, HostilePlansAreRefusedBeforeAnythingRuns) {
  WriteLocalFile(dir_ + "/a.txt", "a");
  const std::string plans = LocalDir("plans");
  const std::string header = R"({"type":"xetstore-sync-plan","version":1,"direction":"upload",)"
                             R"("source":")" +
                             dir_ + R"(","destination":"hf://buckets/team/data"})";
  const std::string good = R"({"op":"upload","path":"a.txt","size":1,"mtime":1,"reason":"new"})";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"not json", "plan line 3: invalid JSON"},
      {R"({"op":"chmod","path":"a.txt","size":1,"reason":"new"})",
       "plan line 3: unknown op \"chmod\""},
      {R"({"op":"delete","path":"../../etc/passwd","size":1,"reason":"not-in-source"})",
       "plan line 3: bad \"path\": path may not contain '.' or '..' segments"},
      {R"({"op":"delete","path":"/etc/passwd","size":1,"reason":"not-in-source"})",
       "plan line 3: bad \"path\": path may not start with '/'"},
      {R"({"op":"delete","path":"a\u0000b","size":1,"reason":"not-in-source"})",
       "plan line 3: bad \"path\": path may not contain NUL or control characters"},
  };
  int n = 0;
  for (const auto& [line, error] : cases) {
    const std::string plan = plans + "/p" + std::to_string(n++) + ".jsonl";
    WriteLocalFile(plan, header + "\n" + good + "\n" + line + "\n");
    // The good line comes first, to show nothing runs before the whole file is checked.
    const auto r = Run("sync --apply " + plan + " " + dir_ + " hf://buckets/team/data");
    EXPECT_EQ(r.exit_code, 2) << line;
    EXPECT_NE(r.err.find(plan + ": " + error), std::string::npos) << r.err;
  }
  EXPECT_TRUE(RemoteFiles("team/data").empty());
}

TEST_F(SyncCliTest, ChecksumModeComparesContentNotTimes) {
  WriteLocalFile(dir_ + "/touched.bin", testing::RandomString(5000, 1));
  WriteLocalFile(dir_ + "/sneaky.bin", testing::RandomString(5000, 2));
  ASSERT_EQ(SyncJson(dir_ + " hf://buckets/team/data")["transfers"], 2);

  // Same bytes, new mtime: the default compares times and re-sends it; --checksum does not.
  SetMtimeMs(dir_ + "/touched.bin", 1'900'000'000'000);
  // New bytes of the same size with the old mtime: only --checksum notices.
  const int64_t old_mtime = testing::LocalMtimeMs(dir_ + "/sneaky.bin");
  WriteLocalFile(dir_ + "/sneaky.bin", testing::RandomString(5000, 3));
  SetMtimeMs(dir_ + "/sneaky.bin", old_mtime);

  auto r = Run("sync -n --json " + dir_ + " hf://buckets/team/data");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find(R"("path":"touched.bin","reason":"mtime-changed")"), std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("sneaky.bin"), std::string::npos) << r.out;

  auto j = SyncJson("--checksum " + dir_ + " hf://buckets/team/data");
  EXPECT_EQ(j["transfers"], 1);
  EXPECT_EQ(j["unchanged"], 1);
  const auto files = RemoteFiles("team/data");
  EXPECT_EQ(files.at("sneaky.bin").xet_hash, XetHashOf(dir_ + "/sneaky.bin"));
}

TEST_F(SyncCliTest, EntriesThatCannotBeUploadedAreSkippedWithAWarning) {
  WriteLocalFile(dir_ + "/ok.txt", "ok");
  WriteLocalFile(dir_ + "/a-rather-long-file-name.txt", "x");
  ASSERT_EQ(::mkfifo((dir_ + "/fifo").c_str(), 0600), 0);
  // 1,000 bytes of prefix: "ok.txt" still fits in 1,024 bytes, the long name does not.
  const std::string prefix = std::string(500, 'p') + "/" + std::string(499, 'q');
  const auto r = Run("sync " + dir_ + " hf://buckets/team/data/" + prefix);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("xetstore: warning: skipped " + dir_ + "/fifo: not a regular file\n"),
            std::string::npos)
      << r.err;
  EXPECT_NE(
      r.err.find("xetstore: warning: skipped " + dir_ +
                 "/a-rather-long-file-name.txt: in the bucket, path is longer than 1024 bytes\n"),
      std::string::npos)
      << r.err;
  EXPECT_EQ(Keys(RemoteFiles("team/data")), (std::set<std::string>{prefix + "/ok.txt"}));
}

TEST_F(SyncCliTest, UsageAndRemoteErrors) {
  WriteLocalFile(dir_ + "/a.txt", "a");
  auto r = Run("sync " + dir_ + " " + dir_ + "-copy");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("neither side is hf://buckets/"), std::string::npos) << r.err;
  r = Run("sync " + dir_ + "/missing hf://buckets/team/data");
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("no such directory"), std::string::npos) << r.err;
  r = Run("sync " + dir_ + " hf://buckets/team/nope");
  EXPECT_EQ(r.exit_code, 3);
  r = Run("sync --exclude '' " + dir_ + " hf://buckets/team/data");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("filter pattern is empty"), std::string::npos) << r.err;
  // A read-only token may plan but not upload.
  const std::string reader = server().CreateToken("read", "team/data");
  r = RunAs(reader, "sync -n " + dir_ + " hf://buckets/team/data");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  r = RunAs(reader, "sync " + dir_ + " hf://buckets/team/data");
  EXPECT_EQ(r.exit_code, 4) << r.err;
  EXPECT_TRUE(RemoteFiles("team/data").empty());
}

}  // namespace
}  // namespace xet
