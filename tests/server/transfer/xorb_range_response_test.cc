#include "server/transfer/xorb_range_response.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "support/temp_dir.h"

namespace xet {
namespace {

constexpr uint64_t kDataLength = 100;

// A stored object: 100 bytes of chunk data (byte i = 'A' + i % 26) and a 20-byte footer.
class XorbRangeResponseTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (size_t i = 0; i < kDataLength; ++i) object.push_back(static_cast<uint8_t>('A' + i % 26));
    object.resize(kDataLength + 20, 0xEE);
  }
  XorbReader Reader() {
    return [this](uint64_t offset, std::span<uint8_t> out) {
      ++reads;
      if (offset + out.size() > object.size()) return Status::IoError("short read");
      std::memcpy(out.data(), object.data() + offset, out.size());
      return Status::Ok();
    };
  }
  HttpResponse Get(std::vector<ByteRange> signed_ranges, std::optional<std::string_view> range) {
    XorbRangeResponseOptions o;
    o.boundary = "BOUNDARY";
    return BuildXorbRangeResponse(kDataLength, signed_ranges, range, Reader(), o);
  }
  std::string Data(uint64_t first, uint64_t last) {
    return std::string(object.begin() + static_cast<long>(first),
                       object.begin() + static_cast<long>(last) + 1);
  }
  std::vector<uint8_t> object;
  int reads = 0;

  // Builds large answers (over a 10-byte stream threshold) from `make_source()` for ranges
  // of every shape and checks each is a range body holding the same bytes, under the same
  // headers, as the answer built in memory through the reader. Returns the answers;
  // `source_reads` counts the reads the sources' readers made while they were built.
  std::vector<HttpResponse> LargeAnswers(const std::function<XorbSource()>& make_source);
  int source_reads = 0;
};

std::string Header(const HttpResponse& r, std::string_view name) {
  for (const auto& [k, v] : r.headers.fields()) {
    if (k.size() == name.size() && strncasecmp(k.data(), name.data(), k.size()) == 0) return v;
  }
  return "<absent>";
}

TEST_F(XorbRangeResponseTest, SingleRange) {
  HttpResponse r = Get({{10, 19}, {50, 59}}, "bytes=10-19");
  EXPECT_EQ(r.status, 206);
  EXPECT_EQ(Header(r, "Content-Range"), "bytes 10-19/100");
  EXPECT_EQ(Header(r, "Content-Type"), "application/octet-stream");
  EXPECT_EQ(r.body, Data(10, 19));
}

TEST_F(XorbRangeResponseTest, SubRangeOfASignedRange) {
  HttpResponse r = Get({{0, 99}}, "bytes=40-44");
  EXPECT_EQ(r.status, 206);
  EXPECT_EQ(Header(r, "Content-Range"), "bytes 40-44/100");
  EXPECT_EQ(r.body, "OPQRS");
}

TEST_F(XorbRangeResponseTest, TwoRangesAreMultipartByteranges) {
  HttpResponse r = Get({{0, 4}, {10, 12}}, "bytes=0-4,10-12");
  EXPECT_EQ(r.status, 206);
  EXPECT_EQ(Header(r, "Content-Type"), "multipart/byteranges; boundary=BOUNDARY");
  EXPECT_EQ(Header(r, "Content-Range"), "<absent>");
  EXPECT_EQ(r.body,
            "--BOUNDARY\r\n"
            "Content-Type: application/octet-stream\r\n"
            "Content-Range: bytes 0-4/100\r\n"
            "\r\n"
            "ABCDE\r\n"
            "--BOUNDARY\r\n"
            "Content-Type: application/octet-stream\r\n"
            "Content-Range: bytes 10-12/100\r\n"
            "\r\n"
            "KLM\r\n"
            "--BOUNDARY--\r\n");
}

TEST_F(XorbRangeResponseTest, PartsFollowRequestOrder) {
  HttpResponse r = Get({{0, 4}, {10, 12}}, "bytes=10-10,0-0");
  ASSERT_EQ(r.status, 206);
  EXPECT_LT(r.body.find("bytes 10-10/100"), r.body.find("bytes 0-0/100"));
}

TEST_F(XorbRangeResponseTest, RandomBoundaryByDefault) {
  std::vector<ByteRange> s = {{0, 4}, {10, 12}};
  HttpResponse r = BuildXorbRangeResponse(kDataLength, s, "bytes=0-4,10-12", Reader());
  std::string ct = Header(r, "Content-Type");
  ASSERT_EQ(ct.rfind("multipart/byteranges; boundary=", 0), 0u);
  std::string boundary = ct.substr(std::strlen("multipart/byteranges; boundary="));
  EXPECT_EQ(boundary.size(), 32u);
  EXPECT_EQ(r.body.rfind("--" + boundary + "\r\n", 0), 0u);
  EXPECT_NE(boundary, NewMultipartBoundary());
}

TEST_F(XorbRangeResponseTest, MissingRangeIsForbidden) {
  EXPECT_EQ(Get({{0, 99}}, std::nullopt).status, 403);
  EXPECT_EQ(reads, 0);
}

TEST_F(XorbRangeResponseTest, RangeOutsideTheSignedSetIsForbidden) {
  EXPECT_EQ(Get({{10, 19}}, "bytes=10-20").status, 403);
  EXPECT_EQ(Get({{10, 19}}, "bytes=9-19").status, 403);
  EXPECT_EQ(Get({{10, 19}, {30, 39}}, "bytes=10-19,20-29").status, 403);
  EXPECT_EQ(Get({{10, 19}, {30, 39}}, "bytes=15-35").status, 403);
  EXPECT_EQ(Get({{10, 19}}, "bytes=10-").status, 403);  // open end resolves to 10-99
  EXPECT_EQ(reads, 0);
}

TEST_F(XorbRangeResponseTest, MalformedRangeIsBadRequest) {
  for (const char* h : {"", "bytes=", "bytes=-5", "bytes=5-1", "bytes=a-b", "items=0-1"}) {
    EXPECT_EQ(Get({{0, 99}}, h).status, 400) << h;
  }
}

TEST_F(XorbRangeResponseTest, StartBeyondDataIsUnsatisfiable) {
  // Signed past the chunk data (e.g. a record that disagrees with the object).
  HttpResponse r = Get({{0, 199}}, "bytes=100-150");
  EXPECT_EQ(r.status, 416);
  EXPECT_EQ(Header(r, "Content-Range"), "bytes */100");
  EXPECT_EQ(Get({{0, 199}}, "bytes=150-").status, 416);
  EXPECT_EQ(reads, 0);
}

TEST_F(XorbRangeResponseTest, EndPastDataIsClampedAndFooterNeverServed) {
  HttpResponse r = Get({{0, 199}}, "bytes=95-150");
  EXPECT_EQ(r.status, 206);
  EXPECT_EQ(Header(r, "Content-Range"), "bytes 95-99/100");
  EXPECT_EQ(r.body, Data(95, 99));
  r = Get({{0, 99}}, "bytes=90-");
  EXPECT_EQ(r.status, 206);
  EXPECT_EQ(Header(r, "Content-Range"), "bytes 90-99/100");
}

TEST_F(XorbRangeResponseTest, OverlappingAmplificationIsRefused) {
  EXPECT_EQ(Get({{0, 9}}, "bytes=0-9,0-9").status, 416);
  // Overlap within the signed total is fine.
  HttpResponse r = Get({{0, 9}}, "bytes=0-5,4-7");
  EXPECT_EQ(r.status, 206);
}

TEST_F(XorbRangeResponseTest, SignedBytesPastTheDataDoNotAllowAmplification) {
  // Found by range_header_fuzzer: a signed set reaching far past the data let open-ended
  // requests each resolve to the whole data, up to the (unservable) signed total.
  EXPECT_EQ(Get({{0, 999'999}}, "bytes=0-,0-").status, 416);
  EXPECT_EQ(Get({{0, 999'999}}, "bytes=0-99,50-99").status, 416);
  EXPECT_EQ(Get({{50, 149}, {500, 600}}, "bytes=50-99,60-69").status, 416);
  // Up to what the set holds of the data is still served.
  HttpResponse r = Get({{0, 999'999}}, "bytes=0-");
  EXPECT_EQ(r.status, 206);
  EXPECT_EQ(r.body, Data(0, 99));
  r = Get({{0, 9}, {50, 149}}, "bytes=0-4,2-6,60-");
  EXPECT_EQ(r.status, 206);
  EXPECT_NE(r.body.find(Data(60, 99)), std::string::npos);
}

// Runs a streamed answer's producer and returns what it wrote.
std::string Drain(const HttpResponse& r) {
  std::string out;
  r.stream([&out](std::string_view piece) {
    out += piece;
    return true;
  });
  return out;
}

TEST_F(XorbRangeResponseTest, LargeAnswersStreamTheSameBytesInPieces) {
  for (const char* range : {"bytes=3-60", "bytes=0-9,20-99", "bytes=50-59,0-4"}) {
    SCOPED_TRACE(range);
    const HttpResponse whole = Get({{0, 99}}, range);
    ASSERT_EQ(whole.status, 206);
    ASSERT_FALSE(whole.stream);
    XorbRangeResponseOptions o;
    o.boundary = "BOUNDARY";
    o.stream_threshold = 10;
    o.stream_piece = 7;
    std::vector<ByteRange> signed_ranges = {{0, 99}};
    reads = 0;
    const HttpResponse streamed =
        BuildXorbRangeResponse(kDataLength, signed_ranges, range, Reader(), o);
    EXPECT_EQ(streamed.status, 206);
    ASSERT_TRUE(streamed.stream);
    EXPECT_EQ(reads, 0);  // nothing read before the answer is sent
    EXPECT_EQ(Header(streamed, "Content-Type"), Header(whole, "Content-Type"));
    EXPECT_EQ(Header(streamed, "Content-Range"), Header(whole, "Content-Range"));
    ASSERT_TRUE(streamed.content_length);
    EXPECT_EQ(*streamed.content_length, whole.body.size());
    EXPECT_EQ(Drain(streamed), whole.body);
    EXPECT_GT(reads, 2);  // in pieces of at most 7 bytes
  }
}

// The bytes a RangeBody stands for, read from its file with pread (not sendfile).
// The bytes a range body stands for: its texts and its ranges, read from its file with
// pread or cut from its memory.
std::string Materialize(const RangeBody& body) {
  std::string out;
  for (const RangeBody::Piece& piece : body.pieces) {
    out += piece.text;
    if (body.memory) {
      EXPECT_LE(piece.offset + piece.length, body.memory->size());
      out += body.memory->substr(piece.offset, piece.length);
      continue;
    }
    std::string range(piece.length, '\0');
    const ssize_t n =
        ::pread(body.file.get(), range.data(), range.size(), static_cast<off_t>(piece.offset));
    EXPECT_EQ(n, static_cast<ssize_t>(range.size()));
    out += range;
  }
  return out;
}

std::vector<HttpResponse> XorbRangeResponseTest::LargeAnswers(
    const std::function<XorbSource()>& make_source) {
  std::vector<HttpResponse> out;
  for (const char* range : {"bytes=3-60", "bytes=0-9,20-99", "bytes=50-59,0-4", "bytes=80-"}) {
    SCOPED_TRACE(range);
    const HttpResponse whole = Get({{0, 99}}, range);
    EXPECT_EQ(whole.status, 206);
    XorbRangeResponseOptions o;
    o.boundary = "BOUNDARY";
    o.stream_threshold = 10;
    std::vector<ByteRange> signed_ranges = {{0, 99}};
    const int reads_before = reads;
    HttpResponse r = BuildXorbRangeResponse(kDataLength, signed_ranges, range, make_source(), o);
    source_reads += reads - reads_before;
    EXPECT_EQ(r.status, 206);
    EXPECT_FALSE(r.stream);
    EXPECT_TRUE(r.range_body);
    if (r.range_body) {
      EXPECT_EQ(Header(r, "Content-Type"), Header(whole, "Content-Type"));
      EXPECT_EQ(Header(r, "Content-Range"), Header(whole, "Content-Range"));
      EXPECT_EQ(r.range_body->size(), whole.body.size());
      EXPECT_EQ(Materialize(*r.range_body), whole.body);
    }
    out.push_back(std::move(r));
  }
  return out;
}

TEST_F(XorbRangeResponseTest, LargeAnswersFromAFileAreFileBodiesOfTheSameBytes) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/object";
  {
    std::ofstream f(path, std::ios::binary);
    f.write(reinterpret_cast<const char*>(object.data()),
            static_cast<std::streamsize>(object.size()));
  }
  const auto with_file = [&] {
    return XorbSource(Reader(), UniqueFd(::open(path.c_str(), O_RDONLY | O_CLOEXEC)));
  };
  for (const HttpResponse& r : LargeAnswers(with_file)) {
    ASSERT_TRUE(r.range_body);
    EXPECT_TRUE(r.range_body->file.valid());
  }
  EXPECT_EQ(source_reads, 0);  // the file is sent as it is, not read through the reader
  // Small answers are still built in memory, through the reader.
  std::vector<ByteRange> signed_ranges = {{0, 99}};
  const HttpResponse small =
      BuildXorbRangeResponse(kDataLength, signed_ranges, "bytes=0-4", with_file());
  EXPECT_FALSE(small.range_body);
  EXPECT_EQ(small.body, Data(0, 4));
}

// From memory (a RecentXorbCache entry): large answers are range bodies over that memory,
// small ones are copied from it; both hold the same bytes as answers read from the store.
TEST_F(XorbRangeResponseTest, AnswersFromMemoryHoldTheSameBytes) {
  auto chunk_data = std::make_shared<const std::string>(
      reinterpret_cast<const char*>(object.data()), kDataLength);
  for (const HttpResponse& r : LargeAnswers([&] { return XorbSource::FromMemory(chunk_data); })) {
    ASSERT_TRUE(r.range_body);
    EXPECT_EQ(r.range_body->memory, chunk_data);  // shared, not copied
    EXPECT_FALSE(r.range_body->file.valid());
  }
  std::vector<ByteRange> signed_ranges = {{0, 99}};
  const HttpResponse small = BuildXorbRangeResponse(kDataLength, signed_ranges, "bytes=0-4",
                                                    XorbSource::FromMemory(chunk_data));
  EXPECT_FALSE(small.range_body);
  EXPECT_EQ(small.body, Data(0, 4));
  // A range the signature does not cover is refused before any byte is read.
  const HttpResponse outside =
      BuildXorbRangeResponse(kDataLength, std::vector<ByteRange>{{0, 9}}, "bytes=5-20",
                             XorbSource::FromMemory(chunk_data));
  EXPECT_GE(outside.status, 400);
  EXPECT_EQ(outside.status, Get({{0, 9}}, "bytes=5-20").status);
  EXPECT_FALSE(outside.range_body);
}

TEST_F(XorbRangeResponseTest, StreamStopsWhenTheClientIsGoneOrTheReaderFails) {
  XorbRangeResponseOptions o;
  o.stream_threshold = 10;
  o.stream_piece = 10;
  std::vector<ByteRange> s = {{0, 99}};
  const HttpResponse r = BuildXorbRangeResponse(kDataLength, s, "bytes=0-99", Reader(), o);
  ASSERT_TRUE(r.stream);
  int writes = 0;
  r.stream([&writes](std::string_view) { return ++writes < 2; });
  EXPECT_EQ(writes, 2);  // no write after the writer said the client is gone

  int calls = 0;
  XorbReader failing_later = [&calls](uint64_t, std::span<uint8_t> out) {
    if (++calls > 3) return Status::IoError("disk gone");
    std::memset(out.data(), 'x', out.size());
    return Status::Ok();
  };
  const HttpResponse f = BuildXorbRangeResponse(kDataLength, s, "bytes=0-99", failing_later, o);
  ASSERT_TRUE(f.stream);
  // A short body: the connection layer closes it, so the client sees it is incomplete.
  EXPECT_EQ(Drain(f), std::string(30, 'x'));
  EXPECT_EQ(*f.content_length, 100u);
}

TEST_F(XorbRangeResponseTest, ReaderFailureIsServerError) {
  XorbReader failing = [](uint64_t, std::span<uint8_t>) { return Status::IoError("disk gone"); };
  std::vector<ByteRange> s = {{0, 9}};
  HttpResponse r = BuildXorbRangeResponse(kDataLength, s, "bytes=0-9", failing);
  EXPECT_EQ(r.status, 500);
  EXPECT_NE(r.body.find("disk gone"), std::string::npos);
}

}  // namespace
}  // namespace xet
