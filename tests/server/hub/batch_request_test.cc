#include "server/hub/batch_request.h"

#include <gtest/gtest.h>

#include <string>

namespace xet {
namespace {

const std::string kHashA = std::string(63, '0') + "a";
const std::string kHashB = std::string(64, 'b');

std::vector<BatchRequestOp> Parse(const std::string& body, size_t max_ops = kMaxBatchOps) {
  auto r = ParseBatchRequest(body, "ns/self", max_ops);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *r : std::vector<BatchRequestOp>{};
}

TEST(BatchRequestTest, ParsesEveryOperationKind) {
  const std::string body =
      R"({"type":"addFile","path":"a/b.bin","xetHash":")" + kHashA +
      R"(","mtime":1700000000123,"contentType":"text/plain"})"
      "\n"
      R"({"type":"deleteFile","path":"old.txt"})"
      "\n"
      R"({"type":"copyFile","path":"c.bin","xetHash":")" +
      kHashB +
      R"(","sourceRepoType":"bucket","sourceRepoId":"other/src"})"
      "\n"
      R"({"type":"copyPrefix","from":"dir","to":"backup/dir","sourceRepoId":"other/src"})"
      "\n"
      R"({"type":"movePrefix","from":"x","to":"y"})";
  const auto ops = Parse(body);
  ASSERT_EQ(ops.size(), 5u);
  for (const auto& op : ops) ASSERT_TRUE(op.op) << op.error;

  EXPECT_EQ(ops[0].op->kind, BucketOp::Kind::kAddFile);
  EXPECT_EQ(ops[0].path, "a/b.bin");
  EXPECT_EQ(ops[0].op->path, "a/b.bin");
  EXPECT_EQ(ops[0].op->file_hash.ToHex(), kHashA);
  EXPECT_EQ(ops[0].op->mtime_ms, 1700000000123);
  EXPECT_EQ(ops[0].op->content_type, "text/plain");

  EXPECT_EQ(ops[1].op->kind, BucketOp::Kind::kDeleteFile);
  EXPECT_EQ(ops[1].op->path, "old.txt");

  EXPECT_EQ(ops[2].op->kind, BucketOp::Kind::kCopyFile);
  EXPECT_EQ(ops[2].op->file_hash.ToHex(), kHashB);
  EXPECT_EQ(ops[2].op->source_bucket, "other/src");

  EXPECT_EQ(ops[3].op->kind, BucketOp::Kind::kCopyPrefix);
  EXPECT_EQ(ops[3].path, "dir");
  EXPECT_EQ(ops[3].op->from, "dir");
  EXPECT_EQ(ops[3].op->to, "backup/dir");
  EXPECT_EQ(ops[3].op->source_bucket, "other/src");

  EXPECT_EQ(ops[4].op->kind, BucketOp::Kind::kMovePrefix);
  EXPECT_EQ(ops[4].op->from, "x");
  EXPECT_EQ(ops[4].op->to, "y");
  EXPECT_EQ(ops[4].op->source_bucket, "");
}

TEST(BatchRequestTest, OptionalFieldsMayBeAbsentOrNull) {
  const auto ops = Parse(R"({"type":"addFile","path":"f","xetHash":")" + kHashA +
                         R"(","mtime":null,"contentType":null})");
  ASSERT_EQ(ops.size(), 1u);
  ASSERT_TRUE(ops[0].op) << ops[0].error;
  EXPECT_EQ(ops[0].op->mtime_ms, 0);
  EXPECT_EQ(ops[0].op->content_type, "");
}

TEST(BatchRequestTest, CopyFromThisBucketNamesItAndPrefixCopyLeavesSourceEmpty) {
  const auto ops = Parse(R"({"type":"copyFile","path":"c","xetHash":")" + kHashA +
                         R"(","sourceRepoType":"bucket","sourceRepoId":"ns/self"})"
                         "\n"
                         R"({"type":"copyPrefix","from":"a","to":"b","sourceRepoId":"ns/self"})");
  ASSERT_EQ(ops.size(), 2u);
  ASSERT_TRUE(ops[0].op && ops[1].op);
  EXPECT_EQ(ops[0].op->source_bucket, "ns/self");  // copyFile always names its source
  EXPECT_EQ(ops[1].op->source_bucket, "");         // a prefix copy within this bucket
}

TEST(BatchRequestTest, BlankLinesAndCrLfAreAccepted) {
  const auto ops = Parse(
      "\n  \r\n"
      R"({"type":"deleteFile","path":"a"})"
      "\r\n\n"
      R"({"type":"deleteFile","path":"b"})"
      "\n");
  ASSERT_EQ(ops.size(), 2u);
  EXPECT_EQ(ops[0].op->path, "a");
  EXPECT_EQ(ops[1].op->path, "b");
  EXPECT_TRUE(Parse("").empty());
}

// Each line is one operation that is invalid on its own: it fails alone, with the path it
// named (if any) and a reason.
TEST(BatchRequestTest, InvalidOperationsFailAlone) {
  struct Case {
    std::string line;
    std::string reported_path;
    std::string reason_contains;
  };
  const Case cases[] = {
      {R"({"type":"rename","path":"a"})", "a", "unknown operation type 'rename'"},
      {R"({"path":"a"})", "a", "missing \"type\""},
      {R"({"type":7,"path":"a"})", "a", "\"type\" must be a string"},
      {R"({"type":"deleteFile","from":"f"})", "f", "missing \"path\""},
      {R"({"type":"deleteFile"})", "", "missing \"path\""},
      {R"({"type":"deleteFile","path":3})", "", "\"path\" must be a string"},
      {R"({"type":"deleteFile","path":"../x"})", "../x", "'..'"},
      {R"({"type":"deleteFile","path":"a//b"})", "a//b", "'//'"},
      {R"({"type":"deleteFile","path":"/a"})", "/a", "start with '/'"},
      {R"({"type":"deleteFile","path":"a/"})", "a/", "end with '/'"},
      {R"({"type":"deleteFile","path":"a\\b"})", "a\\b", "'\\'"},
      {R"({"type":"deleteFile","path":"a\u0000b"})", std::string("a\0b", 3), "NUL"},
      {R"({"type":"deleteFile","path":""})", "", "empty"},
      {R"({"type":"deleteFile","path":")" + std::string(1025, 'x') + "\"}", std::string(1025, 'x'),
       "longer than 1024"},
      {R"({"type":"addFile","path":"a"})", "a", "missing \"xetHash\""},
      {R"({"type":"addFile","path":"a","xetHash":"xyz"})", "a", "64 hexadecimal"},
      {R"({"type":"addFile","path":"a","xetHash":")" + kHashA + "0\"}", "a", "64 hexadecimal"},
      {R"({"type":"addFile","path":"a","xetHash":")" + kHashA + R"(","mtime":"yesterday"})", "a",
       "\"mtime\" must be a number"},
      {R"({"type":"addFile","path":"a","xetHash":")" + kHashA + R"(","mtime":-1})", "a",
       "between 0 and"},
      {R"({"type":"addFile","path":"a","xetHash":")" + kHashA + R"(","mtime":true})", "a",
       "\"mtime\" must be a number"},
      {R"({"type":"addFile","path":"a","xetHash":")" + kHashA + R"(","contentType":5})", "a",
       "\"contentType\" must be a string"},
      {R"({"type":"addFile","path":"a","xetHash":")" + kHashA +
           R"(","contentType":"text/plain\r\nX-Evil: 1"})",
       "a", "printable ASCII"},
      {R"({"type":"addFile","path":"a","xetHash":")" + kHashA + R"(","contentType":")" +
           std::string(256, 't') + "\"}",
       "a", "longer than 255"},
      {R"({"type":"copyFile","path":"a","xetHash":")" + kHashA +
           R"(","sourceRepoType":"model","sourceRepoId":"org/model"})",
       "a", "copying from a model repository is not supported"},
      {R"({"type":"copyFile","path":"a","xetHash":")" + kHashA + R"(","sourceRepoType":"bucket"})",
       "a", "missing \"sourceRepoId\""},
      {R"({"type":"copyFile","path":"a","xetHash":")" + kHashA +
           R"(","sourceRepoType":"bucket","sourceRepoId":"noslash"})",
       "a", "NAMESPACE/BUCKET"},
      {R"({"type":"copyFile","path":"a","xetHash":")" + kHashA +
           R"(","sourceRepoType":"bucket","sourceRepoId":"ns/../x"})",
       "a", "invalid \"sourceRepoId\""},
      {R"({"type":"movePrefix","from":"a/b","to":"a"})", "a/b", "contain each other"},
      {R"({"type":"movePrefix","from":"a","to":"a"})", "a", "contain each other"},
      {R"({"type":"movePrefix","from":"a","to":"b","sourceRepoId":"x/y"})", "a",
       "within one bucket"},
      {R"({"type":"movePrefix","from":"a"})", "a", "missing \"to\""},
      {R"({"type":"copyPrefix","from":"a","to":".."})", "a", "invalid \"to\""},
  };
  for (const Case& c : cases) {
    const auto ops = Parse(c.line);
    ASSERT_EQ(ops.size(), 1u) << c.line;
    EXPECT_FALSE(ops[0].op) << c.line;
    EXPECT_EQ(ops[0].path, c.reported_path) << c.line;
    EXPECT_NE(ops[0].error.find(c.reason_contains), std::string::npos)
        << c.line << " -> " << ops[0].error;
  }
}

TEST(BatchRequestTest, ParsesThePosixExtensions) {
  const std::string zeros(64, '0');
  const auto ops =
      Parse(R"({"type":"addFile","path":"f","xetHash":")" + kHashA +
            R"(","posix":{"mode":33188,"uid":1000,"gid":100,"atime":5,"xattrs":{"user.k":"dg=="}}})"
            "\n"
            R"({"type":"addFile","path":"l","xetHash":")" +
            zeros +
            R"(","posix":{"mode":41471,"uid":0,"gid":0,"target":"../x"}})"
            "\n"
            R"({"type":"addDirectory","path":"d","mtime":7,"posix":{"mode":16877,"uid":1,"gid":2}})"
            "\n"
            R"({"type":"addDirectory","path":"e"})"
            "\n"
            R"({"type":"setMetadata","path":"f","posix":{"mode":33261,"uid":1,"gid":2}})"
            "\n"
            R"({"type":"movePrefix","from":"a","to":"b","noReplace":true})"
            "\n"
            R"({"type":"movePrefix","from":"a","to":"c","noReplace":null})");
  ASSERT_EQ(ops.size(), 7u);
  for (const auto& op : ops) ASSERT_TRUE(op.op) << op.error;
  ASSERT_TRUE(ops[0].op->posix.has_value());
  EXPECT_EQ(ops[0].op->posix->mode, 0100644u);
  EXPECT_EQ(ops[0].op->posix->uid, 1000u);
  EXPECT_EQ(ops[0].op->posix->atime_ms, 5);
  ASSERT_EQ(ops[0].op->posix->xattrs.size(), 1u);
  EXPECT_EQ(ops[0].op->posix->xattrs[0].second, "v");
  EXPECT_EQ(ops[1].op->posix->target, "../x");
  EXPECT_TRUE(ops[1].op->file_hash.IsZero());
  EXPECT_EQ(ops[2].op->kind, BucketOp::Kind::kAddDirectory);
  EXPECT_EQ(ops[2].op->mtime_ms, 7);
  EXPECT_TRUE(ops[2].op->posix->IsDirectory());
  EXPECT_FALSE(ops[3].op->posix.has_value());
  EXPECT_EQ(ops[4].op->kind, BucketOp::Kind::kSetMetadata);
  EXPECT_EQ(ops[4].op->posix->mode, 0100755u);
  EXPECT_TRUE(ops[5].op->no_replace);
  EXPECT_FALSE(ops[6].op->no_replace);
  // A file without posix has none.
  EXPECT_FALSE(Parse(R"({"type":"addFile","path":"f","xetHash":")" + kHashA + "\"}")[0]
                   .op->posix.has_value());
  // Special files: the empty file with their type (and a device's number).
  const auto special = Parse(R"({"type":"addFile","path":"p","xetHash":")" + zeros +
                             R"(","posix":{"mode":4516,"uid":0,"gid":0}})"
                             "\n"
                             R"({"type":"addFile","path":"c","xetHash":")" +
                             zeros + R"(","posix":{"mode":8612,"uid":0,"gid":0,"rdev":2049}})");
  ASSERT_EQ(special.size(), 2u);
  ASSERT_TRUE(special[0].op && special[1].op) << special[0].error << special[1].error;
  EXPECT_EQ(special[0].op->posix->mode, 010644u);
  EXPECT_EQ(special[1].op->posix->mode, 020644u);
  EXPECT_EQ(special[1].op->posix->rdev, 2049u);
  EXPECT_TRUE(special[1].op->file_hash.IsZero());
}

// Malformed posix objects and posix that does not fit the operation: the op fails alone.
TEST(BatchRequestTest, BadPosixFailsTheOperation) {
  const std::string zeros(64, '0');
  const std::string add = R"({"type":"addFile","path":"a","xetHash":")" + kHashA + "\"";
  const std::string big = std::string(90000, 'A');
  const std::pair<std::string, std::string> cases[] = {
      {add + R"(,"posix":5})", "must be an object"},
      {add + R"(,"posix":{"mode":"644","uid":0,"gid":0}})", "\"mode\" must be an integer"},
      {add + R"(,"posix":{"mode":33188,"uid":-1,"gid":0}})", "must not be negative"},
      {add + R"(,"posix":{"mode":420,"uid":0,"gid":0}})", "type bits"},
      {add + R"(,"posix":{"mode":12708,"uid":0,"gid":0}})", "type bits"},  // 0030644: no type
      // A block device, FIFO or socket has no content: the empty file's hash only.
      {add + R"(,"posix":{"mode":24996,"uid":0,"gid":0}})", "\"xetHash\" must be the empty file's"},
      {add + R"(,"posix":{"mode":4516,"uid":0,"gid":0}})", "\"xetHash\" must be the empty file's"},
      {add + R"(,"posix":{"mode":49645,"uid":0,"gid":0}})", "\"xetHash\" must be the empty file's"},
      {R"({"type":"addFile","path":"a","xetHash":")" + zeros +
           R"(","posix":{"mode":4516,"uid":0,"gid":0,"rdev":3}})",
       "only for device nodes"},
      {R"({"type":"addDirectory","path":"d","posix":{"mode":8612,"uid":0,"gid":0}})",
       "must be a directory's"},
      {add + R"(,"posix":{"mode":33188,"uid":0,"gid":0,"target":"x"}})", "only for symbolic links"},
      {add + R"(,"posix":{"mode":33188,"uid":0,"gid":0,"xattrs":{"user.v":")" + big + "\"}}}",
       "larger than 65536"},
      {add + R"(,"posix":{"mode":33188,"uid":0,"gid":0,"xattrs":{"user.v":"%%%%"}}})",
       "not padded base64"},
      {add + R"(,"posix":{"mode":16877,"uid":0,"gid":0}})", "use addDirectory"},
      {add + R"(,"posix":{"mode":41471,"uid":0,"gid":0,"target":"t"}})",
       "\"xetHash\" must be the empty file's"},
      {R"({"type":"addFile","path":"a","xetHash":")" + zeros +
           R"(","posix":{"mode":41471,"uid":0,"gid":0}})",
       "needs a \"target\""},
      {R"({"type":"addDirectory","path":"d","posix":{"mode":33188,"uid":0,"gid":0}})",
       "must be a directory's"},
      {R"({"type":"addDirectory","path":"d/"})", "end with '/'"},
      {R"({"type":"addDirectory"})", "missing \"path\""},
      {R"({"type":"setMetadata","path":"d"})", "missing \"posix\""},
      {R"({"type":"setMetadata","path":"d","posix":null})", "missing \"posix\""},
      {R"({"type":"setMetadata","path":"d","mtime":"x","posix":{"mode":16877,"uid":0,"gid":0}})",
       "\"mtime\" must be a number"},
      {R"({"type":"movePrefix","from":"a","to":"b","noReplace":"yes"})",
       "\"noReplace\" must be true or false"},
  };
  for (const auto& [line, want] : cases) {
    const auto ops = Parse(line);
    ASSERT_EQ(ops.size(), 1u) << line;
    EXPECT_FALSE(ops[0].op) << line;
    EXPECT_NE(ops[0].error.find(want), std::string::npos) << line << " -> " << ops[0].error;
  }
}

TEST(BatchRequestTest, OverlapRulesOfPrefixOperations) {
  const auto ops = Parse(R"({"type":"movePrefix","from":"data","to":"data2"})"
                         "\n"
                         R"({"type":"movePrefix","from":"data2","to":"data"})"
                         "\n"
                         R"({"type":"copyPrefix","from":"a","to":"a/b"})"
                         "\n"
                         R"({"type":"copyPrefix","from":"a/b","to":"a"})");
  ASSERT_EQ(ops.size(), 4u);
  // Prefixes that only share leading characters are different directories.
  EXPECT_TRUE(ops[0].op) << ops[0].error;
  EXPECT_TRUE(ops[1].op) << ops[1].error;
  // A copy reads its source as it was before: it may target its own subdirectory.
  EXPECT_TRUE(ops[2].op) << ops[2].error;
  EXPECT_TRUE(ops[3].op) << ops[3].error;
}

TEST(BatchRequestTest, ValidAndInvalidOperationsKeepTheirOrder) {
  const auto ops = Parse(R"({"type":"deleteFile","path":"a"})"
                         "\n"
                         R"({"type":"bogus","path":"b"})"
                         "\n"
                         R"({"type":"deleteFile","path":"c"})");
  ASSERT_EQ(ops.size(), 3u);
  EXPECT_TRUE(ops[0].op);
  EXPECT_FALSE(ops[1].op);
  EXPECT_TRUE(ops[2].op);
  EXPECT_EQ(ops[2].op->path, "c");
}

TEST(BatchRequestTest, ABodyThatIsNotNdjsonObjectsFailsAsAWhole) {
  for (const std::string& body :
       {std::string("not json"), std::string(R"([{"type":"deleteFile","path":"a"}])"),
        std::string(R"({"type":"deleteFile","path":"a"})"
                    "\n"
                    "42"),
        std::string(R"({"type":"deleteFile","path":"a"} {"type":"deleteFile","path":"b"})"),
        std::string(R"({"type":"deleteFile","path":"a")"), std::string("\"string\""),
        std::string("{\"type\":\"deleteFile\",\"path\":\"\xff\xfe\"}")}) {
    auto r = ParseBatchRequest(body, "ns/self");
    ASSERT_FALSE(r.ok()) << body;
    EXPECT_EQ(r.status().code(), Status::Code::kInvalidArgument) << body;
  }
  auto r = ParseBatchRequest(R"({"type":"deleteFile","path":"a"})"
                             "\n"
                             "[1]",
                             "ns/self");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("line 2"), std::string::npos) << r.status().message();
}

TEST(BatchRequestTest, MoreOperationsThanTheLimitIsResourceExhausted) {
  std::string body;
  for (int i = 0; i < 4; ++i)
    body += R"({"type":"deleteFile","path":"f)" + std::to_string(i) + "\"}\n";
  EXPECT_EQ(Parse(body, 4).size(), 4u);
  auto r = ParseBatchRequest(body + R"({"type":"deleteFile","path":"x"})", "ns/self", 4);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Status::Code::kResourceExhausted);
}

TEST(BatchRequestTest, AnOverlongLineFailsTheBodyBeforeItIsParsed) {
  // A valid operation padded with an ignored field up to the limit is accepted ...
  const std::string head = R"({"type":"deleteFile","path":"a","pad":")";
  const std::string tail = "\"}";
  const std::string at_limit =
      head + std::string(kMaxBatchLineBytes - head.size() - tail.size(), 'x') + tail;
  ASSERT_EQ(at_limit.size(), kMaxBatchLineBytes);
  const auto ops = Parse(at_limit + "\n");
  ASSERT_EQ(ops.size(), 1u);
  EXPECT_TRUE(ops[0].op) << ops[0].error;
  // ... one byte more fails the whole body, naming the line.
  auto r = ParseBatchRequest(R"({"type":"deleteFile","path":"b"})"
                             "\n" +
                                 head + "x" + at_limit.substr(head.size()),
                             "ns/self");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Status::Code::kInvalidArgument);
  EXPECT_NE(r.status().message().find("line 2 is longer than 262144 bytes"), std::string::npos)
      << r.status().message();
}

TEST(BatchRequestTest, ADeeplyNestedLineFailsTheBody) {
  // Within the line limit, but nested far deeper than any operation: refused without
  // building the nested arrays (server/json_parse.h).
  const std::string line = R"({"type":"deleteFile","path":"a","x":)" + std::string(60000, '[');
  auto r = ParseBatchRequest(line, "ns/self");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Status::Code::kInvalidArgument);
  EXPECT_NE(r.status().message().find("line 1"), std::string::npos) << r.status().message();
  // Shallow nesting in an ignored field is fine.
  EXPECT_TRUE(Parse(R"({"type":"deleteFile","path":"a","x":[[{"y":[]}]]})")[0].op);
}

TEST(BatchRequestTest, APrefixOperationReportsItsFromEvenWithAStrayPath) {
  // Found by batch_request_fuzzer: a "path" field on a prefix operation was reported in
  // place of its "from".
  const auto ops = Parse(R"({"type":"movePrefix","from":"x","to":"y","path":"old.txt"})"
                         "\n"
                         R"({"type":"copyPrefix","from":"d","to":"e","path":"p"})"
                         "\n"
                         R"({"type":"movePrefix","path":"p","to":"y"})"
                         "\n"
                         R"({"type":"deleteFile","path":"a","from":"f"})");
  ASSERT_EQ(ops.size(), 4u);
  EXPECT_EQ(ops[0].path, "x");
  EXPECT_TRUE(ops[0].op);
  EXPECT_EQ(ops[1].path, "d");
  EXPECT_EQ(ops[2].path, "");  // no "from": nothing to report, and the line is invalid
  EXPECT_FALSE(ops[2].op);
  EXPECT_EQ(ops[3].path, "a");
}

TEST(BatchRequestTest, BlankLinesReserveNoRoom) {
  // Found with batch_request_fuzzer's heap check: room was reserved for every '\n', so
  // 60 KB of blank lines took 16.8 MB (280 bytes per byte).
  const std::string body = std::string(10'000, '\n') + R"({"type":"deleteFile","path":"a"})" +
                           std::string(10'000, '\n') + " \t\r\n";
  auto ops = ParseBatchRequest(body, "ns/self");  // not Parse(): a copy has no spare room
  ASSERT_TRUE(ops.ok()) << ops.status().ToString();
  ASSERT_EQ(ops->size(), 1u);
  EXPECT_EQ(ops->capacity(), 1u);
}

}  // namespace
}  // namespace xet
