// A real S3-compatible server for tests: s3rver (npm, pinned in tests/s3rver/), started on
// a loopback ephemeral port with its own data directory and one bucket.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace xet::testing {

class S3TestServer {
 public:
  static constexpr const char* kBucket = "xet-test";
  static constexpr const char* kAccessKey = "S3RVER";  // s3rver's built-in account
  static constexpr const char* kSecretKey = "S3RVER";

  // The server of this test process, started on first use (fails the test, with the command
  // that installs it, when s3rver is missing or does not start within 20 s).
  static S3TestServer& Shared();

  explicit S3TestServer(std::string data_dir);
  ~S3TestServer();  // SIGKILLs the server
  S3TestServer(const S3TestServer&) = delete;
  S3TestServer& operator=(const S3TestServer&) = delete;

  bool started() const { return !endpoint_.empty(); }
  const std::string& endpoint() const { return endpoint_; }  // "http://127.0.0.1:PORT"
  const std::string& data_dir() const { return data_dir_; }
  // Multipart uploads started but neither completed nor aborted, as s3rver keeps them on
  // disk (one directory per upload under the bucket's uploads directory).
  std::vector<std::string> UnfinishedUploads() const;

 private:
  std::string data_dir_;
  std::string log_path_;
  std::string endpoint_;
  pid_t pid_ = -1;
};

// The s3rver executable: $XETSTORE_S3RVER, else tests/s3rver/node_modules/.bin/s3rver.
std::string S3rverPath();

}  // namespace xet::testing
