#include "support/http_test_client.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>

namespace xet::testing {

std::optional<std::string> TestHttpResponse::Header(std::string_view name) const {
  for (const auto& [key, value] : headers) {
    if (key.size() == name.size() && strncasecmp(key.data(), name.data(), key.size()) == 0) {
      return value;
    }
  }
  return std::nullopt;
}

TestHttpClient::TestHttpClient(uint16_t port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    connect_errno_ = errno;
    return;
  }
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    connect_errno_ = errno;
    ::close(fd);
    return;
  }
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  fd_ = fd;
}

TestHttpClient::~TestHttpClient() { Close(); }

void TestHttpClient::Close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

bool TestHttpClient::Send(std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

bool TestHttpClient::Fill(Deadline deadline) {
  if (fd_ < 0) return false;
  while (true) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd pfd{fd_, POLLIN, 0};
    int rc = ::poll(&pfd, 1, static_cast<int>(left.count()));
    if (rc < 0 && errno == EINTR) continue;
    if (rc <= 0) return false;
    char chunk[16384];
    ssize_t n = ::recv(fd_, chunk, sizeof chunk, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    buffer_.append(chunk, static_cast<size_t>(n));
    return true;
  }
}

bool TestHttpClient::ReadExact(size_t n, std::string* out, Deadline deadline) {
  while (buffer_.size() < n) {
    if (!Fill(deadline)) return false;
  }
  out->append(buffer_, 0, n);
  buffer_.erase(0, n);
  return true;
}

bool TestHttpClient::ReadLine(std::string* line, Deadline deadline) {
  size_t eol;
  while ((eol = buffer_.find("\r\n")) == std::string::npos) {
    if (!Fill(deadline)) return false;
  }
  line->assign(buffer_, 0, eol);
  buffer_.erase(0, eol + 2);
  return true;
}

std::optional<TestHttpResponse> TestHttpClient::ReadHead(std::chrono::milliseconds timeout) {
  Deadline deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    TestHttpResponse response;
    std::string line;
    if (!ReadLine(&line, deadline)) return std::nullopt;
    // "HTTP/1.1 200 OK"
    if (line.size() < 12 || line.compare(0, 5, "HTTP/") != 0) return std::nullopt;
    response.status = std::atoi(line.c_str() + 9);
    while (true) {
      if (!ReadLine(&line, deadline)) return std::nullopt;
      if (line.empty()) break;
      size_t colon = line.find(':');
      if (colon == std::string::npos) return std::nullopt;
      std::string value = line.substr(colon + 1);
      while (!value.empty() && value.front() == ' ') value.erase(0, 1);
      response.headers.emplace_back(line.substr(0, colon), value);
    }
    if (response.status >= 100 && response.status < 200) continue;  // interim
    auto te = response.Header("Transfer-Encoding");
    response.chunked = te && te->find("chunked") != std::string::npos;
    return response;
  }
}

std::optional<TestHttpResponse> TestHttpClient::ReadResponse(bool head,
                                                             std::chrono::milliseconds timeout) {
  Deadline deadline = std::chrono::steady_clock::now() + timeout;
  std::optional<TestHttpResponse> response = ReadHead(timeout);
  if (!response) return std::nullopt;
  if (head || response->status == 204 || response->status == 304) return response;
  if (response->chunked) {
    while (true) {
      std::string line;
      if (!ReadLine(&line, deadline)) return std::nullopt;
      size_t size = std::strtoul(line.c_str(), nullptr, 16);
      if (size == 0) {
        // Trailers, then an empty line.
        while (true) {
          if (!ReadLine(&line, deadline)) return std::nullopt;
          if (line.empty()) return response;
        }
      }
      if (!ReadExact(size, &response->body, deadline)) return std::nullopt;
      std::string crlf;
      if (!ReadExact(2, &crlf, deadline) || crlf != "\r\n") return std::nullopt;
    }
  }
  if (auto length = response->Header("Content-Length")) {
    if (!ReadExact(std::strtoull(length->c_str(), nullptr, 10), &response->body, deadline)) {
      return std::nullopt;
    }
    return response;
  }
  while (Fill(deadline)) {
  }
  response->body = std::move(buffer_);
  buffer_.clear();
  return response;
}

std::string TestHttpClient::ReadSome(std::chrono::milliseconds timeout) {
  if (buffer_.empty() && !Fill(std::chrono::steady_clock::now() + timeout)) return "";
  std::string out = std::move(buffer_);
  buffer_.clear();
  return out;
}

bool TestHttpClient::WaitForClose(std::chrono::milliseconds timeout) {
  if (fd_ < 0) return true;
  Deadline deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    pollfd pfd{fd_, POLLIN, 0};
    int rc = ::poll(&pfd, 1, static_cast<int>(std::max<int64_t>(left.count(), 1)));
    if (rc < 0 && errno == EINTR) continue;
    if (rc <= 0) return false;
    char chunk[16384];
    ssize_t n = ::recv(fd_, chunk, sizeof chunk, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return true;
  }
  return false;
}

}  // namespace xet::testing
