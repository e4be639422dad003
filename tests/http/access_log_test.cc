#include "http/access_log.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace xet {
namespace {

TEST(AccessLogRedactTest, KeepsTargetsWithoutCredentials) {
  EXPECT_EQ(RedactTarget("/healthz"), "/healthz");
  EXPECT_EQ(RedactTarget("/api/buckets/ns?limit=10&cursor=abc"),
            "/api/buckets/ns?limit=10&cursor=abc");
  EXPECT_EQ(RedactTarget("/a?"), "/a?");
  EXPECT_EQ(RedactTarget("/a?flag&x="), "/a?flag&x=");
}

TEST(AccessLogRedactTest, RedactsSignatureAndTokenValues) {
  EXPECT_EQ(RedactTarget("/v1/transfer/xorb/default/ab?X-Xet-Signed-Range=bytes%3D0-9"
                         "&Expires=17&Signature=deadbeef"),
            "/v1/transfer/xorb/default/ab?X-Xet-Signed-Range=bytes%3D0-9&Expires=17"
            "&Signature=REDACTED");
  EXPECT_EQ(RedactTarget("/x?access_TOKEN=hf_secret&b=1"), "/x?access_TOKEN=REDACTED&b=1");
  EXPECT_EQ(RedactTarget("/x?X-Amz-Signature=1&X-Amz-Security-Token=2"),
            "/x?X-Amz-Signature=REDACTED&X-Amz-Security-Token=REDACTED");
  // A name alone (no '=') carries no value to hide.
  EXPECT_EQ(RedactTarget("/x?signature"), "/x?signature");
}

TEST(AccessLogRedactTest, LogLineCarriesTheRedactedPath) {
  AccessLogEntry entry;
  entry.method = "GET";
  entry.target = "/v1/transfer/xorb/default/ab?Signature=secretvalue";
  entry.status = 206;
  const std::string line = FormatAccessLogLine(entry);
  EXPECT_EQ(line.find("secretvalue"), std::string::npos) << line;
  auto parsed = nlohmann::json::parse(line);
  EXPECT_EQ(parsed["path"], "/v1/transfer/xorb/default/ab?Signature=REDACTED");
  EXPECT_EQ(parsed["status"], 206);
}

}  // namespace
}  // namespace xet
