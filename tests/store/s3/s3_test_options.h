// How the store tests reach the shared s3rver (tests/support/s3_test_server.h): the options
// for its bucket, and a prefix of each test's own.
#pragma once

#include <chrono>
#include <filesystem>
#include <string>

#include "store/s3/s3_options.h"
#include "support/s3_test_server.h"

namespace xet::testing {

// Options for `server`'s bucket under `prefix` (path-style, few quick retries).
inline S3Options S3TestOptions(const S3TestServer& server, const std::string& prefix) {
  S3Options o;
  o.endpoint = server.endpoint();
  o.bucket = S3TestServer::kBucket;
  o.prefix = prefix;
  o.access_key = S3TestServer::kAccessKey;
  o.secret_key = S3TestServer::kSecretKey;
  o.path_style = true;
  o.max_attempts = 2;
  o.first_backoff = std::chrono::milliseconds(10);
  return o;
}

// "contract/" + the scratch directory's name, lowercased.
inline std::string S3TestPrefix(const std::string& scratch_dir) {
  std::string name = std::filesystem::path(scratch_dir).filename().string();
  for (char& c : name) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return "contract/" + name;
}

}  // namespace xet::testing
