// `xetstore cp` when the server fails under it, against a real `xetstore serve`: the server
// SIGKILLed in the middle of an upload (then restarted on the same data directory), and a
// stored xorb corrupted on disk before a download.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "support/cli_fixture.h"
#include "support/test_support.h"

namespace xet {
namespace {

namespace fs = std::filesystem;
using testing::CliServerTest;
using testing::ReadLocalFile;

// Writes `pieces` pieces of 16 MiB of random bytes (seeded from `seed`) to `path`.
void WriteRandomFile(const std::string& path, int pieces, uint64_t seed) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  for (int i = 0; i < pieces; ++i) {
    const auto bytes = testing::RandomBytes(16u << 20, seed + static_cast<uint64_t>(i));
    out.write(reinterpret_cast<const char*>(bytes.data()),
              static_cast<std::streamsize>(bytes.size()));
  }
  ASSERT_TRUE(out.good()) << path;
}

// The stored xorbs (objects below a "xorbs" directory) of a server data directory.
std::vector<std::string> StoredXorbs(const std::string& data_dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(data_dir, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    const std::string p = it->path().string();
    if (it->is_regular_file(ec) && p.find("/xorbs/") != std::string::npos &&
        it->path().filename().string().front() != '.') {
      out.push_back(p);
    }
  }
  return out;
}

// The lines of `err` that are errors ("xetstore: error: ...").
size_t ErrorLines(const std::string& err) {
  size_t n = 0;
  for (size_t at = err.find("xetstore: error: "); at != std::string::npos;
       at = err.find("xetstore: error: ", at + 1)) {
    ++n;
  }
  return n;
}

class CpFaultCliTest : public CliServerTest {
 protected:
  void SetUp() override {
    CliServerTest::SetUp();
    CreateBucket("team/data");
  }
};

TEST_F(CpFaultCliTest, ServerKilledMidUploadThenRestartedUploadCompletes) {
  const std::string dir = LocalDir("fault-up");
  const std::string file = dir + "/big.bin";
  WriteRandomFile(file, 10, 100);  // 160 MiB: at least three xorbs
  const std::string dst = "hf://buckets/team/data/big.bin";

  // One retry: the server stays down, so more would only wait out their backoff.
  testing::BackgroundXetstore cp(
      {"cp", file, dst, "--retries", "1", "--endpoint", url(), "--token", admin_token()});
  // Kill the server once the first xorb is stored: the upload is then under way, with more
  // than 90 MiB still to go.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (StoredXorbs(server().data_dir()).empty() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_FALSE(StoredXorbs(server().data_dir()).empty()) << "no xorb stored in 60 s";
  KillServer();
  const auto failed = cp.Wait();
  EXPECT_NE(failed.exit_code, 0) << failed.err;
  EXPECT_EQ(ErrorLines(failed.err), 1u) << failed.err;
  EXPECT_EQ(failed.err.find("xetstore: error: "), 0u) << failed.err;

  RestartServer();
  // The interrupted upload added nothing to the bucket.
  EXPECT_TRUE(RemoteFiles("team/data").empty());
  const auto again = Run("cp -q " + file + " " + dst);
  ASSERT_EQ(again.exit_code, 0) << again.err;
  const auto listed = RemoteFiles("team/data");
  ASSERT_EQ(listed.count("big.bin"), 1u);
  EXPECT_EQ(listed.at("big.bin").size, 160u << 20);
  EXPECT_EQ(listed.at("big.bin").xet_hash, XetHashOf(file));

  const std::string copy = LocalDir("fault-down") + "/big.bin";
  const auto down = Run("cp -q " + dst + " " + copy);
  ASSERT_EQ(down.exit_code, 0) << down.err;
  EXPECT_TRUE(ReadLocalFile(copy) == ReadLocalFile(file)) << "downloaded bytes differ";
}

TEST_F(CpFaultCliTest, CorruptedXorbFailsTheDownloadAndLeavesNoFile) {
  const std::string dir = LocalDir("fault-corrupt");
  const std::string file = dir + "/data.bin";
  WriteRandomFile(file, 1, 200);  // 16 MiB: one xorb
  ASSERT_EQ(Run("cp -q " + file + " hf://buckets/team/data/data.bin").exit_code, 0);
  const auto xorbs = StoredXorbs(server().data_dir());
  ASSERT_EQ(xorbs.size(), 1u);
  {
    // Flip 64 bytes in the middle of the stored xorb (inside some chunk's data).
    std::fstream f(xorbs[0], std::ios::in | std::ios::out | std::ios::binary);
    const auto middle = static_cast<std::streamoff>(fs::file_size(xorbs[0]) / 2);
    std::string bytes(64, '\0');
    f.seekg(middle);
    f.read(bytes.data(), 64);
    for (char& c : bytes) c = static_cast<char>(~c);
    f.seekp(middle);
    f.write(bytes.data(), 64);
    ASSERT_TRUE(f.good());
  }
  // The server answers downloads of recently uploaded xorbs from memory
  // (server/cache/recent_xorb_cache.h); after a restart it reads the damaged object.
  RestartServer();

  const std::string dst = LocalDir("fault-corrupt-dst") + "/data.bin";
  const auto r = Run("cp hf://buckets/team/data/data.bin " + dst);
  EXPECT_NE(r.exit_code, 0) << r.err;
  EXPECT_EQ(ErrorLines(r.err), 1u) << r.err;
  EXPECT_EQ(r.err.find("xetstore: error: corrupted data: download data.bin: downloaded file "
                       "hashes to "),
            0u)
      << r.err;
  EXPECT_FALSE(fs::exists(dst));  // a .xetpart may remain; the destination name never
  // Streamed to standard output, the bytes are out before the file hash can be checked:
  // the command fails.
  const auto out = Run("cp hf://buckets/team/data/data.bin - > /dev/null");
  EXPECT_NE(out.exit_code, 0);
  EXPECT_EQ(out.err.find("xetstore: error: corrupted data: download data.bin: the bytes written "
                         "to stdout hash to "),
            0u)
      << out.err;
  EXPECT_NE(out.err.find("; discard the output\n"), std::string::npos) << out.err;
}

}  // namespace
}  // namespace xet
