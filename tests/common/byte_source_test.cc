// OpenFileRangeSource: a byte range of a file, read with pread (several at once), and a
// file that turns out shorter than the range.
#include "common/byte_source.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "support/temp_dir.h"

namespace xet {
namespace {

std::string ReadAll(ByteSource& s, size_t block) {
  std::string out;
  std::vector<uint8_t> buf(block);
  while (true) {
    auto n = s.Read(buf);
    EXPECT_TRUE(n.ok()) << n.status().ToString();
    if (!n.ok() || *n == 0) return out;
    out.append(reinterpret_cast<const char*>(buf.data()), *n);
  }
}

TEST(FileRangeSourceTest, ReadsExactlyItsRange) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/f";
  std::string content;
  for (int i = 0; i < 1000; ++i) content += std::to_string(i) + ",";
  std::ofstream(path, std::ios::binary) << content;
  auto a = OpenFileRangeSource(path, 100, 250);
  auto b = OpenFileRangeSource(path, 0, content.size());
  auto empty = OpenFileRangeSource(path, 7, 0);
  ASSERT_TRUE(a.ok() && b.ok() && empty.ok());
  EXPECT_EQ(ReadAll(**a, 7), content.substr(100, 250));  // reads interleave with b's
  EXPECT_EQ(ReadAll(**b, 4096), content);
  EXPECT_EQ(ReadAll(**empty, 16), "");
  // Past the end of the file: an error once reached, not a short range.
  auto past = OpenFileRangeSource(path, content.size() - 10, 20);
  ASSERT_TRUE(past.ok());
  std::vector<uint8_t> buf(64);
  EXPECT_EQ((*past)->Read(buf).status().code(), Status::Code::kIoError);
  EXPECT_EQ(OpenFileRangeSource(dir.path() + "/missing", 0, 1).status().code(),
            Status::Code::kNotFound);
}

}  // namespace
}  // namespace xet
