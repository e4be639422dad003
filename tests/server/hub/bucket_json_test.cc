#include "server/hub/bucket_json.h"

#include <gtest/gtest.h>

namespace xet {
namespace {

using nlohmann::json;

Hash H(char digit) { return *Hash::FromHex(std::string(64, digit)); }

TEST(BucketJsonTest, FormatIsoMillis) {
  EXPECT_EQ(FormatIsoMillis(0), "1970-01-01T00:00:00.000Z");
  EXPECT_EQ(FormatIsoMillis(1700000000123), "2023-11-14T22:13:20.123Z");
  EXPECT_EQ(FormatIsoMillis(951782400000), "2000-02-29T00:00:00.000Z");
  EXPECT_EQ(FormatIsoMillis(1709251199999), "2024-02-29T23:59:59.999Z");
  EXPECT_EQ(FormatIsoMillis(253402300799999), "9999-12-31T23:59:59.999Z");
  EXPECT_EQ(FormatIsoMillis(-5), "1970-01-01T00:00:00.000Z");
}

TEST(BucketJsonTest, BucketInfoHasTheHubFields) {
  BucketRecord b;
  b.ns = "org";
  b.name = "data";
  b.is_private = false;
  b.created_at_ms = 1700000000123;
  b.updated_at_ms = 1700000001000;
  b.total_size = 12345678901;
  b.total_files = 7;
  const json j = BucketInfoJson(b);
  EXPECT_EQ(j, json::parse(R"({"id":"org/data","private":false,
      "createdAt":"2023-11-14T22:13:20.123Z","updatedAt":"2023-11-14T22:13:21.000Z",
      "size":12345678901,"totalFiles":7})"));
}

TEST(BucketJsonTest, CreatedAnswer) {
  EXPECT_EQ(BucketCreatedJson("http://h:1/buckets/a/b", "a/b"),
            json::parse(R"({"url":"http://h:1/buckets/a/b","id":"a/b","name":"a/b"})"));
}

TEST(BucketJsonTest, FileEntries) {
  BucketEntry e;
  e.path = "dir/f.bin";
  e.file_hash = H('c');
  e.size = 42;
  e.mtime_ms = 1000;
  e.uploaded_at_ms = 2000;
  e.content_type = "text/csv";
  BucketEntry bare;
  bare.path = "x";
  bare.file_hash = H('1');
  bare.size = 0;
  bare.uploaded_at_ms = 3000;
  const std::vector<BucketEntry> entries = {e, bare};
  EXPECT_EQ(json::parse(BucketFilesJson(entries)), json::parse(R"([
      {"type":"file","path":"dir/f.bin","size":42,"xetHash":")" +
                                                               std::string(64, 'c') + R"(",
       "mtime":"1970-01-01T00:00:01.000Z","uploadedAt":"1970-01-01T00:00:02.000Z",
       "contentType":"text/csv"},
      {"type":"file","path":"x","size":0,"xetHash":")" + std::string(64, '1') +
                                                               R"(",
       "mtime":"1970-01-01T00:00:03.000Z","uploadedAt":"1970-01-01T00:00:03.000Z"}])"));
  // (Without a client mtime the upload time stands in; without a type there is no field.)
  EXPECT_EQ(BucketFilesJson(std::vector<BucketEntry>{}), "[]");
}

TEST(BucketJsonTest, StringsAreEscaped) {
  BucketEntry e;
  e.path = "q\"uo\\te/ctl\x01/\xC3\xA9\xE2\x82\xAC";
  e.file_hash = H('2');
  e.content_type = "a\"b";
  const json j = json::parse(BucketFilesJson(std::vector<BucketEntry>{e}));
  EXPECT_EQ(j[0]["path"].get<std::string>(), e.path);
  EXPECT_EQ(j[0]["contentType"], "a\"b");
}

TEST(BucketJsonTest, TreePage) {
  BucketTreeItem dir;
  dir.is_directory = true;
  dir.path = "a/b";
  BucketTreeItem file;
  file.entry.path = "a/x";
  file.entry.file_hash = H('1');
  file.entry.size = 7;
  const std::vector<BucketTreeItem> items = {dir, file};
  const json j = json::parse(BucketTreePageJson(items));
  ASSERT_EQ(j.size(), 2u);
  EXPECT_EQ(j[0], json::parse(R"({"type":"directory","path":"a/b"})"));
  EXPECT_EQ(j[1]["type"], "file");
  EXPECT_EQ(j[1]["path"], "a/x");
  EXPECT_EQ(j[1]["size"], 7);
  EXPECT_EQ(BucketTreePageJson(std::vector<BucketTreeItem>{}), "[]");
}

TEST(BucketJsonTest, PosixAndDirectoryEntries) {
  PosixMetadata fp;
  fp.mode = 0100640;
  fp.uid = 5;
  fp.gid = 6;
  fp.xattrs = {{"user.k", std::string("\0\xff", 2)}};
  BucketEntry f;
  f.path = "d/f";
  f.file_hash = H('a');
  f.size = 3;
  f.mtime_ms = 1000;
  f.uploaded_at_ms = 2000;
  f.posix = fp;
  BucketEntry d;
  d.path = "d";
  d.is_directory = true;
  d.uploaded_at_ms = 1700000000123;
  PosixMetadata dp;
  dp.mode = 040755;
  d.posix = dp;
  const json files = json::parse(BucketFilesJson(std::vector<BucketEntry>{d, f}));
  EXPECT_EQ(files, json::parse(R"([
    {"type":"directory","path":"d","mtime":"2023-11-14T22:13:20.123Z",
     "posix":{"mode":16877,"uid":0,"gid":0}},
    {"type":"file","path":"d/f","size":3,"xetHash":")" +
                               std::string(64, 'a') + R"(",
     "mtime":"1970-01-01T00:00:01.000Z","uploadedAt":"1970-01-01T00:00:02.000Z",
     "posix":{"mode":33184,"uid":5,"gid":6,"xattrs":{"user.k":"AP8="}}}])"));
  // Listing items: an implied directory stays {"type","path"}; an explicit one has its
  // entry's mtime and posix.
  std::vector<BucketTreeItem> items(3);
  items[0].is_directory = true;
  items[0].path = "implied";
  items[1].is_directory = true;
  items[1].path = "d";
  items[1].entry = d;
  items[2].path = "d/f";
  items[2].entry = f;
  const json page = json::parse(BucketTreePageJson(items));
  EXPECT_EQ(page[0], json::parse(R"({"type":"directory","path":"implied"})"));
  EXPECT_EQ(page[1], files[0]);
  EXPECT_EQ(page[2], files[1]);
  // A generation only on the one-bucket answer.
  BucketRecord b;
  b.generation = 42;
  EXPECT_FALSE(BucketInfoJson(b).contains("generation"));
  EXPECT_EQ(BucketDetailJson(b)["generation"], 42);
}

TEST(BucketJsonTest, BatchAnswer) {
  EXPECT_EQ(json::parse(BatchAnswerJson(3, 3, {})),
            json::parse(R"({"success":true,"processed":3,"succeeded":3,"failed":[]})"));
  // Client text with invalid UTF-8 is replaced, not thrown on.
  const json j = json::parse(BatchAnswerJson(2, 1, {{"p\xff", "bad"}}));
  EXPECT_EQ(j["success"], false);
  EXPECT_EQ(j["succeeded"], 1);
  ASSERT_EQ(j["failed"].size(), 1u);
  EXPECT_EQ(j["failed"][0]["path"], "p\xEF\xBF\xBD");
  EXPECT_EQ(j["failed"][0]["error"], "bad");
}

TEST(BucketJsonTest, TokenAndFileInfo) {
  EXPECT_EQ(json::parse(XetTokenJson("xet_t", "http://h", 1700000000)),
            json::parse(R"({"accessToken":"xet_t","casUrl":"http://h","exp":1700000000})"));
  BucketEntry e;
  e.file_hash = H('d');
  e.size = 9;
  const std::string hex(64, 'd');
  EXPECT_EQ(json::parse(XetFileInfoJson(e, "http://r", "http://c")),
            json({{"hash", hex},
                  {"size", 9},
                  {"etag", "\"" + hex + "\""},
                  {"refreshUrl", "http://r"},
                  {"reconstructionUrl", "http://c"}}));
}

}  // namespace
}  // namespace xet
