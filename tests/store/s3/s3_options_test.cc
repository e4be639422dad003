// S3 locations and the AWS environment (s3_options.h).
#include "store/s3/s3_options.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace xet {
namespace {

using Code = Status::Code;

TEST(S3OptionsTest, ParsesBucketAndPrefix) {
  S3Options o;
  ASSERT_TRUE(ParseS3Url("s3://my-bucket", &o).ok());
  EXPECT_EQ(o.bucket, "my-bucket");
  EXPECT_EQ(o.prefix, "");
  ASSERT_TRUE(ParseS3Url("s3://my.bucket/xet/prod/", &o).ok());
  EXPECT_EQ(o.bucket, "my.bucket");
  EXPECT_EQ(o.prefix, "xet/prod");
}

TEST(S3OptionsTest, RefusesBadLocations) {
  const char* bad[] = {"",
                       "http://b/p",
                       "s3://",
                       "s3://ab",
                       "s3://Upper",
                       "s3://-lead",
                       "s3://b_c/p",
                       "s3://bucket/a//b",
                       "s3://bucket/../x",
                       "s3://bucket/A",
                       "s3://bucket/.hidden",
                       "s3://" /* + 64 chars below */};
  for (const char* url : bad) {
    S3Options o;
    EXPECT_EQ(ParseS3Url(url, &o).code(), Code::kInvalidArgument) << url;
  }
  S3Options o;
  EXPECT_EQ(ParseS3Url("s3://" + std::string(64, 'a'), &o).code(), Code::kInvalidArgument);
}

TEST(S3OptionsTest, TakesEndpointRegionAndCredentialsFromTheEnvironment) {
  std::map<std::string, std::string> env = {{"AWS_ENDPOINT_URL", "http://127.0.0.1:9000/"},
                                            {"AWS_DEFAULT_REGION", "eu-west-3"},
                                            {"AWS_ACCESS_KEY_ID", "AK"},
                                            {"AWS_SECRET_ACCESS_KEY", "SK"},
                                            {"AWS_SESSION_TOKEN", "ST"}};
  const auto get = [&](const char* n) -> std::optional<std::string> {
    auto it = env.find(n);
    if (it == env.end()) return std::nullopt;
    return it->second;
  };
  S3Options o;
  o.path_style = false;
  ASSERT_TRUE(ApplyAwsEnvironment(get, &o).ok());
  EXPECT_EQ(o.endpoint, "http://127.0.0.1:9000");
  EXPECT_TRUE(o.path_style);
  EXPECT_EQ(o.region, "eu-west-3");
  EXPECT_EQ(o.access_key, "AK");
  EXPECT_EQ(o.secret_key, "SK");
  EXPECT_EQ(o.session_token, "ST");

  // The S3-specific endpoint wins; AWS_REGION wins over AWS_DEFAULT_REGION; flags (already
  // set) win over the environment.
  env["AWS_ENDPOINT_URL_S3"] = "https://s3.example.com";
  env["AWS_REGION"] = "ap-south-1";
  S3Options flags;
  flags.access_key = "FLAG";
  flags.secret_key = "FLAGSECRET";
  ASSERT_TRUE(ApplyAwsEnvironment(get, &flags).ok());
  EXPECT_EQ(flags.endpoint, "https://s3.example.com");
  EXPECT_EQ(flags.region, "ap-south-1");
  EXPECT_EQ(flags.access_key, "FLAG");

  // No endpoint: AWS's regional one, virtual-hosted.
  env.erase("AWS_ENDPOINT_URL_S3");
  env.erase("AWS_ENDPOINT_URL");
  S3Options aws;
  ASSERT_TRUE(ApplyAwsEnvironment(get, &aws).ok());
  EXPECT_EQ(aws.endpoint, "https://s3.ap-south-1.amazonaws.com");
  EXPECT_FALSE(aws.path_style);
}

TEST(S3OptionsTest, MissingCredentialsOrBadEndpointsAreErrorsThatSayWhatToSet) {
  const auto none = [](const char*) -> std::optional<std::string> { return std::nullopt; };
  S3Options o;
  const Status st = ApplyAwsEnvironment(none, &o);
  EXPECT_EQ(st.code(), Code::kInvalidArgument);
  EXPECT_NE(st.message().find("AWS_ACCESS_KEY_ID"), std::string::npos);

  const char* bad[] = {"ftp://host", "http://", "http://host/path", "host:9000", "http://ho st"};
  for (const char* e : bad) {
    S3Options b;
    b.endpoint = e;
    b.access_key = b.secret_key = "x";
    EXPECT_EQ(ApplyAwsEnvironment(none, &b).code(), Code::kInvalidArgument) << e;
  }
}

}  // namespace
}  // namespace xet
