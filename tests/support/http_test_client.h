// A tiny blocking HTTP/1.1 client over POSIX sockets for server tests: it writes raw
// bytes (so tests can send malformed or pipelined requests) and parses responses
// (Content-Length, chunked, or until close).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace xet::testing {

struct TestHttpResponse {
  int status = 0;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;  // chunked bodies are de-chunked
  bool chunked = false;

  // The first header with this name (case-insensitive).
  std::optional<std::string> Header(std::string_view name) const;
};

class TestHttpClient {
 public:
  // Connects to 127.0.0.1:`port`; check connected().
  explicit TestHttpClient(uint16_t port);
  ~TestHttpClient();
  TestHttpClient(const TestHttpClient&) = delete;
  TestHttpClient& operator=(const TestHttpClient&) = delete;

  bool connected() const { return fd_ >= 0; }
  int connect_errno() const { return connect_errno_; }

  // Writes every byte; false on error (e.g. the server closed the connection).
  bool Send(std::string_view data);
  // Reads one response (skipping 1xx interim responses); `head` for a HEAD request (no
  // body follows). nullopt on close, timeout or an unparsable response.
  std::optional<TestHttpResponse> ReadResponse(
      bool head = false, std::chrono::milliseconds timeout = std::chrono::seconds(5));
  // Reads just the status line and headers (for streamed responses); the body stays
  // unread. nullopt on close or timeout.
  std::optional<TestHttpResponse> ReadHead(
      std::chrono::milliseconds timeout = std::chrono::seconds(5));
  // Reads at least one more byte of raw data (whatever is buffered first); "" on close
  // or timeout.
  std::string ReadSome(std::chrono::milliseconds timeout = std::chrono::seconds(5));
  // Waits for the server to close the connection (EOF or reset), discarding data; false
  // on timeout.
  bool WaitForClose(std::chrono::milliseconds timeout = std::chrono::seconds(5));
  void Close();

 private:
  using Deadline = std::chrono::steady_clock::time_point;
  // Reads more bytes into buffer_; false on EOF, error or deadline.
  bool Fill(Deadline deadline);
  bool ReadExact(size_t n, std::string* out, Deadline deadline);
  bool ReadLine(std::string* line, Deadline deadline);

  int fd_ = -1;
  int connect_errno_ = 0;
  std::string buffer_;
};

}  // namespace xet::testing
