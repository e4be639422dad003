#include "client/download/part_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/huge_pages.h"
#include "support/temp_dir.h"

namespace xet {
namespace {

Hash H(uint8_t b) {
  std::array<uint8_t, 32> a{};
  a[0] = b;
  a[31] = static_cast<uint8_t>(b * 7);
  return Hash::FromArray(a);
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Status Write(PartFile& p, const std::string& s, uint64_t off) {
  iovec v{const_cast<char*>(s.data()), s.size()};
  return p.WriteAt(std::span<const iovec>(&v, 1), off);
}

TEST(PartSidecar, RoundTrips) {
  PartSidecar s{H(1), 12345, 4096, {}};
  s.done[0] = {{H(2), 100}, {H(3), 1ull << 40}};
  s.done[7] = {};
  auto back = ParseSidecar(SerializeSidecar(s));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->file_hash, s.file_hash);
  EXPECT_EQ(back->size, s.size);
  EXPECT_EQ(back->block_bytes, s.block_bytes);
  EXPECT_EQ(back->done, s.done);
}

TEST(PartSidecar, RejectsDamage) {
  EXPECT_FALSE(ParseSidecar("").ok());
  EXPECT_FALSE(ParseSidecar("{\"version\":1}").ok());
  EXPECT_FALSE(ParseSidecar("[1,2]").ok());
  PartSidecar s{H(1), 10, 4, {{0, {{H(2), 5}}}}};
  std::string text = SerializeSidecar(s);
  std::string bad = text;
  bad.replace(bad.find("\"chunks\":\"") + 10, 1, "z");
  EXPECT_FALSE(ParseSidecar(bad).ok());
  bad = text;
  bad.replace(bad.find("\"version\":1"), 11, "\"version\":9");
  EXPECT_FALSE(ParseSidecar(bad).ok());
}

TEST(PartFile, FreshWriteCommitRenamesAtomically) {
  testing::TempDir dir;
  const std::string dest = dir.path() + "/out.bin";
  {
    auto p = PartFile::Open(dest, H(1), 10, 4);
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    EXPECT_FALSE((*p)->resumed());
    EXPECT_TRUE(std::filesystem::exists(PartFile::PartPath(dest)));
    EXPECT_TRUE(std::filesystem::exists(PartFile::SidecarPath(dest)));
    EXPECT_EQ(std::filesystem::file_size(PartFile::PartPath(dest)), 10u);
    ASSERT_TRUE(Write(**p, "6789", 6).ok());
    ASSERT_TRUE(Write(**p, "012345", 0).ok());
    EXPECT_FALSE(std::filesystem::exists(dest));  // nothing at the destination yet
    ASSERT_TRUE((*p)->Commit().ok());
  }
  EXPECT_EQ(Slurp(dest), "0123456789");
  EXPECT_FALSE(std::filesystem::exists(PartFile::PartPath(dest)));
  EXPECT_FALSE(std::filesystem::exists(PartFile::SidecarPath(dest)));
}

TEST(PartFile, ResumesCompletedBlocksOnlyForTheSameFile) {
  testing::TempDir dir;
  const std::string dest = dir.path() + "/out.bin";
  {
    auto p = PartFile::Open(dest, H(1), 10, 4);
    ASSERT_TRUE(p.ok());
    ASSERT_TRUE(Write(**p, "abcd", 0).ok());
    ASSERT_TRUE((*p)->MarkDone(0, {{H(5), 4}}).ok());
    ASSERT_TRUE(Write(**p, "ef", 4).ok());  // block 1 unfinished: not recorded
  }                                         // interrupted: the partial file and sidecar stay
  {
    auto p = PartFile::Open(dest, H(1), 10, 4);
    ASSERT_TRUE(p.ok());
    EXPECT_TRUE((*p)->resumed());
    EXPECT_TRUE((*p)->IsDone(0));
    EXPECT_FALSE((*p)->IsDone(1));
    EXPECT_EQ((*p)->AllChunks(), (std::vector<ChunkInfo>{{H(5), 4}}));
    ASSERT_TRUE((*p)->MarkDone(2, {{H(7), 2}}).ok());
    ASSERT_TRUE((*p)->MarkDone(1, {{H(6), 4}}).ok());
    // In file (block) order, whatever order blocks finished in.
    EXPECT_EQ((*p)->AllChunks(), (std::vector<ChunkInfo>{{H(5), 4}, {H(6), 4}, {H(7), 2}}));
  }
  // Another hash, size or block size starts afresh.
  for (auto [hash, size, block] : {std::tuple{H(9), 10ull, 4ull}, std::tuple{H(1), 11ull, 4ull},
                                   std::tuple{H(1), 10ull, 8ull}}) {
    {
      auto p = PartFile::Open(dest, H(1), 10, 4);  // re-create a resumable state
      ASSERT_TRUE(p.ok());
      ASSERT_TRUE((*p)->MarkDone(0, {{H(5), 4}}).ok());
    }
    auto p = PartFile::Open(dest, hash, size, block);
    ASSERT_TRUE(p.ok());
    EXPECT_FALSE((*p)->resumed());
    EXPECT_FALSE((*p)->IsDone(0));
    EXPECT_EQ(std::filesystem::file_size(PartFile::PartPath(dest)), size);
  }
}

// RecordDone alone lists a block in memory only: a crash (here: the object dropped
// without Checkpoint or Commit) loses it from the sidecar; Checkpoint saves every block
// recorded since the last one.
TEST(PartFile, RecordedBlocksSurviveOnlyACheckpoint) {
  testing::TempDir dir;
  const std::string dest = dir.path() + "/out.bin";
  {
    auto p = PartFile::Open(dest, H(1), 12, 4);
    ASSERT_TRUE(p.ok());
    ASSERT_TRUE(Write(**p, "abcdefgh", 0).ok());
    (*p)->RecordDone(0, {{H(5), 4}});
    (*p)->RecordDone(1, {{H(6), 4}});
    EXPECT_TRUE((*p)->IsDone(1));
    ASSERT_TRUE((*p)->Checkpoint().ok());
    ASSERT_TRUE(Write(**p, "ijkl", 8).ok());
    (*p)->RecordDone(2, {{H(7), 4}});  // not saved
  }
  {
    auto p = PartFile::Open(dest, H(1), 12, 4);
    ASSERT_TRUE(p.ok());
    EXPECT_TRUE((*p)->resumed());
    EXPECT_TRUE((*p)->IsDone(0));
    EXPECT_TRUE((*p)->IsDone(1));
    EXPECT_FALSE((*p)->IsDone(2));
    ASSERT_TRUE((*p)->Checkpoint().ok());  // nothing new: the sidecar stays as it is
  }
  auto side = ParseSidecar(Slurp(PartFile::SidecarPath(dest)));
  ASSERT_TRUE(side.ok());
  EXPECT_EQ(side->done.size(), 2u);
}

TEST(PartFile, DamagedSidecarOrMissingPartStartsAfresh) {
  testing::TempDir dir;
  const std::string dest = dir.path() + "/out.bin";
  {
    auto p = PartFile::Open(dest, H(1), 10, 4);
    ASSERT_TRUE(p.ok());
    ASSERT_TRUE((*p)->MarkDone(0, {{H(5), 4}}).ok());
  }
  { std::ofstream(PartFile::SidecarPath(dest)) << "{garbage"; }
  {
    auto p = PartFile::Open(dest, H(1), 10, 4);
    ASSERT_TRUE(p.ok());
    EXPECT_FALSE((*p)->resumed());
    ASSERT_TRUE((*p)->MarkDone(0, {{H(5), 4}}).ok());
  }
  std::filesystem::remove(PartFile::PartPath(dest));
  auto p = PartFile::Open(dest, H(1), 10, 4);
  ASSERT_TRUE(p.ok());
  EXPECT_FALSE((*p)->resumed());
}

TEST(PartFile, SidecarTemporariesCountAsPartFiles) {
  EXPECT_TRUE(PartFile::IsPartOrSidecarPath("a/b.bin.xetpart"));
  EXPECT_TRUE(PartFile::IsPartOrSidecarPath("a/b.bin.xetpart.json"));
  EXPECT_TRUE(PartFile::IsPartOrSidecarPath("a/.b.bin.xetpart.json.tmp-123"));
  EXPECT_TRUE(PartFile::IsPartOrSidecarPath(".b.bin.xetpart.json.tmp-123"));
  EXPECT_FALSE(PartFile::IsPartOrSidecarPath("a/.b.bin.tmp-123"));              // not a sidecar's
  EXPECT_FALSE(PartFile::IsPartOrSidecarPath("a/b.bin.xetpart.json.tmp-123"));  // no dot
  EXPECT_FALSE(PartFile::IsPartOrSidecarPath("a/.b.bin.xetpart.json.tmp-12x"));
  EXPECT_FALSE(PartFile::IsPartOrSidecarPath("a/.b.bin.xetpart.json.tmp-"));
  EXPECT_FALSE(PartFile::IsPartOrSidecarPath("a/b.bin"));
}

// A download killed while it rewrote its sidecar leaves the sidecar's temporary behind;
// the next download of the same destination removes it, and only it.
TEST(PartFile, OpenRemovesSidecarTemporariesOfKilledProcessesOnly) {
  testing::TempDir dir;
  const std::string dest = dir.path() + "/out.bin";
  const pid_t dead = ::fork();
  ASSERT_GE(dead, 0);
  if (dead == 0) ::_exit(0);
  int wstatus = 0;
  ASSERT_EQ(::waitpid(dead, &wstatus, 0), dead);
  const std::string stale = dir.path() + "/.out.bin.xetpart.json.tmp-" + std::to_string(dead);
  const std::string running =
      dir.path() + "/.out.bin.xetpart.json.tmp-" + std::to_string(::getppid());
  const std::string other = dir.path() + "/.other.bin.xetpart.json.tmp-" + std::to_string(dead);
  for (const auto& p : {stale, running, other}) std::ofstream(p) << "{}";

  auto p = PartFile::Open(dest, H(1), 10, 4);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_FALSE(std::filesystem::exists(stale));
  EXPECT_TRUE(std::filesystem::exists(running));  // its writer may still rename it
  EXPECT_TRUE(std::filesystem::exists(other));    // another destination's
  EXPECT_TRUE(std::filesystem::exists(PartFile::SidecarPath(dest)));
}

TEST(PartFile, DiscardRemovesEverything) {
  testing::TempDir dir;
  const std::string dest = dir.path() + "/out.bin";
  auto p = PartFile::Open(dest, H(1), 10, 4);
  ASSERT_TRUE(p.ok());
  (*p)->Discard();
  EXPECT_FALSE(std::filesystem::exists(PartFile::PartPath(dest)));
  EXPECT_FALSE(std::filesystem::exists(PartFile::SidecarPath(dest)));
  EXPECT_FALSE(std::filesystem::exists(dest));
}

TEST(PartFile, WriteAtHandlesManyBuffers) {
  testing::TempDir dir;
  const std::string dest = dir.path() + "/out.bin";
  const size_t n = 3000;  // more than IOV_MAX
  auto p = PartFile::Open(dest, H(1), n, n);
  ASSERT_TRUE(p.ok());
  std::string bytes(n, 0);
  for (size_t i = 0; i < n; ++i) bytes[i] = static_cast<char>('a' + i % 26);
  std::vector<iovec> iov;
  for (size_t i = 0; i < n; ++i) iov.push_back({bytes.data() + i, 1});
  ASSERT_TRUE((*p)->WriteAt(iov, 0).ok());
  ASSERT_TRUE((*p)->Commit().ok());
  EXPECT_EQ(Slurp(dest), bytes);
}

// Aligned writes (O_DIRECT where the file system allows it) mix with buffered writes of the
// neighbouring partial pages; unaligned ones fall back to buffered writes. The file must
// read back as the bytes written, whichever way each piece went.
TEST(PartFile, AlignedAndBufferedWritesMix) {
  testing::TempDir dir;
  const std::string dest = dir.path() + "/out.bin";
  constexpr size_t kPage = PartFile::kDirectAlign;
  const size_t size = 5 * kPage + 123;
  std::string expected(size, '\0');
  for (size_t i = 0; i < size; ++i) expected[i] = static_cast<char>('a' + (i * 7) % 26);
  PageAlignedBuffer aligned(4 * kPage);
  ASSERT_NE(aligned.data(), nullptr);
  {
    auto p = PartFile::Open(dest, H(1), size, size);
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    // Pages 1..2 aligned; page 0 and the first half of page 3 buffered.
    std::memcpy(aligned.data(), expected.data() + kPage, 2 * kPage);
    ASSERT_TRUE((*p)->WriteAlignedAt(aligned.span().first(2 * kPage), kPage).ok());
    ASSERT_TRUE(Write(**p, expected.substr(0, kPage), 0).ok());
    ASSERT_TRUE(Write(**p, expected.substr(3 * kPage, kPage / 2), 3 * kPage).ok());
    // Unaligned offset and size through WriteAlignedAt: the rest of the file.
    const size_t from = 3 * kPage + kPage / 2;
    std::memcpy(aligned.data(), expected.data() + from, size - from);
    ASSERT_TRUE(
        (*p)->WriteAlignedAt(std::span<const uint8_t>(aligned.data(), size - from), from).ok());
    ASSERT_TRUE((*p)->Commit().ok());
  }
  EXPECT_EQ(Slurp(dest), expected);
}

}  // namespace
}  // namespace xet
