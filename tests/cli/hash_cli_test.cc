// `xetstore hash` and `xetstore chunks`, run as a user would run them.
#include <gtest/gtest.h>

#include <sstream>

#include "format/keyed_hash.h"
#include "format/sha256.h"
#include "support/subprocess.h"
#include "support/test_support.h"

namespace xet {
namespace {

using testing::LoadConformanceJson;
using testing::RunXetstore;

TEST(HashCli, ChunksMatchesConformanceVectors) {
  const auto j = LoadConformanceJson("extra.json")["splitmix64_seed0_1000000"];
  const auto data = testing::SplitMix64Bytes(0, 1'000'000);
  const auto path = testing::WriteTempFile("splitmix0.bin", data.data(), data.size());
  const auto r = RunXetstore("chunks " + path);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::ostringstream want;
  for (const auto& c : j["chunks"]) {
    want << c[0].get<std::string>() << ' ' << c[1].get<uint64_t>() << '\n';
  }
  EXPECT_EQ(r.out, want.str());
  // Same through stdin.
  const auto piped = RunXetstore("chunks - < " + path);
  EXPECT_EQ(piped.out, want.str());
}

TEST(HashCli, HashPrintsXetHashSizeSha256AndName) {
  const auto j = LoadConformanceJson("extra.json")["splitmix64_seed0_1000000"];
  const auto data = testing::SplitMix64Bytes(0, 1'000'000);
  const auto path = testing::WriteTempFile("splitmix0.bin", data.data(), data.size());
  const auto r = RunXetstore("hash " + path + " - < " + path);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string fields =
      j["file_hash"].get<std::string>() + " 1000000 " + Sha256Hex(Sha256Of(data));
  EXPECT_EQ(r.out, fields + " " + path + "\n" + fields + " -\n");
}

TEST(HashCli, EmptyFileHasZeroHash) {
  const auto path = testing::WriteTempFile("empty.bin", "", 0);
  const auto r = RunXetstore("hash " + path);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, std::string(64, '0') + " 0 " +
                       "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855 " + path +
                       "\n");
  EXPECT_EQ(RunXetstore("chunks " + path).out, "");
}

TEST(HashCli, JsonOutput) {
  const auto path = testing::WriteTempFile("hello.txt", "hello world", 11);
  const auto r = RunXetstore("hash --json " + path);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["size"], 11);
  EXPECT_EQ(j["chunks"], 1);
  EXPECT_EQ(j["sha256"], "b94d27b9934d3e08a52e52d7da7dabfac484efe37a5380ee9088f7ace2efcde9");
  // A one-chunk file's hash: keyed BLAKE3 (zero key) over its chunk hash, which extra.json
  // gives for "hello world".
  const auto extra = LoadConformanceJson("extra.json");
  const Hash chunk = testing::HashFromHex(extra["chunk_hash"][1]["chunk_hash"]);
  ASSERT_EQ(extra["chunk_hash"][1]["input_ascii"], "hello world");
  EXPECT_EQ(j["xet_hash"], KeyedBlake3(keys::kFileHashKey, chunk.data(), 32).ToHex());
}

TEST(HashCli, MissingFileFailsWithOneLineErrorButHashesTheRest) {
  const auto path = testing::WriteTempFile("ok.txt", "x", 1);
  const auto r = RunXetstore("hash /nonexistent/file " + path);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "xetstore: error: /nonexistent/file: no such file\n");
  EXPECT_NE(r.out.find(path), std::string::npos);
}

TEST(HashCli, DirectoryIsAnError) {
  const auto r = RunXetstore("chunks /tmp");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("Is a directory"), std::string::npos) << r.err;
}

TEST(HashCli, UsageErrors) {
  EXPECT_NE(RunXetstore("").exit_code, 0);
  EXPECT_NE(RunXetstore("hash").exit_code, 0);
  EXPECT_NE(RunXetstore("frobnicate").exit_code, 0);
  const auto help = RunXetstore("--help");
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("hash"), std::string::npos);
}

}  // namespace
}  // namespace xet
