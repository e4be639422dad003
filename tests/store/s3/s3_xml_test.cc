// The S3 answer parsers (s3_xml.h): the documents S3 sends, and truncated, oversized,
// malformed and hostile ones.
#include "store/s3/s3_xml.h"

#include <gtest/gtest.h>

#include <string>

namespace xet {
namespace {

using Code = Status::Code;

constexpr const char* kListPage = R"(<?xml version="1.0" encoding="UTF-8"?>
<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">
  <Name>b</Name><Prefix>p/</Prefix><KeyCount>2</KeyCount><MaxKeys>1000</MaxKeys>
  <IsTruncated>true</IsTruncated>
  <Contents><Key>p/xorbs/aa/one</Key><LastModified>2026-01-01T00:00:00.000Z</LastModified>
    <ETag>&quot;abc&quot;</ETag><Size>123</Size><StorageClass>STANDARD</StorageClass></Contents>
  <Contents><Key>p/a&amp;b</Key><Size>18446744073709551615</Size></Contents>
  <NextContinuationToken>tok/en+=</NextContinuationToken>
</ListBucketResult>)";

TEST(S3XmlTest, ListPageGivesKeysSizesAndTheNextToken) {
  auto page = ParseListObjectsV2(kListPage);
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  ASSERT_EQ(page->objects.size(), 2u);
  EXPECT_EQ(page->objects[0].key, "p/xorbs/aa/one");
  EXPECT_EQ(page->objects[0].size, 123u);
  EXPECT_EQ(page->objects[1].key, "p/a&b");  // entities decoded
  EXPECT_EQ(page->objects[1].size, UINT64_MAX);
  EXPECT_TRUE(page->truncated);
  EXPECT_EQ(page->next_token, "tok/en+=");
}

TEST(S3XmlTest, EmptyLastPage) {
  auto page = ParseListObjectsV2(
      "<ListBucketResult><IsTruncated>false</IsTruncated><KeyCount>0</KeyCount>"
      "</ListBucketResult>");
  ASSERT_TRUE(page.ok());
  EXPECT_TRUE(page->objects.empty());
  EXPECT_FALSE(page->truncated);
}

TEST(S3XmlTest, BadListingsAreRefused) {
  const char* bad[] = {
      "",                                                                          // empty
      "<ListBucketResult><Contents><Key>a</Key><Size>1</Size>",                    // truncated
      "<ListBucketResult><Contents><Key>a</Key></Contents></ListBucketResult>",    // no size
      "<ListBucketResult><Contents><Size>1</Size></Contents></ListBucketResult>",  // no key
      "<ListBucketResult><Contents><Key>a</Key><Size>-1</Size></Contents></ListBucketResult>",
      "<ListBucketResult><Contents><Key>a</Key><Size>1x</Size></Contents></ListBucketResult>",
      ("<ListBucketResult><Contents><Key>a</Key><Size>18446744073709551616</Size></Contents>"
       "</ListBucketResult>"),                                                 // overflows uint64
      "<ListBucketResult><IsTruncated>true</IsTruncated></ListBucketResult>",  // no token
      "<Other/>",                                                              // not a listing
      "<ListBucketResult><a></b></ListBucketResult>",                          // malformed
  };
  for (const char* doc : bad) {
    EXPECT_EQ(ParseListObjectsV2(doc).status().code(), Code::kCorruption) << doc;
  }
}

TEST(S3XmlTest, HostileDocumentsAreRefused) {
  // Entity expansion needs a DTD: any DTD is refused.
  const std::string laughs =
      "<?xml version=\"1.0\"?><!DOCTYPE l [<!ENTITY a \"aaaaaaaaaa\">"
      "<!ENTITY b \"&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;\">]><ListBucketResult><Name>&b;</Name>"
      "</ListBucketResult>";
  EXPECT_EQ(ParseListObjectsV2(laughs).status().code(), Code::kCorruption);
  // Deep nesting.
  std::string deep;
  for (int i = 0; i < 100; ++i) deep += "<a>";
  EXPECT_EQ(ParseS3Error(deep).status().code(), Code::kCorruption);
  // Oversized text and oversized documents.
  const std::string long_text =
      "<Error><Message>" + std::string(70 << 10, 'x') + "</Message></Error>";
  EXPECT_EQ(ParseS3Error(long_text).status().code(), Code::kCorruption);
  const std::string huge(kMaxS3XmlBytes + 1, ' ');
  EXPECT_EQ(ParseS3Error(huge).status().code(), Code::kCorruption);
}

TEST(S3XmlTest, ErrorsAndMultipartAnswers) {
  auto err = ParseS3Error(
      "<?xml version=\"1.0\"?><Error><Code>NoSuchKey</Code><Message>The key does not "
      "exist</Message><Key>x</Key></Error>");
  ASSERT_TRUE(err.ok());
  EXPECT_EQ(err->code, "NoSuchKey");
  EXPECT_EQ(err->message, "The key does not exist");

  auto id = ParseInitiateMultipartUpload(
      "<InitiateMultipartUploadResult><Bucket>b</Bucket><Key>k</Key><UploadId>u-1</UploadId>"
      "</InitiateMultipartUploadResult>");
  ASSERT_TRUE(id.ok());
  EXPECT_EQ(*id, "u-1");
  EXPECT_EQ(ParseInitiateMultipartUpload("<InitiateMultipartUploadResult/>").status().code(),
            Code::kCorruption);

  bool completed = false;
  auto done = ParseCompleteMultipartUpload(
      "<CompleteMultipartUploadResult><ETag>\"x-3\"</ETag></CompleteMultipartUploadResult>",
      &completed);
  ASSERT_TRUE(done.ok());
  EXPECT_TRUE(completed);
  // A 200 whose body is an error: S3 failed the completion after answering.
  auto failed = ParseCompleteMultipartUpload(
      "<Error><Code>InternalError</Code><Message>retry</Message></Error>", &completed);
  ASSERT_TRUE(failed.ok());
  EXPECT_FALSE(completed);
  EXPECT_EQ(failed->code, "InternalError");
  EXPECT_EQ(ParseCompleteMultipartUpload("<Nothing/>", &completed).status().code(),
            Code::kCorruption);
}

}  // namespace
}  // namespace xet
