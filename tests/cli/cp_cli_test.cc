// `xetstore cp` against a real `xetstore serve`: uploads of files, directories and stdin,
// server-side copies, output modes, and the error cases.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "format/sha256.h"
#include "store/index.h"
#include "support/cli_fixture.h"
#include "support/test_support.h"

namespace xet {
namespace {

using testing::CliServerTest;

std::string AsString(const std::vector<uint8_t>& v) { return std::string(v.begin(), v.end()); }

class CpCliTest : public CliServerTest {
 protected:
  void SetUp() override {
    CliServerTest::SetUp();
    CreateBucket("team/data");
  }
};

TEST_F(CpCliTest, UploadsAFileUnderItsPath) {
  const std::string dir = LocalDir("cp-file");
  const std::string data = AsString(testing::RandomBytes(300'000, 1));
  testing::WriteLocalFile(dir + "/model.bin", data);
  auto r = Run("cp " + dir + "/model.bin hf://buckets/team/data/models/v1.bin");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "upload: " + dir + "/model.bin -> hf://buckets/team/data/models/v1.bin\n");
  // The summary line goes to stderr.
  EXPECT_EQ(r.err.rfind("uploaded 1 file, 293 KiB read: ", 0), 0u) << r.err;

  const auto files = RemoteFiles("team/data");
  ASSERT_EQ(files.size(), 1u);
  const testing::ListedFile& f = files.at("models/v1.bin");
  EXPECT_EQ(f.size, data.size());
  EXPECT_EQ(f.xet_hash, XetHashOf(dir + "/model.bin"));
  // The entry keeps the local file's modification time.
  struct stat st {};
  ASSERT_EQ(::stat((dir + "/model.bin").c_str(), &st), 0);
  EXPECT_EQ(f.mtime, int64_t{st.st_mtim.tv_sec} * 1000 + st.st_mtim.tv_nsec / 1'000'000);
}

// --sha256 records each file's SHA-256 with the file on the server (read back from the
// server's own index); without it none is recorded.
TEST_F(CpCliTest, Sha256IsRecordedOnlyWhenAskedFor) {
  const std::string dir = LocalDir("cp-sha");
  const std::string with = AsString(testing::RandomBytes(3 << 20, 2));
  const std::string without = AsString(testing::RandomBytes(200'000, 3));
  testing::WriteLocalFile(dir + "/with.bin", with);
  testing::WriteLocalFile(dir + "/without.bin", without);
  ASSERT_EQ(Run("cp -q --sha256 " + dir + "/with.bin hf://buckets/team/data/").exit_code, 0);
  ASSERT_EQ(Run("cp -q " + dir + "/without.bin hf://buckets/team/data/").exit_code, 0);

  auto index = OpenSqliteIndex(server().data_dir() + "/index.sqlite");
  ASSERT_TRUE(index.ok()) << index.status().ToString();
  auto recorded = [&](const std::string& path) -> std::optional<Hash> {
    const std::optional<Hash> hash = Hash::FromHex(XetHashOf(path));
    EXPECT_TRUE(hash.has_value());
    if (!hash) return std::nullopt;
    auto file = (*index)->GetFile(*hash);
    EXPECT_TRUE(file.ok() && file->has_value());
    return file.ok() && file->has_value() ? (*file)->sha256 : std::nullopt;
  };
  const std::optional<Hash> sha = recorded(dir + "/with.bin");
  ASSERT_TRUE(sha.has_value());
  EXPECT_EQ(Sha256FromXetOrder(*sha),
            Sha256Of({reinterpret_cast<const uint8_t*>(with.data()), with.size()}));
  EXPECT_FALSE(recorded(dir + "/without.bin").has_value());
}

TEST_F(CpCliTest, IntoADirectoryKeepsTheFileName) {
  const std::string dir = LocalDir("cp-into");
  testing::WriteLocalFile(dir + "/a.txt", "aaa");
  ASSERT_EQ(Run("cp -q " + dir + "/a.txt hf://buckets/team/data").exit_code, 0);
  ASSERT_EQ(Run("cp -q " + dir + "/a.txt hf://buckets/team/data/").exit_code, 0);
  ASSERT_EQ(Run("cp -q " + dir + "/a.txt hf://buckets/team/data/sub/").exit_code, 0);
  const auto files = RemoteFiles("team/data");
  EXPECT_EQ(files.size(), 2u);
  EXPECT_TRUE(files.contains("a.txt"));
  EXPECT_TRUE(files.contains("sub/a.txt"));
}

TEST_F(CpCliTest, RecursiveUploadsTheDirectoryContents) {
  const std::string dir = LocalDir("cp-dir");
  std::map<std::string, std::string> want = {
      {"top.txt", "top"},
      {"x/one.bin", AsString(testing::RandomBytes(200'000, 2))},
      {"x/y/two.txt", AsString(testing::TextLikeBytes(100'000, 3))},
      {"empty.txt", ""},
  };
  for (const auto& [path, data] : want) testing::WriteLocalFile(dir + "/" + path, data);
  std::filesystem::create_directories(dir + "/emptydir");

  auto r = Run("cp " + dir + " hf://buckets/team/data/up");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("is a directory"), std::string::npos) << r.err;
  EXPECT_TRUE(RemoteFiles("team/data").empty());

  r = Run("cp -r " + dir + " hf://buckets/team/data/up");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 4) << r.out;
  const auto files = RemoteFiles("team/data");
  ASSERT_EQ(files.size(), want.size());
  for (const auto& [path, data] : want) {
    const testing::ListedFile& f = files.at("up/" + path);
    EXPECT_EQ(f.size, data.size()) << path;
    EXPECT_EQ(f.xet_hash, XetHashOf(dir + "/" + path)) << path;
  }
}

TEST_F(CpCliTest, StdinUploadsUnderTheGivenPath) {
  const std::string dir = LocalDir("cp-stdin");
  const std::string data = AsString(testing::RandomBytes(150'000, 4));
  testing::WriteLocalFile(dir + "/in.bin", data);
  auto r = Run("cp - hf://buckets/team/data/piped.bin < " + dir + "/in.bin");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto files = RemoteFiles("team/data");
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(files.at("piped.bin").size, data.size());
  EXPECT_EQ(files.at("piped.bin").xet_hash, XetHashOf(dir + "/in.bin"));
  // A directory destination has no name to give stdin.
  r = Run("cp - hf://buckets/team/data/dir/ < " + dir + "/in.bin");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.rfind("xetstore: error: ", 0), 0u) << r.err;
}

TEST_F(CpCliTest, ReuploadSendsNoNewData) {
  const std::string dir = LocalDir("cp-dedup");
  testing::WriteLocalFile(dir + "/a.bin", AsString(testing::RandomBytes(1'000'000, 5)));
  auto r = Run("cp --json " + dir + "/a.bin hf://buckets/team/data/a.bin");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto first = nlohmann::json::parse(r.out);
  EXPECT_EQ(first["operation"], "upload");
  EXPECT_EQ(first["files"], 1);
  EXPECT_EQ(first["bytes"], 1'000'000);
  EXPECT_GT(first["bytes_sent"].get<uint64_t>(), 900'000u);  // random data: all new
  EXPECT_EQ(first["bytes_deduplicated"], 0);
  EXPECT_EQ(r.err, "");

  r = Run("cp --json " + dir + "/a.bin hf://buckets/team/data/copy.bin");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto second = nlohmann::json::parse(r.out);
  EXPECT_EQ(second["bytes_deduplicated"], 1'000'000);
  EXPECT_DOUBLE_EQ(second["dedup_ratio"].get<double>(), 1.0);
  EXPECT_LT(second["bytes_sent"].get<uint64_t>(), 10'000u);  // a shard, no xorb
  const auto files = RemoteFiles("team/data");
  EXPECT_EQ(files.at("a.bin").xet_hash, files.at("copy.bin").xet_hash);
}

// The persistent shard cache: a later cp process finds chunks of earlier uploads even where
// the server's global dedup cannot (the new file's first chunk is new, so its dedup query
// finds nothing). --no-cache leaves only global dedup and writes no cache.
TEST_F(CpCliTest, TheShardCacheDedupsAcrossProcessesUnlessDisabled) {
  const std::string dir = LocalDir("cp-cache");
  const std::string base = AsString(testing::RandomBytes(2'000'000, 21));
  testing::WriteLocalFile(dir + "/base.bin", base);
  testing::WriteLocalFile(dir + "/grown.bin", AsString(testing::RandomBytes(100'000, 22)) + base);
  const std::string cache = dir + "/cache";
  auto r = Run("cp --json --cache-dir " + cache + " " + dir + "/base.bin hf://buckets/team/data/b");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  size_t shard_files = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(cache + "/shards")) {
    shard_files += e.path().extension() == ".shard";
  }
  EXPECT_GE(shard_files, 1u);

  r = Run("cp --json --no-cache --cache-dir " + dir + "/unused " + dir +
          "/grown.bin hf://buckets/team/data/g1");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_GT(nlohmann::json::parse(r.out)["bytes_sent"].get<uint64_t>(), 1'500'000u);
  EXPECT_FALSE(std::filesystem::exists(dir + "/unused"));

  r = Run("cp --json --cache-dir " + cache + " " + dir + "/grown.bin hf://buckets/team/data/g2");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto with_cache = nlohmann::json::parse(r.out);
  EXPECT_LT(with_cache["bytes_sent"].get<uint64_t>(), 400'000u);
  EXPECT_GT(with_cache["bytes_deduplicated"].get<uint64_t>(), 1'600'000u);
  const auto files = RemoteFiles("team/data");
  EXPECT_EQ(files.at("g2").xet_hash, XetHashOf(dir + "/grown.bin"));
  EXPECT_EQ(files.at("g1").xet_hash, files.at("g2").xet_hash);
}

TEST_F(CpCliTest, QuietPrintsNothing) {
  const std::string dir = LocalDir("cp-quiet");
  testing::WriteLocalFile(dir + "/a.txt", "a");
  const auto r = Run("cp -q " + dir + "/a.txt hf://buckets/team/data/a.txt");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "");
}

TEST_F(CpCliTest, ProgressIsDrawnOnATerminal) {
  const std::string dir = LocalDir("cp-tty");
  testing::WriteLocalFile(dir + "/a.bin", AsString(testing::RandomBytes(2'000'000, 6)));
  // `script` runs the command on a pseudo-terminal and copies what it printed.
  const std::string cmd = std::string("env XETSTORE_ENDPOINT=") + url() +
                          " XETSTORE_TOKEN=" + admin_token() + " " + XETSTORE_BINARY + " cp " +
                          dir + "/a.bin hf://buckets/team/data/a.bin";
  const auto r = testing::RunShell("script -qec '" + cmd + "' /dev/null");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\r\x1b[Kupload  "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" files  "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("uploaded 1 file, 1.91 MiB read: "), std::string::npos) << r.out;
}

TEST_F(CpCliTest, ServerSideCopyOfAFile) {
  CreateBucket("team/other");
  const std::string dir = LocalDir("cp-remote");
  testing::WriteLocalFile(dir + "/a.bin", AsString(testing::RandomBytes(100'000, 7)));
  ASSERT_EQ(Run("cp -q " + dir + "/a.bin hf://buckets/team/data/src/a.bin").exit_code, 0);

  auto r = Run("cp hf://buckets/team/data/src/a.bin hf://buckets/team/data/dst/b.bin");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "copy: hf://buckets/team/data/src/a.bin -> hf://buckets/team/data/dst/b.bin\n");
  r = Run("cp hf://buckets/team/data/src/a.bin hf://buckets/team/other/");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "copy: hf://buckets/team/data/src/a.bin -> hf://buckets/team/other/a.bin\n");

  const std::string hash = XetHashOf(dir + "/a.bin");
  auto files = RemoteFiles("team/data");
  EXPECT_EQ(files.at("dst/b.bin").xet_hash, hash);
  EXPECT_EQ(files.at("src/a.bin").xet_hash, hash);
  files = RemoteFiles("team/other");
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(files.at("a.bin").xet_hash, hash);
}

TEST_F(CpCliTest, ServerSideCopyOfADirectory) {
  CreateBucket("team/other");
  const std::string dir = LocalDir("cp-remote-dir");
  testing::WriteLocalFile(dir + "/d/x.txt", "x");
  testing::WriteLocalFile(dir + "/d/y/z.txt", "zz");
  testing::WriteLocalFile(dir + "/top.txt", "top");
  ASSERT_EQ(Run("cp -q -r " + dir + " hf://buckets/team/data").exit_code, 0);

  auto r = Run("cp hf://buckets/team/data/d hf://buckets/team/data/e");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("is a directory"), std::string::npos) << r.err;

  r = Run("cp -r hf://buckets/team/data/d hf://buckets/team/data/e --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["server_side"], true);
  auto files = RemoteFiles("team/data", "e");
  EXPECT_EQ(files.size(), 2u);
  EXPECT_TRUE(files.contains("e/x.txt"));
  EXPECT_TRUE(files.contains("e/y/z.txt"));

  // A whole bucket into another's subdirectory, and into another's root.
  r = Run("cp -r hf://buckets/team/data hf://buckets/team/other/all");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  files = RemoteFiles("team/other");
  EXPECT_EQ(files.size(), 5u);  // top.txt, d/x.txt, d/y/z.txt, e/x.txt, e/y/z.txt
  EXPECT_EQ(files.at("all/top.txt").xet_hash, XetHashOf(dir + "/top.txt"));
  r = Run("cp -r hf://buckets/team/data/d hf://buckets/team/other");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  files = RemoteFiles("team/other");
  EXPECT_TRUE(files.contains("x.txt"));
  EXPECT_TRUE(files.contains("y/z.txt"));
}

TEST_F(CpCliTest, MissingSourcesAndBucketsAreNotFound) {
  const std::string dir = LocalDir("cp-missing");
  testing::WriteLocalFile(dir + "/a.txt", "a");
  auto r = Run("cp " + dir + "/a.txt hf://buckets/team/nope/a.txt");
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.err.rfind("xetstore: error: ", 0), 0u) << r.err;
  r = Run("cp " + dir + "/absent.txt hf://buckets/team/data/a.txt");
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.err, "xetstore: error: " + dir + "/absent.txt: no such file\n");
  r = Run("cp hf://buckets/team/data/absent hf://buckets/team/data/b");
  EXPECT_EQ(r.exit_code, 3);
  r = Run("cp hf://buckets/team/nope/a hf://buckets/team/data/b");
  EXPECT_EQ(r.exit_code, 3);
}

TEST_F(CpCliTest, BadPathsAreUsageErrorsAndUnuploadableEntriesAreSkipped) {
  const std::string dir = LocalDir("cp-bad");
  testing::WriteLocalFile(dir + "/a.txt", "a");
  for (const std::string dst : {"hf://buckets/team", "hf://buckets/team/data/a//b",
                                "hf://datasets/team/data/a", "hf://buckets/team/da ta/a"}) {
    const auto r = Run("cp " + dir + "/a.txt '" + dst + "'");
    EXPECT_EQ(r.exit_code, 2) << dst << ": " << r.err;
    EXPECT_EQ(r.err.rfind("xetstore: error: ", 0), 0u) << r.err;
  }
  const auto r = Run("cp " + dir + "/a.txt " + dir + "/b.txt");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("hint: "), std::string::npos);
  // Entries that cannot be uploaded are skipped with a warning each; the rest goes up.
  testing::WriteLocalFile(dir + "/tree/ok.txt", "ok");
  testing::WriteLocalFile(dir + "/tree/back\\slash.txt", "x");
  ASSERT_EQ(::mkfifo((dir + "/tree/fifo").c_str(), 0600), 0);
  const auto r2 = Run("cp -q -r " + dir + "/tree hf://buckets/team/data/t");
  EXPECT_EQ(r2.exit_code, 0) << r2.err;
  EXPECT_NE(r2.err.find("xetstore: warning: skipped " + dir + "/tree/back\\slash.txt: "),
            std::string::npos)
      << r2.err;
  EXPECT_NE(r2.err.find("xetstore: warning: skipped " + dir + "/tree/fifo: not a regular file"),
            std::string::npos)
      << r2.err;
  const auto files = RemoteFiles("team/data");
  ASSERT_EQ(files.size(), 1u);
  EXPECT_TRUE(files.contains("t/ok.txt"));
}

TEST_F(CpCliTest, ReadOnlyTokenCannotUpload) {
  const std::string reader = server().CreateToken("read", "team/data");
  const std::string dir = LocalDir("cp-ro");
  testing::WriteLocalFile(dir + "/a.txt", "a");
  auto r = RunAs(reader, "cp " + dir + "/a.txt hf://buckets/team/data/a.txt");
  EXPECT_EQ(r.exit_code, 4) << r.err;
  EXPECT_EQ(r.err.rfind("xetstore: error: ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find("hint: the token lacks the permission"), std::string::npos) << r.err;
  // Server-side copies need write access too.
  ASSERT_EQ(Run("cp -q " + dir + "/a.txt hf://buckets/team/data/a.txt").exit_code, 0);
  r = RunAs(reader, "cp hf://buckets/team/data/a.txt hf://buckets/team/data/b.txt");
  EXPECT_EQ(r.exit_code, 4) << r.err;
  // Anonymous: 401.
  r = RunAs("", "cp " + dir + "/a.txt hf://buckets/team/data/c.txt");
  EXPECT_EQ(r.exit_code, 4) << r.err;
  EXPECT_EQ(RemoteFiles("team/data").size(), 1u);
}

TEST_F(CpCliTest, InterruptedUploadAddsNothing) {
  // cp from stdin blocks reading the pipe: the signal arrives mid-upload.
  testing::BackgroundXetstore cp({"cp", "-", "hf://buckets/team/data/never.bin", "--endpoint",
                                  url(), "--token", admin_token()});
  ASSERT_TRUE(cp.WriteStdin(AsString(testing::RandomBytes(100'000, 8))));
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  cp.Signal(SIGINT);
  const auto r = cp.Wait();
  EXPECT_EQ(r.exit_code, 130);
  EXPECT_EQ(r.err.rfind("xetstore: error: interrupted\nhint: nothing was added to the bucket", 0),
            0u)
      << r.err;
  EXPECT_TRUE(RemoteFiles("team/data").empty());
}

}  // namespace
}  // namespace xet
