// A fixture for tests of the client's CAS parts against a real `xetstore serve`: the
// server, a write token on scope team/a, and a CasClient using it; UploadAll stores a
// prepared upload (support/xet_fixtures.h) through that client.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "client/cas/cas_client.h"
#include "client/transport/http_client.h"
#include "support/server_process.h"
#include "support/test_support.h"
#include "support/xet_fixtures.h"

namespace xet::testing {

class CasClientFixture : public ::testing::Test {
 protected:
  explicit CasClientFixture(HttpClientOptions options = {}) : http_(std::move(options)) {}

  // Starts the server in a new scratch directory named after `name`, with `serve_args`, and
  // makes cas_ (fails the test when no token can be made).
  void StartServer(const std::string& name, std::vector<std::string> serve_args = {}) {
    server_ = std::make_unique<ServerProcess>(MakeTempDir(name), std::move(serve_args));
    token_ = server_->CreateToken("write", "team/a");
    ASSERT_FALSE(token_.empty());
    tokens_ = MakeStaticTokenSource(XetToken{token_, server_->url() + "/", 0});
    cas_ = std::make_unique<CasClient>(http_, *tokens_);
  }

  // Uploads every xorb of `a`, then its shard (fails the test on an error).
  void UploadAll(const UploadArtifacts& a) {
    for (const SerializedXorb& x : a.xorbs) {
      auto inserted = cas_->UploadXorb(x.hash, x.bytes);
      ASSERT_TRUE(inserted.ok()) << inserted.status().ToString();
    }
    auto registered = cas_->UploadShard(std::span<const uint8_t>(
        reinterpret_cast<const uint8_t*>(a.shard_bytes.data()), a.shard_bytes.size()));
    ASSERT_TRUE(registered.ok()) << registered.status().ToString();
  }

  HttpClient http_;
  std::unique_ptr<ServerProcess> server_;
  std::string token_;
  std::unique_ptr<CasTokenSource> tokens_;
  std::unique_ptr<CasClient> cas_;
};

}  // namespace xet::testing
