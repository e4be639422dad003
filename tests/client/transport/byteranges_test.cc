#include "client/transport/byteranges.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace xet {
namespace {

struct Part {
  uint64_t first, last;
  std::string bytes;
};

std::string Body(const std::string& boundary, const std::vector<Part>& parts,
                 const std::string& preamble = "", const std::string& epilogue = "") {
  std::string out = preamble;
  for (const Part& p : parts) {
    out += "--" + boundary + "\r\nContent-Type: application/octet-stream\r\nContent-Range: bytes " +
           std::to_string(p.first) + "-" + std::to_string(p.last) + "/100000\r\n\r\n" + p.bytes +
           "\r\n";
  }
  return out + "--" + boundary + "--\r\n" + epilogue;
}

struct Collected {
  std::vector<Part> parts;
  ByteRangesParser::PartCallback Callback() {
    return [this](const ContentRange& r, std::span<const uint8_t> b) {
      parts.push_back({r.first, r.last, std::string(b.begin(), b.end())});
      return Status::Ok();
    };
  }
};

// Feeds `body` in pieces of the given sizes (cycled); returns Feed's first error or Finish's.
Status FeedInPieces(ByteRangesParser& p, const std::string& body, std::vector<size_t> sizes,
                    const ByteRangesParser::PartCallback& cb) {
  size_t off = 0, k = 0;
  while (off < body.size()) {
    const size_t n = std::min(sizes[k++ % sizes.size()], body.size() - off);
    XET_RETURN_IF_ERROR(p.Feed(std::string_view(body).substr(off, n), cb));
    off += n;
  }
  return p.Finish();
}

const std::vector<Part> kParts = {
    {0, 9, "0123456789"}, {100, 104, "abcde"}, {2000, 2000, "Z"}, {50, 52, "xyz"}};

TEST(ByteRangesTest, BoundaryFromContentType) {
  EXPECT_EQ(*MultipartBoundary("multipart/byteranges; boundary=abc123"), "abc123");
  EXPECT_EQ(*MultipartBoundary("Multipart/ByteRanges;BOUNDARY=\"a b:c\""), "a b:c");
  EXPECT_EQ(*MultipartBoundary("multipart/byteranges; charset=x; boundary=q"), "q");
  EXPECT_FALSE(MultipartBoundary("application/octet-stream").ok());
  EXPECT_FALSE(MultipartBoundary("multipart/mixed; boundary=x").ok());
  EXPECT_FALSE(MultipartBoundary("multipart/byteranges").ok());
  EXPECT_FALSE(MultipartBoundary("multipart/byteranges; boundary=").ok());
  EXPECT_FALSE(MultipartBoundary("multipart/byteranges; boundary=\"\"").ok());
  EXPECT_FALSE(MultipartBoundary("multipart/byteranges; boundary=" + std::string(71, 'b')).ok());
  EXPECT_FALSE(MultipartBoundary("multipart/byteranges; boundary=a\x01z").ok());
}

TEST(ByteRangesTest, ContentRangeValues) {
  auto r = ParseContentRange("bytes 5-9/100");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->first, 5u);
  EXPECT_EQ(r->last, 9u);
  EXPECT_EQ(r->full_length, 100u);
  EXPECT_EQ(r->size(), 5u);
  r = ParseContentRange("  Bytes 0-0/*  ");
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->full_length.has_value());
  r = ParseContentRange("bytes 0-18446744073709551614/18446744073709551615");
  ASSERT_TRUE(r.ok());
  for (const char* bad : {"", "bytes", "bytes 5-4/100", "bytes */100", "bytes 0-9/9", "items 0-1/5",
                          "bytes -1-5/10", "bytes 0-5", "bytes 0-5/", "bytes 0-5/x",
                          "bytes 1-18446744073709551616/*", "bytes 1 -5/10", "bytes 0x1-5/10"}) {
    EXPECT_FALSE(ParseContentRange(bad).ok()) << bad;
  }
}

TEST(ByteRangesTest, ParsesPartsInAnyPieceSizes) {
  const std::string body = Body("b0und", kParts, "preamble text\r\n", "epilogue");
  for (const std::vector<size_t>& sizes :
       std::vector<std::vector<size_t>>{{body.size()}, {1}, {2}, {3, 7, 1}, {13}, {64}}) {
    ByteRangesParser p("b0und", 10, 4);
    Collected c;
    ASSERT_TRUE(FeedInPieces(p, body, sizes, c.Callback()).ok());
    ASSERT_EQ(c.parts.size(), kParts.size());
    for (size_t i = 0; i < kParts.size(); ++i) {
      EXPECT_EQ(c.parts[i].first, kParts[i].first);
      EXPECT_EQ(c.parts[i].last, kParts[i].last);
      EXPECT_EQ(c.parts[i].bytes, kParts[i].bytes);
    }
    EXPECT_EQ(p.parts_seen(), 4u);
  }
}

TEST(ByteRangesTest, PartBytesMayContainTheBoundary) {
  // Framing is by Content-Range, so payloads that look like delimiters are data.
  const std::string evil = "\r\n--XX\r\nContent-Range: bytes 0-1/2\r\n\r\n--XX--";
  const std::vector<Part> parts = {{0, evil.size() - 1, evil}, {500, 501, "ok"}};
  ByteRangesParser p("XX", evil.size(), 2);
  Collected c;
  ASSERT_TRUE(FeedInPieces(p, Body("XX", parts), {5}, c.Callback()).ok());
  ASSERT_EQ(c.parts.size(), 2u);
  EXPECT_EQ(c.parts[0].bytes, evil);
  EXPECT_EQ(c.parts[1].bytes, "ok");
}

TEST(ByteRangesTest, RandomBinaryPartsRoundTrip) {
  std::mt19937_64 rng(42);
  std::vector<Part> parts;
  uint64_t at = 0;
  for (int i = 0; i < 50; ++i) {
    const size_t n = 1 + rng() % 3000;
    std::string bytes(n, '\0');
    for (char& ch : bytes) ch = static_cast<char>(rng());
    parts.push_back({at, at + n - 1, bytes});
    at += n + rng() % 100;
  }
  const std::string body = Body("0123456789abcdef0123456789abcdef", parts);
  ByteRangesParser p("0123456789abcdef0123456789abcdef", 3000, 50);
  Collected c;
  ASSERT_TRUE(FeedInPieces(p, body, {1000, 17, 4096}, c.Callback()).ok());
  ASSERT_EQ(c.parts.size(), parts.size());
  for (size_t i = 0; i < parts.size(); ++i) EXPECT_EQ(c.parts[i].bytes, parts[i].bytes) << i;
}

void ExpectError(const std::string& body, uint64_t max_part, size_t max_parts, Status::Code code,
                 const std::string& needle) {
  for (const std::vector<size_t>& sizes :
       std::vector<std::vector<size_t>>{{body.size() + 1}, {1}, {7}}) {
    ByteRangesParser p("bnd", max_part, max_parts);
    Collected c;
    const Status st = FeedInPieces(p, body, sizes, c.Callback());
    ASSERT_FALSE(st.ok()) << "accepted with pieces of " << sizes[0];
    EXPECT_EQ(st.code(), code) << st.ToString();
    EXPECT_NE(st.message().find(needle), std::string::npos) << st.ToString();
  }
}

TEST(ByteRangesTest, TruncatedBodies) {
  const std::string body = Body("bnd", kParts);
  const auto corruption = Status::Code::kCorruption;
  ExpectError("", 10, 4, corruption, "truncated before its first boundary");
  ExpectError(body.substr(0, 30), 10, 4, corruption, "truncated");
  // Cut inside the second part's bytes.
  const size_t in_part = body.find("abc") + 2;
  ExpectError(body.substr(0, in_part), 10, 4, corruption, "truncated inside part 2 (2 of 5 bytes)");
  // Everything but the closing delimiter.
  ExpectError(body.substr(0, body.rfind("--bnd--")), 10, 4, corruption,
              "no closing boundary after 4 parts");
}

TEST(ByteRangesTest, WrongOrMissingBoundary) {
  ExpectError(Body("other", kParts), 10, 4, Status::Code::kCorruption, "truncated");
  ExpectError(Body("other", kParts) + std::string(9000, 'x'), 10, 4, Status::Code::kCorruption,
              "no '--bnd' boundary");
  // A delimiter glued to other text is not a delimiter line.
  ExpectError("--bndX\r\n", 10, 4, Status::Code::kCorruption, "instead of a line break");
  // A part that runs past its Content-Range (or a boundary mismatch after it).
  std::string longer = Body("bnd", {{0, 2, "abc"}});
  longer.insert(longer.find("abc") + 3, "d");
  ExpectError(longer, 10, 4, Status::Code::kCorruption, "not followed by the boundary");
  std::string switched = Body("bnd", {{0, 2, "abc"}, {10, 12, "def"}});
  switched.replace(switched.find("--bnd", 10), 5, "--bnx");
  ExpectError(switched, 10, 4, Status::Code::kCorruption, "not followed by the boundary");
}

TEST(ByteRangesTest, MissingOrBadContentRange) {
  ExpectError("--bnd\r\n\r\nabc\r\n--bnd--\r\n", 10, 4, Status::Code::kCorruption,
              "part 1 has no Content-Range");
  ExpectError("--bnd\r\nContent-Type: x\r\n\r\nabc\r\n--bnd--\r\n", 10, 4,
              Status::Code::kCorruption, "part 1 has no Content-Range");
  ExpectError("--bnd\r\nContent-Range: bytes 9-3/10\r\n\r\nabc\r\n--bnd--\r\n", 10, 4,
              Status::Code::kCorruption, "malformed Content-Range");
}

TEST(ByteRangesTest, OversizedInputs) {
  // A part larger than the caller expects: refused before its bytes are buffered.
  ExpectError("--bnd\r\nContent-Range: bytes 0-999999999999/*\r\n\r\n", 10, 4,
              Status::Code::kResourceExhausted, "exceeds the 10 bytes expected");
  // More parts than ranges requested.
  ExpectError(Body("bnd", kParts), 10, 3, Status::Code::kResourceExhausted, "more than 3 parts");
  // Endless part headers.
  ExpectError("--bnd\r\nX-Pad: " + std::string(10000, 'p'), 10, 4, Status::Code::kResourceExhausted,
              "part headers longer than");
  // An endless preamble.
  ExpectError(std::string(20000, '-'), 10, 4, Status::Code::kCorruption, "no '--bnd' boundary");
}

TEST(ByteRangesTest, BoundsDoNotDependOnHowTheBodyArrives) {
  // Each bound sits exactly at kMaxMultipartHeaderBytes: one byte more must be refused,
  // and both must be judged alike fed whole, in odd pieces and byte by byte (a whole body
  // used to pass a preamble or a header section that the same bytes in pieces failed).
  const size_t max = kMaxMultipartHeaderBytes;
  const std::string part = Body("bnd", {kParts[0]}).substr(2 + 3);  // after "--bnd"
  auto preamble = [&](size_t pad) {  // "--bnd" ends at byte pad + 2 + 5
    return std::string(pad, 'p') + "\r\n--bnd" + part;
  };
  auto headers = [&](size_t pad) {  // the blank line ends at byte 19 + pad + 4 of the section
    return "--bnd\r\nContent-Range: bytes 0-9/10\r\nX-Pad: " + std::string(pad, 'p') +
           "\r\n\r\n0123456789\r\n--bnd--\r\n";
  };
  const size_t header_fixed = std::string("Content-Range: bytes 0-9/10\r\nX-Pad: ").size() + 4;
  auto delimiter_line = [&](size_t spaces) {
    return "--bnd" + std::string(spaces, ' ') + "\r\n" + headers(1).substr(7);
  };
  const struct {
    std::string fits, over;
    Status::Code code;
  } cases[] = {
      {preamble(max - 7), preamble(max - 6), Status::Code::kCorruption},
      {headers(max - header_fixed), headers(max - header_fixed + 1),
       Status::Code::kResourceExhausted},
      {delimiter_line(max), delimiter_line(max + 1), Status::Code::kCorruption},
  };
  for (const auto& c : cases) {
    for (const std::vector<size_t>& sizes :
         std::vector<std::vector<size_t>>{{c.over.size() + 1}, {1}, {97, 13, 4096}}) {
      ByteRangesParser fits("bnd", 100, 4), over("bnd", 100, 4);
      Collected got;
      const Status ok = FeedInPieces(fits, c.fits, sizes, got.Callback());
      EXPECT_TRUE(ok.ok()) << ok.ToString() << " piece size " << sizes[0];
      ASSERT_EQ(got.parts.size(), 1u);
      EXPECT_EQ(got.parts[0].bytes, "0123456789");
      const Status refused = FeedInPieces(over, c.over, sizes, Collected().Callback());
      EXPECT_EQ(refused.code(), c.code) << refused.ToString() << " piece size " << sizes[0];
    }
  }
}

TEST(ByteRangesTest, CallbackErrorStopsAndSticks) {
  ByteRangesParser p("bnd", 10, 4);
  int calls = 0;
  auto cb = [&](const ContentRange&, std::span<const uint8_t>) {
    ++calls;
    return Status::IoError("disk full");
  };
  const std::string body = Body("bnd", kParts);
  Status st = p.Feed(body, cb);
  EXPECT_EQ(st.code(), Status::Code::kIoError);
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(p.Feed("more", cb).code(), Status::Code::kIoError);
  EXPECT_EQ(p.Finish().code(), Status::Code::kIoError);
  // Reset starts over.
  p.Reset();
  Collected c;
  EXPECT_TRUE(p.Feed(body, c.Callback()).ok());
  EXPECT_TRUE(p.Finish().ok());
  EXPECT_EQ(c.parts.size(), 4u);
}

TEST(ByteRangesTest, ClosingWithoutPartsIsWellFormed) {
  ByteRangesParser p("bnd", 10, 4);
  Collected c;
  EXPECT_TRUE(p.Feed("--bnd--\r\n", c.Callback()).ok());
  EXPECT_TRUE(p.Finish().ok());
  EXPECT_TRUE(c.parts.empty());  // a caller that asked for ranges reports them missing
}

}  // namespace
}  // namespace xet
