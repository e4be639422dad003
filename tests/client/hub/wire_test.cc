#include "client/hub/wire.h"

#include <gtest/gtest.h>

#include <string>

#include "common/percent_encode.h"

namespace xet {
namespace {

const std::string kHashA = std::string(64, 'a');
const std::string kHashB = std::string(63, 'b') + "1";

TEST(ClientWireTest, IsoTimes) {
  EXPECT_EQ(*ParseIsoMillis("1970-01-01T00:00:00Z"), 0);
  EXPECT_EQ(*ParseIsoMillis("1970-01-01T00:00:01.5Z"), 1500);
  EXPECT_EQ(*ParseIsoMillis("2024-05-06T07:08:09.012Z"), 1714979289012);
  EXPECT_EQ(*ParseIsoMillis("2024-05-06T07:08:09.012345Z"), 1714979289012);
  EXPECT_EQ(*ParseIsoMillis("2024-05-06T09:08:09.012+02:00"), 1714979289012);
  EXPECT_EQ(*ParseIsoMillis("2024-05-06T05:08:09.012-02:00"), 1714979289012);
  EXPECT_EQ(*ParseIsoMillis("9999-12-31T23:59:59.999Z"), 253402300799999);
  for (const char* bad :
       {"", "2024-05-06", "2024-05-06T07:08:09", "2024-13-06T07:08:09Z", "2024-02-30T07:08:09Z",
        "2024-05-06T24:08:09Z", "2024-05-06T07:08:09.Z", "2024-05-06T07:08:09ZZ",
        "2024/05/06T07:08:09Z", "x024-05-06T07:08:09Z", "2024-05-06T07:08:09+0200"}) {
    EXPECT_FALSE(ParseIsoMillis(bad).ok()) << bad;
  }
}

TEST(ClientWireTest, NextLinks) {
  EXPECT_EQ(*NextLinkUrl("<http://h/api/x?cursor=1>; rel=\"next\""), "http://h/api/x?cursor=1");
  EXPECT_EQ(*NextLinkUrl("<http://h/a>; rel=next"), "http://h/a");
  EXPECT_EQ(*NextLinkUrl("<http://h/p>; rel=\"prev\", <http://h/n>; rel=\"next\""), "http://h/n");
  EXPECT_EQ(*NextLinkUrl("<http://h/n?a=1,2>; title=\"x, y\"; rel=\"last next\""),
            "http://h/n?a=1,2");
  EXPECT_EQ(*NextLinkUrl("<http://h/n>;REL=\"Next\""), "http://h/n");
  EXPECT_FALSE(NextLinkUrl("").has_value());
  EXPECT_FALSE(NextLinkUrl("<http://h/p>; rel=\"prev\"").has_value());
  EXPECT_FALSE(NextLinkUrl("<http://h/p>; rel=\"nextish\"").has_value());
  EXPECT_FALSE(NextLinkUrl("<http://h/unclosed; rel=\"next\"").has_value());
  EXPECT_FALSE(NextLinkUrl("garbage").has_value());
}

TEST(ClientWireTest, PercentEncoding) {
  EXPECT_EQ(PercentEncode("a/b c/d%e?f#g", true), "a/b%20c/d%25e%3Ff%23g");
  EXPECT_EQ(PercentEncode("a/b", false), "a%2Fb");
  EXPECT_EQ(PercentEncode("\xC3\xA9~._-", true), "%C3%A9~._-");
}

TEST(ClientWireTest, EntryListing) {
  const std::string body =
      R"([{"type":"directory","path":"d"},)"
      R"({"type":"file","path":"d/f.bin","size":12,"xetHash":")" +
      kHashA +
      R"(","mtime":"2024-05-06T07:08:09.012Z","uploadedAt":"2024-05-07T00:00:00.000Z","contentType":"text/plain"},)"
      R"({"type":"file","path":"g","size":0,"xetHash":")" +
      kHashB + R"(","mtime":1500}])";
  auto r = ParseEntryListJson(body);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->size(), 3u);
  EXPECT_TRUE((*r)[0].is_directory);
  EXPECT_EQ((*r)[0].path, "d");
  EXPECT_FALSE((*r)[1].is_directory);
  EXPECT_EQ((*r)[1].size, 12u);
  EXPECT_EQ((*r)[1].xet_hash.ToHex(), kHashA);
  EXPECT_EQ((*r)[1].mtime_ms, 1714979289012);
  EXPECT_EQ((*r)[1].uploaded_at, "2024-05-07T00:00:00.000Z");
  EXPECT_EQ((*r)[1].content_type, "text/plain");
  EXPECT_EQ((*r)[2].mtime_ms, 1500);
  EXPECT_EQ((*r)[2].content_type, "");
}

TEST(ClientWireTest, HostileListingsAreCorruption) {
  const std::string file = R"("type":"file","path":"f","size":1,"xetHash":")" + kHashA + "\"";
  for (const std::string& bad : std::vector<std::string>{
           "", "not json", "{}", "[1]", "[null]", R"([{"type":"link","path":"x"}])",
           R"([{"type":"file"}])", R"([{"type":"directory","path":""}])",
           R"([{"type":"file","path":"f","size":1}])",
           R"([{"type":"file","path":"f","size":-1,"xetHash":")" + kHashA + "\"}]",
           R"([{"type":"file","path":"f","size":1.5,"xetHash":")" + kHashA + "\"}]",
           R"([{"type":"file","path":"f","size":1,"xetHash":"zz"}])",
           "[{" + file + R"(,"mtime":"yesterday"}])", "[{" + file + R"(,"mtime":[1]}])",
           "[{" + file + "}",  // truncated
           std::string(100000, '[') + std::string(100000, ']')}) {
    auto r = ParseEntryListJson(bad);
    ASSERT_FALSE(r.ok()) << bad.substr(0, 100);
    EXPECT_EQ(r.status().code(), Status::Code::kCorruption) << r.status().ToString();
  }
}

TEST(ClientWireTest, BucketsAndTokens) {
  auto b = ParseBucketJson(
      R"({"id":"ns/b","private":false,"createdAt":"2024-01-01T00:00:00.000Z","size":10,"totalFiles":2,"updatedAt":"x"})");
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_EQ(b->id, "ns/b");
  EXPECT_FALSE(b->is_private);
  EXPECT_EQ(b->size, 10u);
  EXPECT_EQ(b->total_files, 2u);
  EXPECT_FALSE(ParseBucketJson(R"({"private":true})").ok());
  EXPECT_FALSE(ParseBucketJson(R"({"id":"a/b","private":"yes"})").ok());
  EXPECT_FALSE(ParseBucketJson(R"({"id":"a/b","size":-3})").ok());
  auto list = ParseBucketListJson(R"([{"id":"a/b"},{"id":"a/c","private":true}])");
  ASSERT_TRUE(list.ok());
  EXPECT_EQ(list->size(), 2u);
  EXPECT_FALSE(ParseBucketListJson(R"({"id":"a/b"})").ok());

  auto t =
      ParseXetTokenJson(R"({"accessToken":"xet_abc","casUrl":"http://h:1/","exp":1700000000})");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->access_token, "xet_abc");
  EXPECT_EQ(t->cas_url, "http://h:1");
  EXPECT_EQ(t->expires_at, 1700000000);
  EXPECT_FALSE(ParseXetTokenJson(R"({"casUrl":"http://h","exp":1})").ok());
  EXPECT_FALSE(ParseXetTokenJson(R"({"accessToken":"t","exp":1})").ok());
  EXPECT_FALSE(ParseXetTokenJson(R"({"accessToken":"t","casUrl":"http://h","exp":"1"})").ok());
  EXPECT_FALSE(ParseXetTokenJson(R"({"accessToken":"t","casUrl":"http://h","exp":1.5})").ok());
}

TEST(ClientWireTest, BatchBodiesAndOutcomes) {
  std::vector<RemoteOp> ops(5);
  ops[0].kind = RemoteOp::Kind::kAddFile;
  ops[0].path = "a b/c.txt";
  ops[0].xet_hash = *Hash::FromHex(kHashA);
  ops[0].mtime_ms = 1234;
  ops[0].content_type = "text/plain";
  ops[1].kind = RemoteOp::Kind::kDeleteFile;
  ops[1].path = "old";
  ops[2].kind = RemoteOp::Kind::kCopyFile;
  ops[2].path = "copy";
  ops[2].xet_hash = *Hash::FromHex(kHashB);
  ops[3].kind = RemoteOp::Kind::kCopyPrefix;
  ops[3].from = "x/";
  ops[3].to = "y/";
  ops[3].source_bucket = "other/src";
  ops[4].kind = RemoteOp::Kind::kMovePrefix;
  ops[4].from = "m";
  ops[4].to = "n";
  auto body = SerializeBatchOps(ops, "ns/b");
  ASSERT_TRUE(body.ok());
  const std::string expected =
      R"({"contentType":"text/plain","mtime":1234,"path":"a b/c.txt","type":"addFile","xetHash":")" +
      kHashA + "\"}\n" + R"({"path":"old","type":"deleteFile"})" + "\n" +
      R"({"path":"copy","sourceRepoId":"ns/b","sourceRepoType":"bucket","type":"copyFile","xetHash":")" +
      kHashB + "\"}\n" +
      R"({"from":"x/","sourceRepoId":"other/src","to":"y/","type":"copyPrefix"})" + "\n" +
      R"({"from":"m","to":"n","type":"movePrefix"})" + "\n";
  EXPECT_EQ(*body, expected);

  ops.resize(1);
  ops[0].path = "bad\xC3";
  auto bad = SerializeBatchOps(ops, "ns/b");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), Status::Code::kInvalidArgument);

  auto outcome = ParseBatchOutcomeJson(
      R"({"success":false,"processed":3,"succeeded":2,"failed":[{"path":"p","error":"no such file"}]})");
  ASSERT_TRUE(outcome.ok()) << outcome.status().ToString();
  EXPECT_EQ(outcome->processed, 3u);
  EXPECT_EQ(outcome->succeeded, 2u);
  ASSERT_EQ(outcome->failed.size(), 1u);
  EXPECT_EQ(outcome->failed[0].path, "p");
  EXPECT_EQ(outcome->failed[0].error, "no such file");
  EXPECT_FALSE(ParseBatchOutcomeJson(R"({"success":true})").ok());
  EXPECT_FALSE(ParseBatchOutcomeJson(R"({"processed":1,"succeeded":1,"failed":{}})").ok());
}

TEST(ClientWireTest, PosixInListingsAndBuckets) {
  const std::string body =
      R"([{"type":"directory","path":"d","mtime":"1970-01-01T00:00:07.000Z",)"
      R"("posix":{"mode":16877,"uid":1,"gid":2}},)"
      R"({"type":"directory","path":"implied"},)"
      R"({"type":"file","path":"d/f","size":3,"xetHash":")" +
      kHashA +
      R"(","mtime":"1970-01-01T00:00:01.000Z",)"
      R"("posix":{"mode":33188,"uid":5,"gid":6,"atime":9,"xattrs":{"user.k":"AP8="}}},)"
      R"({"type":"file","path":"l","size":0,"xetHash":")" +
      std::string(64, '0') +
      R"(","posix":{"mode":41471,"uid":0,"gid":0,"target":"d/f"}},)"
      R"({"type":"file","path":"tty","size":0,"xetHash":")" +
      std::string(64, '0') + R"(","posix":{"mode":8592,"uid":0,"gid":5,"rdev":34816}}])";
  auto entries = ParseEntryListJson(body);
  ASSERT_TRUE(entries.ok()) << entries.status().ToString();
  ASSERT_EQ(entries->size(), 5u);
  // A character device (020620), makedev(136, 0).
  ASSERT_TRUE((*entries)[4].posix.has_value());
  EXPECT_EQ((*entries)[4].posix->mode, 020620u);
  EXPECT_EQ((*entries)[4].posix->rdev, 136u << 8);
  const RemoteEntry& d = (*entries)[0];
  EXPECT_TRUE(d.is_directory);
  EXPECT_EQ(d.mtime_ms, 7000);
  ASSERT_TRUE(d.posix.has_value());
  EXPECT_EQ(d.posix->mode, 040755u);
  EXPECT_EQ(d.posix->gid, 2u);
  EXPECT_FALSE((*entries)[1].posix.has_value());
  const RemoteEntry& f = (*entries)[2];
  ASSERT_TRUE(f.posix.has_value());
  EXPECT_EQ(f.posix->atime_ms, 9);
  ASSERT_EQ(f.posix->xattrs.size(), 1u);
  EXPECT_EQ(f.posix->xattrs[0].first, "user.k");
  EXPECT_EQ(f.posix->xattrs[0].second, std::string("\0\xff", 2));
  EXPECT_EQ(f.posix->xattrs[0].second.size(), 2u);
  EXPECT_EQ((*entries)[3].posix->target, "d/f");

  // Malformed posix, or posix that contradicts the item: Corruption.
  const std::string file_head =
      R"([{"type":"file","path":"f","size":3,"xetHash":")" + kHashA + R"(","posix":)";
  for (const std::string& bad : std::vector<std::string>{
           file_head + "5}]",
           file_head + R"({"mode":"644","uid":0,"gid":0}}])",
           file_head + R"({"mode":420,"uid":0,"gid":0}}])",
           file_head + R"({"mode":33188,"uid":0,"gid":0,"target":"x"}}])",
           file_head + R"({"mode":33188,"uid":0,"gid":0,"xattrs":{"a":"!"}}}])",
           file_head + R"({"mode":16877,"uid":0,"gid":0}}])",               // a file with dir mode
           file_head + R"({"mode":41471,"uid":0,"gid":0,"target":"t"}}])",  // link with content
           file_head + R"({"mode":4516,"uid":0,"gid":0}}])",                // FIFO with content
           file_head + R"({"mode":8612,"uid":0,"gid":0,"rdev":1}}])",       // device with content
           R"([{"type":"directory","path":"d","posix":{"mode":4516,"uid":0,"gid":0}}])",
           R"([{"type":"directory","path":"d","posix":{"mode":33188,"uid":0,"gid":0}}])",
       }) {
    auto r = ParseEntryListJson(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().code(), Status::Code::kCorruption) << r.status().ToString();
  }

  auto b = ParseBucketJson(R"({"id":"ns/b","generation":42})");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->generation, 42u);
  EXPECT_EQ(ParseBucketJson(R"({"id":"ns/b"})")->generation, 0u);  // the Hub sends none
  EXPECT_FALSE(ParseBucketJson(R"({"id":"ns/b","generation":-1})").ok());
  // A directory's unreadable mtime is ignored, as before.
  auto lenient = ParseEntryListJson(R"([{"type":"directory","path":"d","mtime":[]}])");
  ASSERT_TRUE(lenient.ok());
  EXPECT_EQ((*lenient)[0].mtime_ms, 0);
  EXPECT_FALSE(ParseBucketJson(R"({"id":"ns/b","generation":"1"})").ok());
}

TEST(ClientWireTest, PosixBatchOps) {
  std::vector<RemoteOp> ops(4);
  RemotePosix file;
  file.mode = 0100644;
  file.uid = 1;
  file.gid = 2;
  file.xattrs = {{"user.k", std::string("\0\xff", 2)}};
  ops[0].kind = RemoteOp::Kind::kAddFile;
  ops[0].path = "f";
  ops[0].xet_hash = *Hash::FromHex(kHashA);
  ops[0].posix = file;
  ops[1].kind = RemoteOp::Kind::kAddDirectory;
  ops[1].path = "d";
  ops[1].mtime_ms = 5;
  ops[1].posix = RemotePosix{040700, 0, 0, 0, "", {}};
  ops[2].kind = RemoteOp::Kind::kSetMetadata;
  ops[2].path = "l";
  ops[2].posix = RemotePosix{0120777, 0, 0, 3, "target", {}};
  ops[3].kind = RemoteOp::Kind::kMovePrefix;
  ops[3].from = "a";
  ops[3].to = "b";
  ops[3].no_replace = true;
  auto body = SerializeBatchOps(ops, "ns/b");
  ASSERT_TRUE(body.ok()) << body.status().ToString();
  const std::string expected =
      R"({"path":"f","posix":{"gid":2,"mode":33188,"uid":1,"xattrs":{"user.k":"AP8="}},"type":"addFile","xetHash":")" +
      kHashA + "\"}\n" +
      R"({"mtime":5,"path":"d","posix":{"gid":0,"mode":16832,"uid":0},"type":"addDirectory"})"
      "\n"
      R"({"path":"l","posix":{"atime":3,"gid":0,"mode":41471,"target":"target","uid":0},"type":"setMetadata"})"
      "\n"
      R"({"from":"a","noReplace":true,"to":"b","type":"movePrefix"})"
      "\n";
  EXPECT_EQ(*body, expected);
  // An addDirectory without posix is bare; a setMetadata without posix or with posix that
  // breaks the rules is refused before anything is sent.
  std::vector<RemoteOp> one(1);
  one[0].kind = RemoteOp::Kind::kAddDirectory;
  one[0].path = "e";
  EXPECT_EQ(*SerializeBatchOps(one, "ns/b"), "{\"path\":\"e\",\"type\":\"addDirectory\"}\n");
  one[0].kind = RemoteOp::Kind::kSetMetadata;
  EXPECT_EQ(SerializeBatchOps(one, "ns/b").status().code(), Status::Code::kInvalidArgument);
  one[0].posix = RemotePosix{0644, 0, 0, 0, "", {}};  // no type bits
  EXPECT_EQ(SerializeBatchOps(one, "ns/b").status().code(), Status::Code::kInvalidArgument);
  one[0].posix = RemotePosix{0100644, 0, 0, 0, "", {{"user.v", std::string(70000, 'v')}}};
  EXPECT_EQ(SerializeBatchOps(one, "ns/b").status().code(), Status::Code::kInvalidArgument);
}

}  // namespace
}  // namespace xet
