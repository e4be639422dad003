// ReadFileRange: a stored file's bytes, reconstructed server-side from real xorbs in a
// real object store and index, whole and by range, and its refusal to serve corruption.
#include "server/transfer/file_reader.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "server/cas/xorb_ingest.h"
#include "store/local/local_object_store.h"
#include "store/sqlite/sqlite_index.h"
#include "support/store_fixture.h"
#include "support/test_support.h"
#include "support/xet_fixtures.h"

namespace xet {
namespace {

class FileReaderTest : public testing::StoreFixture {
 protected:
  FileReaderTest() : StoreFixture("xet-file-reader") {}

  // Stores the xorbs of `upload` and returns its file record (terms from its shard).
  FileRecord Store(const testing::UploadArtifacts& upload) {
    StoreXorbs(upload, "scope");
    FileRecord f;
    f.file_hash = upload.file_hash;
    f.size = upload.size;
    for (const FileDataSequenceEntry& t : upload.shard.files.at(0).terms) {
      f.terms.push_back(
          FileTerm{t.cas_hash, t.chunk_index_start, t.chunk_index_end, t.unpacked_segment_bytes});
    }
    return f;
  }

  Result<std::string> Read(const FileRecord& f, uint64_t first, uint64_t last) {
    std::string out;
    Status st = ReadFileRange(f, first, last, *cache_, *objects_, [&](std::string_view piece) {
      out.append(piece);
      return true;
    });
    if (!st.ok()) return st;
    return out;
  }
};

std::string Slice(const std::vector<uint8_t>& data, uint64_t first, uint64_t last) {
  return std::string(data.begin() + static_cast<ptrdiff_t>(first),
                     data.begin() + static_cast<ptrdiff_t>(last + 1));
}

TEST_F(FileReaderTest, WholeFileAndRangesMatchTheSource) {
  const std::vector<uint8_t> data = testing::TextLikeBytes(3 << 20, 7);
  const testing::UploadArtifacts upload = testing::PrepareUpload(data);
  ASSERT_GT(upload.chunks.size(), 10u);
  const FileRecord f = Store(upload);

  auto whole = Read(f, 0, data.size() - 1);
  ASSERT_TRUE(whole.ok()) << whole.status().ToString();
  EXPECT_EQ(*whole, testing::AsString(data));

  // First byte, last byte, a mid-chunk start and end spanning chunk boundaries, one chunk's
  // exact extent, and a range inside one chunk.
  const uint64_t c0 = upload.chunks[0].size;
  const uint64_t c1 = c0 + upload.chunks[1].size;
  const std::vector<std::pair<uint64_t, uint64_t>> ranges = {
      {0, 0},
      {data.size() - 1, data.size() - 1},
      {c0 - 5, c1 + 5},
      {c0, c1 - 1},
      {c0 + 10, c0 + 20},
      {12345, data.size() - 777},
  };
  for (auto [first, last] : ranges) {
    auto got = Read(f, first, last);
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    EXPECT_EQ(*got, Slice(data, first, last)) << first << "-" << last;
  }
}

TEST_F(FileReaderTest, ManyTermsAcrossInterleavedXorbs) {
  std::vector<uint8_t> data;
  const testing::UploadArtifacts upload = testing::PrepareInterleavedUpload(64, 9000, 3, &data);
  const FileRecord f = Store(upload);
  ASSERT_EQ(f.terms.size(), 64u);
  auto whole = Read(f, 0, data.size() - 1);
  ASSERT_TRUE(whole.ok()) << whole.status().ToString();
  EXPECT_EQ(*whole, testing::AsString(data));
  auto part = Read(f, 8999, 9000 * 5 + 1);
  ASSERT_TRUE(part.ok()) << part.status().ToString();
  EXPECT_EQ(*part, Slice(data, 8999, 9000 * 5 + 1));
}

TEST_F(FileReaderTest, SinkStoppingEndsTheReadCleanly) {
  const std::vector<uint8_t> data = testing::RandomBytes(1 << 20, 9);
  const FileRecord f = Store(testing::PrepareUpload(data));
  size_t calls = 0;
  Status st = ReadFileRange(f, 0, data.size() - 1, *cache_, *objects_, [&](std::string_view) {
    ++calls;
    return false;
  });
  EXPECT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(calls, 1u);
}

TEST_F(FileReaderTest, RangeOutsideTheFileIsRejected) {
  const std::vector<uint8_t> data = testing::RandomBytes(1000, 1);
  const FileRecord f = Store(testing::PrepareUpload(data));
  EXPECT_EQ(Read(f, 0, 1000).status().code(), Status::Code::kOutOfRange);
  EXPECT_EQ(Read(f, 5, 4).status().code(), Status::Code::kOutOfRange);
}

TEST_F(FileReaderTest, CorruptedObjectIsDetectedNotServed) {
  const std::vector<uint8_t> data = testing::RandomBytes(200000, 5);
  const testing::UploadArtifacts upload = testing::PrepareUpload(data);
  const FileRecord f = Store(upload);
  // Flip one byte inside the first chunk's payload on disk (past its 8-byte header).
  const std::string path = objects_->root() + "/" + XorbKey(upload.xorbs[0].hash);
  {
    std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
    ASSERT_TRUE(file.good()) << path;
    file.seekg(100);
    char c = 0;
    file.read(&c, 1);
    file.seekp(100);
    c = static_cast<char>(c ^ 0x5A);
    file.write(&c, 1);
  }
  auto got = Read(f, 0, data.size() - 1);
  EXPECT_EQ(got.status().code(), Status::Code::kCorruption) << got.status().ToString();
}

TEST_F(FileReaderTest, UnknownXorbIsCorruption) {
  FileRecord f;
  f.size = 10;
  f.terms.push_back(FileTerm{Hash{}, 0, 1, 10});
  EXPECT_EQ(Read(f, 0, 9).status().code(), Status::Code::kCorruption);
}

}  // namespace
}  // namespace xet
