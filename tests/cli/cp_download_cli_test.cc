// `xetstore cp` from buckets to the local disk and to stdout, against a real `xetstore
// serve`: byte-exact round trips, destinations, errors, a full disk and interruption.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>

#include "support/cli_fixture.h"
#include "support/test_support.h"

namespace xet {
namespace {

using testing::CliServerTest;
using testing::ReadLocalFile;
using testing::WriteLocalFile;

std::string AsString(const std::vector<uint8_t>& v) { return std::string(v.begin(), v.end()); }

// Every regular file under `dir`, relative path -> content.
std::map<std::string, std::string> LocalTree(const std::string& dir) {
  std::map<std::string, std::string> out;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
    if (e.is_regular_file()) {
      out[std::filesystem::relative(e.path(), dir).generic_string()] =
          ReadLocalFile(e.path().string());
    }
  }
  return out;
}

class CpDownloadCliTest : public CliServerTest {
 protected:
  void SetUp() override {
    CliServerTest::SetUp();
    CreateBucket("team/data");
    src_ = LocalDir("dl-src");
    files_ = {
        {"empty.bin", ""},
        {"small.txt", "hello"},
        {"multi/chunk.bin", AsString(testing::RandomBytes(3'000'000, 11))},
        {"multi/text.log", AsString(testing::TextLikeBytes(700'000, 12))},
        {"a/b/c/deep.bin", AsString(testing::RandomBytes(70'000, 13))},
    };
    for (const auto& [path, data] : files_) WriteLocalFile(src_ + "/" + path, data);
    const auto r = Run("cp -q -r " + src_ + " hf://buckets/team/data/set");
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  std::string src_;
  std::map<std::string, std::string> files_;
};

TEST_F(CpDownloadCliTest, FolderRoundTripIsByteExact) {
  const std::string dst = LocalDir("dl-dst") + "/copy";
  const auto r = Run("cp -r hf://buckets/team/data/set " + dst);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(LocalTree(dst), files_);  // no .xetpart or other leftovers either
  EXPECT_EQ(r.err.rfind("downloaded 5 files, ", 0), 0u) << r.err;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 5) << r.out;
}

// --chunk-cache keeps downloaded chunks under <cache>/chunks; a second download is served
// from there and is still byte-exact. Without the flag no chunk cache is written.
TEST_F(CpDownloadCliTest, ChunkCacheIsOptInAndServesRepeatedDownloads) {
  const std::string dir = LocalDir("dl-cache");
  const std::string cache = dir + "/cache";
  auto r = Run("cp -q --cache-dir " + cache + " hf://buckets/team/data/set/multi/chunk.bin " + dir +
               "/plain.bin");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(std::filesystem::exists(cache + "/chunks"));
  for (const char* name : {"first.bin", "second.bin"}) {
    r = Run("cp -q --chunk-cache --cache-dir " + cache +
            " hf://buckets/team/data/set/multi/chunk.bin " + dir + "/" + name);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(ReadLocalFile(dir + "/" + name), files_["multi/chunk.bin"]) << name;
  }
  size_t entries = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(cache + "/chunks")) {
    entries += e.is_regular_file();
  }
  EXPECT_GT(entries, 0u);
}

TEST_F(CpDownloadCliTest, SingleFileDestinations) {
  const std::string dst = LocalDir("dl-one");
  // Into an existing directory: keeps its name.
  auto r = Run("cp -q hf://buckets/team/data/set/multi/chunk.bin " + dst);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(ReadLocalFile(dst + "/chunk.bin"), files_["multi/chunk.bin"]);
  // To an explicit name, replacing what was there.
  WriteLocalFile(dst + "/renamed.txt", "old content that is longer");
  r = Run("cp -q hf://buckets/team/data/set/small.txt " + dst + "/renamed.txt");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(ReadLocalFile(dst + "/renamed.txt"), "hello");
  // An empty file.
  r = Run("cp -q hf://buckets/team/data/set/empty.bin " + dst + "/e");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(std::filesystem::exists(dst + "/e"));
  EXPECT_EQ(std::filesystem::file_size(dst + "/e"), 0u);
}

TEST_F(CpDownloadCliTest, ToStdout) {
  const std::string dst = LocalDir("dl-stdout");
  auto r = Run("cp hf://buckets/team/data/set/multi/text.log - > " + dst + "/out");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(ReadLocalFile(dst + "/out"), files_["multi/text.log"]);
  // --json: the summary goes to stderr, stdout carries only the file.
  r = Run("cp --json hf://buckets/team/data/set/small.txt -");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "hello");
  const auto j = nlohmann::json::parse(r.err);
  EXPECT_EQ(j["operation"], "download");
  EXPECT_EQ(j["bytes"], 5);
  r = Run("cp hf://buckets/team/data/set/empty.bin -");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "");
  // A directory cannot go to stdout.
  r = Run("cp -r hf://buckets/team/data/set -");
  EXPECT_EQ(r.exit_code, 2) << r.err;
}

TEST_F(CpDownloadCliTest, DiskFullIsReported) {
  const auto r = Run("cp hf://buckets/team/data/set/multi/chunk.bin - > /dev/full");
  EXPECT_EQ(r.exit_code, 6) << r.err;
  EXPECT_EQ(r.err.rfind("xetstore: error: disk full: ", 0), 0u) << r.err;
}

// A destination that exists and is not a regular file (a FIFO, a device) is written in
// place, like stdout: renaming a finished download over it would replace the device or
// FIFO itself with a regular file (as root, `cp ... /dev/null` replaced /dev/null).
TEST_F(CpDownloadCliTest, SpecialFileDestinationsAreWrittenInPlace) {
  const std::string dir = LocalDir("dl-special");
  const std::string fifo = dir + "/pipe";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0) << std::strerror(errno);
  // xetstore in the background, a reader in the foreground, then xetstore's exit status.
  auto r = Run("cp -q hf://buckets/team/data/set/multi/chunk.bin " + fifo + " & cat " + fifo +
               " > " + dir + "/out; wait $!");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(ReadLocalFile(dir + "/out"), files_["multi/chunk.bin"]);
  struct stat st {};
  ASSERT_EQ(::stat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
  EXPECT_FALSE(std::filesystem::exists(fifo + ".xetpart"));
  // A device that refuses the bytes: a clear disk-full error, and the device stays one.
  r = Run("cp hf://buckets/team/data/set/multi/chunk.bin /dev/full");
  EXPECT_EQ(r.exit_code, 6) << r.err;
  EXPECT_EQ(r.err.rfind("xetstore: error: disk full: ", 0), 0u) << r.err;
  ASSERT_EQ(::stat("/dev/full", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
}

TEST_F(CpDownloadCliTest, Errors) {
  const std::string dst = LocalDir("dl-err");
  auto r = Run("cp hf://buckets/team/data/set/missing.bin " + dst);
  EXPECT_EQ(r.exit_code, 3) << r.err;
  r = Run("cp hf://buckets/team/nope/x " + dst);
  EXPECT_EQ(r.exit_code, 3) << r.err;
  r = Run("cp hf://buckets/team/data/set " + dst);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("is a directory"), std::string::npos) << r.err;
  // A token that cannot read the bucket sees nothing there.
  r = RunAs(server().CreateToken("read", "team/other"),
            "cp hf://buckets/team/data/set/small.txt " + dst);
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_TRUE(std::filesystem::is_empty(dst));
}

TEST_F(CpDownloadCliTest, PublicBucketsNeedNoToken) {
  CreateBucket("team/open", /*is_public=*/true);
  ASSERT_EQ(
      Run("cp -q hf://buckets/team/data/set/small.txt hf://buckets/team/open/s.txt").exit_code, 0);
  const auto r = RunAs("", "cp hf://buckets/team/open/s.txt -");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "hello");
}

TEST_F(CpDownloadCliTest, InterruptedDownloadLeavesNoHalfWrittenFile) {
  const std::string big = AsString(testing::RandomBytes(40'000'000, 14));
  WriteLocalFile(src_ + "/big.bin", big);
  ASSERT_EQ(Run("cp -q " + src_ + "/big.bin hf://buckets/team/data/big.bin").exit_code, 0);
  const std::string dst = LocalDir("dl-int") + "/big.bin";
  testing::BackgroundXetstore cp(
      {"cp", "hf://buckets/team/data/big.bin", dst, "--endpoint", url(), "--token", admin_token()});
  // Interrupt once the download is under way (its .xetpart exists, so the interrupt handler
  // is installed; a fixed delay raced with a slow start, e.g. under ASan), or once it is done.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!std::filesystem::exists(dst + ".xetpart") && !std::filesystem::exists(dst) &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  cp.Signal(SIGINT);
  const auto r = cp.Wait();
  if (r.exit_code == 0) {
    // The download won the race: then it is complete.
    EXPECT_EQ(ReadLocalFile(dst), big);
  } else {
    EXPECT_EQ(r.exit_code, 130) << r.err;
    EXPECT_EQ(r.err.rfind("xetstore: error: interrupted\n", 0), 0u) << r.err;
    EXPECT_FALSE(std::filesystem::exists(dst));
  }
  // Running it again completes the file.
  const auto again = Run("cp -q hf://buckets/team/data/big.bin " + dst);
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(ReadLocalFile(dst), big);
  EXPECT_FALSE(std::filesystem::exists(dst + ".xetpart"));
}

}  // namespace
}  // namespace xet
