// Every route of `xetstore serve` that takes a body checks the token before reading it: a
// real server on a loopback port, requests with `Expect: 100-continue` and large declared
// bodies. A refused request is answered 401/403 (404 for a bucket the caller cannot see)
// instead of `100 Continue`, so the client is never asked for the body; an allowed one gets
// `100 Continue`.
#include <gtest/gtest.h>

#include <string>

#include "support/curl_client.h"
#include "support/http_test_client.h"
#include "support/server_process.h"
#include "support/test_support.h"

namespace xet {
namespace {

using testing::Bearer;
using testing::Fetch;
using testing::ServerProcess;
using testing::TestHttpClient;

class CasServerPreBodyAuthTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = std::make_unique<ServerProcess>(testing::MakeTempDir("prebody"));
    admin_ = server_->AdminToken();
    writer_ = server_->CreateToken("write", "team/a");
    reader_ = server_->CreateToken("read", "team/a");
    other_ = server_->CreateToken("write", "team/b");
    const std::string& url = server_->url();
    port_ = static_cast<uint16_t>(std::stoi(url.substr(url.rfind(':') + 1)));
    ASSERT_EQ(Fetch("POST", url + "/api/buckets/team/a", {Bearer(admin_)}, "").status, 200);
  }

  // What the server first answers to the headers of a POST of `length` body bytes: the
  // status code of its first response line ("100" for 100 Continue).
  std::string FirstAnswer(const std::string& path, uint64_t length, const std::string& token) {
    TestHttpClient client(port_);
    std::string head = "POST " + path +
                       " HTTP/1.1\r\nHost: t\r\nContent-Length: " + std::to_string(length) +
                       "\r\nExpect: 100-continue\r\n";
    if (!token.empty()) head += "Authorization: Bearer " + token + "\r\n";
    if (!client.Send(head + "\r\n")) return "send failed";
    const std::string raw = client.ReadSome();
    if (raw.size() < 12) return "no answer";
    return raw.substr(9, 3);
  }

  std::unique_ptr<ServerProcess> server_;
  std::string admin_, writer_, reader_, other_;
  uint16_t port_ = 0;
};

TEST_F(CasServerPreBodyAuthTest, CasUploadsNeedAWriteTokenBeforeTheirBody) {
  const std::string xorb = "/v1/xorbs/default/" + std::string(64, 'a');
  for (const auto& [path, length] : {std::pair<std::string, uint64_t>{"/v1/shards", 130'000'000},
                                     {"/v2/shards", 130'000'000},
                                     {xorb, 66'000'000}}) {
    SCOPED_TRACE(path);
    EXPECT_EQ(FirstAnswer(path, length, ""), "401");
    EXPECT_EQ(FirstAnswer(path, length, "hf_" + std::string(40, '0')), "401");  // unknown
    EXPECT_EQ(FirstAnswer(path, length, reader_), "403");
    EXPECT_EQ(FirstAnswer(path, length, writer_), "100");
    EXPECT_EQ(FirstAnswer(path, length, admin_), "100");
  }
  // Malformed and hostile Authorization values are 401 before the body, too.
  for (const std::string& value :
       {std::string("Basic dXNlcjpwYXNz"), std::string("Bearer"), std::string("Bearer "),
        std::string("Bearer xet_") + std::string(8000, 'A') + ".x",
        std::string("Bearer hf_") + std::string(40, 'g'), std::string("bearer\t\t")}) {
    SCOPED_TRACE(value.substr(0, 40));
    TestHttpClient client(port_);
    ASSERT_TRUE(
        client.Send("POST /v1/shards HTTP/1.1\r\nHost: t\r\nContent-Length: 1000000\r\n"
                    "Expect: 100-continue\r\nAuthorization: " +
                    value + "\r\n\r\n"));
    EXPECT_EQ(client.ReadSome().substr(0, 12), "HTTP/1.1 401");
  }
  EXPECT_EQ(FirstAnswer("/v1/reconstructions", 500'000, ""), "401");
  EXPECT_EQ(FirstAnswer("/v1/reconstructions", 500'000, reader_), "100");
}

TEST_F(CasServerPreBodyAuthTest, HubRoutesWithABodyCheckTheCallerBeforeTheBody) {
  const std::string batch = "/api/buckets/team/a/batch";
  EXPECT_EQ(FirstAnswer(batch, 60'000'000, ""), "401");
  EXPECT_EQ(FirstAnswer(batch, 60'000'000, reader_), "403");
  EXPECT_EQ(FirstAnswer(batch, 60'000'000, other_), "403");  // scopes do not cover team/a
  EXPECT_EQ(FirstAnswer(batch, 60'000'000, writer_), "100");

  EXPECT_EQ(FirstAnswer("/api/buckets/team/new", 100, ""), "401");
  EXPECT_EQ(FirstAnswer("/api/buckets/team/new", 100, reader_), "403");
  EXPECT_EQ(FirstAnswer("/api/buckets/bad..name/x", 100, writer_), "400");

  EXPECT_EQ(FirstAnswer("/api/repos/move", 1000, ""), "401");
  EXPECT_EQ(FirstAnswer("/api/repos/move", 1000, reader_), "403");
  EXPECT_EQ(FirstAnswer("/api/repos/move", 1000, writer_), "100");

  const std::string paths_info = "/api/buckets/team/a/paths-info";
  EXPECT_EQ(FirstAnswer(paths_info, 1'000'000, ""), "401");      // private bucket
  EXPECT_EQ(FirstAnswer(paths_info, 1'000'000, other_), "404");  // invisible to it
  EXPECT_EQ(FirstAnswer(paths_info, 1'000'000, reader_), "100");
}

}  // namespace
}  // namespace xet
