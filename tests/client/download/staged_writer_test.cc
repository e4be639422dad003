// Unit tests for StagedWriter: runs of bytes at any offsets (unaligned, spanning pages and
// staging buffers, out of order) land in the part file exactly; Flush returns once
// everything is written.
#include "client/download/staged_writer.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "support/temp_dir.h"

namespace xet {
namespace {

std::vector<uint8_t> Pattern(size_t n, uint8_t seed) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(seed * 31 + i * 7 + (i >> 12));
  return v;
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(StagedWriter, WritesRunsAtTheirOffsets) {
  testing::TempDir dir;
  const std::string dest = dir.path() + "/out";
  // Three runs: one crossing both staging buffers, two small unaligned ones, written in
  // an order that is not the file's.
  const uint64_t big_at = 5000;
  const size_t big = 2 * StagedWriter::kStagingBytes + 12345;
  const uint64_t size = big_at + big + 9000;
  auto part = PartFile::Open(dest, Hash{}, size, size);
  ASSERT_TRUE(part.ok()) << part.status().ToString();
  std::vector<uint8_t> want(size, 0);
  struct Run {
    uint64_t at;
    std::vector<uint8_t> bytes;
  };
  std::vector<Run> runs = {
      {big_at + big + 10, Pattern(8000, 3)}, {big_at, Pattern(big, 1)}, {3, Pattern(4000, 2)}};
  StagedWriter w;
  w.Reset(part->get());
  for (const Run& r : runs) {
    // In uneven pieces, as decoded chunks come.
    for (size_t off = 0; off < r.bytes.size();) {
      const size_t n = std::min<size_t>(r.bytes.size() - off, 65536 + off % 977);
      ASSERT_TRUE(w.Write(r.at + off, std::span<const uint8_t>(r.bytes).subspan(off, n)).ok());
      off += n;
    }
    std::copy(r.bytes.begin(), r.bytes.end(), want.begin() + static_cast<ptrdiff_t>(r.at));
  }
  ASSERT_TRUE(w.Flush().ok());
  ASSERT_TRUE(w.Settle().ok());
  const std::string got = Slurp(PartFile::PartPath(dest));
  ASSERT_EQ(got.size(), size);
  EXPECT_TRUE(std::equal(want.begin(), want.end(), reinterpret_cast<const uint8_t*>(got.data())));
}

TEST(StagedWriter, FlushWithNothingStagedIsOk) {
  StagedWriter w;
  w.Reset(nullptr);
  EXPECT_TRUE(w.Flush().ok());
  EXPECT_TRUE(w.Settle().ok());
}

}  // namespace
}  // namespace xet
