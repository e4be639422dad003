#include "support/scripted_http_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <stdexcept>

namespace xet::testing {
namespace {

int ListenLoopback(int* port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw std::runtime_error("socket failed");
  int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(fd, 16) != 0) {
    ::close(fd);
    throw std::runtime_error("bind/listen failed");
  }
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  *port = ntohs(addr.sin_port);
  return fd;
}

bool WriteAll(int fd, const std::string& data) {
  size_t off = 0;
  while (off < data.size()) {
    const ssize_t n = ::send(fd, data.data() + off, data.size() - off, MSG_NOSIGNAL);
    if (n <= 0) return false;
    off += static_cast<size_t>(n);
  }
  return true;
}

// Reads one request (headers, then Content-Length bytes of body).
bool ReadRequest(int fd, ScriptedRequest* req) {
  std::string data;
  char buf[65536];
  size_t header_end = std::string::npos;
  while (header_end == std::string::npos) {
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) return false;
    data.append(buf, static_cast<size_t>(n));
    header_end = data.find("\r\n\r\n");
  }
  const std::string head = data.substr(0, header_end);
  size_t line_end = head.find("\r\n");
  const std::string request_line = head.substr(0, line_end);
  const size_t sp1 = request_line.find(' '), sp2 = request_line.rfind(' ');
  req->method = request_line.substr(0, sp1);
  req->target = request_line.substr(sp1 + 1, sp2 - sp1 - 1);
  size_t content_length = 0;
  size_t pos = line_end == std::string::npos ? head.size() : line_end + 2;
  while (pos < head.size()) {
    size_t end = head.find("\r\n", pos);
    if (end == std::string::npos) end = head.size();
    const std::string line = head.substr(pos, end - pos);
    const size_t colon = line.find(':');
    if (colon != std::string::npos) {
      std::string value = line.substr(colon + 1);
      while (!value.empty() && value.front() == ' ') value.erase(0, 1);
      req->headers.emplace_back(line.substr(0, colon), value);
      if (::strcasecmp(line.substr(0, colon).c_str(), "Content-Length") == 0) {
        content_length = std::strtoull(value.c_str(), nullptr, 10);
      }
    }
    pos = end + 2;
  }
  req->body = data.substr(header_end + 4);
  while (req->body.size() < content_length) {
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) return false;
    req->body.append(buf, static_cast<size_t>(n));
  }
  return true;
}

}  // namespace

std::string ScriptedRequest::Header(const std::string& name) const {
  for (const auto& [k, v] : headers) {
    if (::strcasecmp(k.c_str(), name.c_str()) == 0) return v;
  }
  return "";
}

ScriptedHttpServer::ScriptedHttpServer(std::vector<Handler> script) : script_(std::move(script)) {
  listen_fd_ = ListenLoopback(&port_);
  thread_ = std::thread([this] { Run(); });
}

ScriptedHttpServer::~ScriptedHttpServer() {
  stop_ = true;
  ::shutdown(listen_fd_, SHUT_RDWR);
  thread_.join();
  ::close(listen_fd_);
}

std::vector<ScriptedRequest> ScriptedHttpServer::requests() const {
  std::lock_guard lock(mu_);
  return requests_;
}

std::string ScriptedHttpServer::Response(int status, const std::string& body,
                                         const std::vector<std::string>& headers) {
  std::string out = "HTTP/1.1 " + std::to_string(status) + " Scripted\r\n";
  for (const auto& h : headers) out += h + "\r\n";
  out += "Content-Length: " + std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n";
  return out + body;
}

void ScriptedHttpServer::Run() {
  size_t next = 0;
  while (!stop_) {
    pollfd p{listen_fd_, POLLIN, 0};
    if (::poll(&p, 1, 50) <= 0) continue;
    const int fd = ::accept(listen_fd_, nullptr, nullptr);
    if (fd < 0) continue;
    ScriptedRequest req;
    if (ReadRequest(fd, &req)) {
      {
        std::lock_guard lock(mu_);
        requests_.push_back(req);
      }
      const std::string answer = next < script_.size()
                                     ? script_[next](req)
                                     : Response(500, "{\"error\":\"script exhausted\"}");
      ++next;
      WriteAll(fd, answer);
    }
    ::shutdown(fd, SHUT_WR);
    ::close(fd);
  }
}

int UnusedLoopbackPort() {
  int port = 0;
  const int fd = ListenLoopback(&port);
  ::close(fd);
  return port;
}

}  // namespace xet::testing
