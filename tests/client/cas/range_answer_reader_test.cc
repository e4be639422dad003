// RangeAnswerReader against recorded answers of each kind (multipart/byteranges, a single
// 206, a whole-object 200), truncated and malformed ones, restarts and caller errors.
#include "client/cas/range_answer_reader.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace xet {
namespace {

// A 300-byte object; the requested ranges are bytes 10-19, 50-59 and 100-149.
struct RangeAnswerReaderTest : ::testing::Test {
  RangeAnswerReaderTest() {
    for (int i = 0; i < 300; ++i) object.push_back(static_cast<char>('A' + i * 7 % 26));
  }

  std::string Slice(uint64_t first, uint64_t last) const {
    return object.substr(first, last - first + 1);
  }
  std::string Slice(const FetchRange& r) const { return Slice(r.byte_start, r.byte_end); }
  std::vector<std::string> Wanted() const {
    return {Slice(ranges[0]), Slice(ranges[1]), Slice(ranges[2])};
  }
  static std::string Part(uint64_t first, uint64_t last, const std::string& bytes) {
    return "--BND\r\nContent-Type: application/octet-stream\r\nContent-Range: bytes " +
           std::to_string(first) + "-" + std::to_string(last) + "/300\r\n\r\n" + bytes + "\r\n";
  }
  std::string Part(size_t i) const {
    return Part(ranges[i].byte_start, ranges[i].byte_end, Slice(ranges[i]));
  }
  std::string AllParts() const { return Part(0) + Part(1) + Part(2) + "--BND--\r\n"; }

  static HeaderList MultipartHeaders() {
    return {{"Content-Type", "multipart/byteranges; boundary=BND"}};
  }
  static HeaderList SingleHeaders(const std::string& content_range) {
    return {{"Content-Type", "application/octet-stream"}, {"Content-Range", content_range}};
  }

  // One attempt: headers, then `body` in pieces of `piece` bytes. False when the reader
  // stopped the transfer.
  static bool Send(RangeAnswerReader& reader, int status, const HeaderList& headers,
                   const std::string& body, size_t piece = 7) {
    reader.OnHeaders(status, headers);
    for (size_t at = 0; at < body.size(); at += piece) {
      if (!reader.OnBody(std::string_view(body).substr(at, piece))) return false;
    }
    return true;
  }
  static Result<ClientResponse> Answered(int status) {
    ClientResponse resp;
    resp.status = status;
    return resp;
  }

  // Reads one answer with a fresh reader; `got` holds what was delivered, by index.
  Status Read(int status, const HeaderList& headers, const std::string& body, size_t piece = 7) {
    got.clear();
    RangeAnswerReader reader(ranges, 0, collect, "GET u", buffer);
    Send(reader, status, headers, body, piece);
    return reader.Finish(Answered(status));
  }

  void ExpectCorruption(const Status& st, const std::string& needle) {
    EXPECT_EQ(st.code(), Status::Code::kCorruption) << st.ToString();
    EXPECT_NE(st.message().find(needle), std::string::npos) << st.ToString();
  }

  std::string object;
  std::vector<FetchRange> ranges = {{0, 1, 10, 19, {}}, {1, 2, 50, 59, {}}, {2, 3, 100, 149, {}}};
  std::vector<std::pair<size_t, std::string>> got;
  RangeAnswerReader::OnRange collect = [this](size_t i, std::span<const uint8_t> b) {
    got.emplace_back(i, std::string(b.begin(), b.end()));
    return Status::Ok();
  };
  std::vector<uint8_t> buffer;
};

std::vector<std::pair<size_t, std::string>> Indexed(const std::vector<std::string>& v,
                                                    size_t base = 0) {
  std::vector<std::pair<size_t, std::string>> out;
  for (size_t i = 0; i < v.size(); ++i) out.emplace_back(base + i, v[i]);
  return out;
}

TEST_F(RangeAnswerReaderTest, RangeHeaderListsTheRangesInOrder) {
  auto header = RangeRequestHeader(ranges, 0, "GET u");
  ASSERT_TRUE(header.ok()) << header.status().ToString();
  EXPECT_EQ(*header, "bytes=10-19,50-59,100-149");

  std::vector<FetchRange> bad = ranges;
  bad[1].byte_end = 49;
  auto refused = RangeRequestHeader(bad, 4, "GET u");
  EXPECT_EQ(refused.status().code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(refused.status().message(), "GET u: range 5 ends before it starts");
}

TEST_F(RangeAnswerReaderTest, MultipartInOrderInAnyPieceSize) {
  for (const size_t piece : std::vector<size_t>{1, 3, 7, 64, 4096}) {
    ASSERT_TRUE(Read(206, MultipartHeaders(), AllParts(), piece).ok()) << piece;
    EXPECT_EQ(got, Indexed(Wanted())) << piece;
  }
}

TEST_F(RangeAnswerReaderTest, MultipartReorderedOrCoalesced) {
  const std::string reordered = Part(2) + Part(0) + Part(1) + "--BND--\r\n";
  ASSERT_TRUE(Read(206, MultipartHeaders(), reordered).ok());
  EXPECT_EQ(got, Indexed(Wanted()));

  // The first two ranges in one part (RFC 7233 allows it), sent after the third.
  const std::string coalesced = Part(2) + Part(10, 59, Slice(10, 59)) + "--BND--\r\n";
  ASSERT_TRUE(Read(206, MultipartHeaders(), coalesced).ok());
  EXPECT_EQ(got, Indexed(Wanted()));
}

TEST_F(RangeAnswerReaderTest, IndicesStartAtTheBase) {
  RangeAnswerReader reader(ranges, 7, collect, "GET u", buffer);
  ASSERT_TRUE(Send(reader, 206, MultipartHeaders(), AllParts()));
  ASSERT_TRUE(reader.Finish(Answered(206)).ok());
  EXPECT_EQ(got, Indexed(Wanted(), 7));
}

TEST_F(RangeAnswerReaderTest, SingleRangeCoveringTheRanges) {
  ASSERT_TRUE(Read(206, SingleHeaders("bytes 10-149/300"), Slice(10, 149)).ok());
  EXPECT_EQ(got, Indexed(Wanted()));
}

TEST_F(RangeAnswerReaderTest, WholeObject) {
  ASSERT_TRUE(Read(200, {}, object).ok());
  EXPECT_EQ(got, Indexed(Wanted()));
  // Bytes past the last range are not needed.
  ASSERT_TRUE(Read(200, {}, object.substr(0, 150)).ok());
  EXPECT_EQ(got, Indexed(Wanted()));
}

TEST_F(RangeAnswerReaderTest, TruncatedAnswersAreCorruption) {
  const std::string all = AllParts();
  ExpectCorruption(Read(206, MultipartHeaders(), all.substr(0, all.size() - 40)), "truncated");
  EXPECT_EQ(got, Indexed({Wanted()[0], Wanted()[1]}));  // what arrived whole was delivered
  ExpectCorruption(Read(206, SingleHeaders("bytes 10-149/300"), Slice(10, 140)),
                   "body of 131 bytes for Content-Range 10-149");
  EXPECT_TRUE(got.empty());
  ExpectCorruption(Read(200, {}, object.substr(0, 120)), "no part for bytes 100-149");
  EXPECT_EQ(got, Indexed({Wanted()[0], Wanted()[1]}));
  ExpectCorruption(Read(200, {}, ""), "no part for bytes 10-19");
  EXPECT_TRUE(got.empty());
}

TEST_F(RangeAnswerReaderTest, MissingRangesAreCorruption) {
  ExpectCorruption(Read(206, MultipartHeaders(), Part(0) + Part(2) + "--BND--\r\n"),
                   "no part for bytes 50-59");
  EXPECT_EQ(got, Indexed({Wanted()[0]}));
  ExpectCorruption(Read(206, SingleHeaders("bytes 10-59/300"), Slice(10, 59)),
                   "no part for bytes 100-149");
}

TEST_F(RangeAnswerReaderTest, MalformedMultipartIsCorruption) {
  std::string other = AllParts();
  for (size_t p = other.find("--BND"); p != std::string::npos; p = other.find("--BND", p + 5)) {
    other.replace(p, 5, "--XYZ");
  }
  ExpectCorruption(Read(206, MultipartHeaders(), other), "boundary");
  std::string lying = AllParts();
  lying.replace(lying.find("bytes 50-59"), 11, "bytes 50-58");
  ExpectCorruption(Read(206, MultipartHeaders(), lying), "not followed by the boundary");
  ExpectCorruption(Read(206, {{"Content-Type", "multipart/byteranges"}}, AllParts()), "boundary");
  EXPECT_TRUE(got.empty());
}

TEST_F(RangeAnswerReaderTest, OversizedPartIsRefused) {
  // No part can be larger than the requested span (bytes 10-149: 140 bytes).
  const Status st = Read(206, MultipartHeaders(), Part(0, 299, object) + "--BND--\r\n");
  EXPECT_EQ(st.code(), Status::Code::kResourceExhausted) << st.ToString();
  EXPECT_TRUE(got.empty());
  ExpectCorruption(Read(206, SingleHeaders("bytes 0-299/300"), object),
                   "answered 300 bytes for 140 requested");
}

TEST_F(RangeAnswerReaderTest, MalformedSingleRangeIsCorruption) {
  ExpectCorruption(Read(206, {}, Slice(10, 149)), "206 answer without a valid Content-Range");
  ExpectCorruption(Read(206, SingleHeaders("bytes 149-10/300"), Slice(10, 149)),
                   "206 answer without a valid Content-Range");
  ExpectCorruption(Read(206, SingleHeaders("bytes 10-149/300"), Slice(10, 149) + "x"),
                   "body longer than its Content-Range 10-149");
  EXPECT_TRUE(got.empty());
}

TEST_F(RangeAnswerReaderTest, UnusableAnswersAreCorruption) {
  RangeAnswerReader reader(ranges, 0, collect, "GET u", buffer);
  EXPECT_FALSE(Send(reader, 204, {}, "abc"));
  ExpectCorruption(reader.Finish(Answered(204)), "GET u: unexpected HTTP 204");

  RangeAnswerReader no_headers(ranges, 0, collect, "GET u", buffer);
  EXPECT_FALSE(no_headers.OnBody("abc"));
  ExpectCorruption(no_headers.Finish(Answered(206)), "body of an unusable answer");

  RangeAnswerReader nothing(ranges, 0, collect, "GET u", buffer);
  ExpectCorruption(nothing.Finish(Answered(206)), "unusable answer (HTTP 206)");
  EXPECT_TRUE(got.empty());
}

TEST_F(RangeAnswerReaderTest, TransferAndHttpErrorsAreReturned) {
  RangeAnswerReader reader(ranges, 0, collect, "GET u", buffer);
  const Status st = reader.Finish(Status::Unavailable("connection reset"));
  EXPECT_EQ(st.code(), Status::Code::kUnavailable);
  EXPECT_EQ(st.message(), "connection reset");

  RangeAnswerReader refused(ranges, 0, collect, "GET u", buffer);
  ClientResponse resp;
  resp.status = 403;
  resp.body = R"({"error":"expired"})";
  const Status denied = refused.Finish(resp);
  EXPECT_EQ(denied.code(), Status::Code::kPermissionDenied) << denied.ToString();
  EXPECT_TRUE(got.empty());
}

TEST_F(RangeAnswerReaderTest, CallerErrorIsReturnedAsIsAndStopsTheTransfer) {
  int calls = 0;
  RangeAnswerReader::OnRange refuse = [&](size_t, std::span<const uint8_t>) {
    ++calls;
    return Status::ResourceExhausted("disk full");
  };
  RangeAnswerReader reader(ranges, 0, refuse, "GET u", buffer);
  EXPECT_FALSE(Send(reader, 206, MultipartHeaders(), AllParts()));
  const Status st = reader.Finish(Answered(206));
  EXPECT_EQ(st.code(), Status::Code::kResourceExhausted);
  EXPECT_EQ(st.message(), "disk full");
  EXPECT_EQ(calls, 1);

  RangeAnswerReader single(ranges, 0, refuse, "GET u", buffer);
  ASSERT_TRUE(Send(single, 206, SingleHeaders("bytes 10-149/300"), Slice(10, 149)));
  EXPECT_EQ(single.Finish(Answered(206)).message(), "disk full");
  EXPECT_EQ(calls, 2);
}

TEST_F(RangeAnswerReaderTest, RestartedTransferDeliversNothingTwice) {
  RangeAnswerReader reader(ranges, 0, collect, "GET u", buffer);
  // The first attempt breaks off in the middle of the second part.
  const std::string all = AllParts();
  const std::string first_attempt = all.substr(0, Part(0).size() + 20);
  ASSERT_TRUE(Send(reader, 206, MultipartHeaders(), first_attempt));
  EXPECT_EQ(got, Indexed({Wanted()[0]}));
  reader.OnRestart();
  // The retry answers differently (a whole object): only the missing ranges are delivered.
  ASSERT_TRUE(Send(reader, 200, {}, object));
  ASSERT_TRUE(reader.Finish(Answered(200)).ok());
  EXPECT_EQ(got, Indexed(Wanted()));

  RangeAnswerReader again(ranges, 0, collect, "GET u", buffer);
  got.clear();
  ASSERT_TRUE(Send(again, 206, SingleHeaders("bytes 10-149/300"), Slice(10, 100)));
  again.OnRestart();
  ASSERT_TRUE(Send(again, 206, MultipartHeaders(), AllParts()));
  ASSERT_TRUE(again.Finish(Answered(206)).ok());
  EXPECT_EQ(got, Indexed(Wanted()));
}

TEST_F(RangeAnswerReaderTest, BufferIsGivenBackWithItsCapacity) {
  buffer.reserve(4096);
  const uint8_t* const memory = buffer.data();
  ASSERT_TRUE(Read(206, MultipartHeaders(), AllParts()).ok());
  EXPECT_EQ(buffer.data(), memory);  // lent to the parser and returned, not reallocated
  EXPECT_GE(buffer.capacity(), 4096u);

  // Also when the reader stops in the middle of a multipart answer.
  ExpectCorruption(Read(206, MultipartHeaders(), Part(0) + "--XYZ\r\n"), "multipart body");
  EXPECT_EQ(buffer.data(), memory);
  EXPECT_GE(buffer.capacity(), 4096u);
}

}  // namespace
}  // namespace xet
