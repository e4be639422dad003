// A tiny HTTP/1.1 server on a loopback ephemeral port that answers each request with the
// next scripted raw response, for client tests of what a real server rarely does: 503s,
// Retry-After, truncated or malformed bodies, connections cut mid-answer, odd Link headers.
// One connection at a time; every answer closes its connection.
#pragma once

#include <atomic>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace xet::testing {

struct ScriptedRequest {
  std::string method;
  std::string target;  // path and query
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  std::string Header(const std::string& name) const;  // "" when absent (case-insensitive)
};

class ScriptedHttpServer {
 public:
  // Each handler gets the request and returns the raw bytes to write (status line, headers,
  // body); the server then closes the connection. Requests beyond the script get a 500.
  using Handler = std::function<std::string(const ScriptedRequest&)>;
  explicit ScriptedHttpServer(std::vector<Handler> script);
  ~ScriptedHttpServer();
  ScriptedHttpServer(const ScriptedHttpServer&) = delete;
  ScriptedHttpServer& operator=(const ScriptedHttpServer&) = delete;

  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  std::vector<ScriptedRequest> requests() const;

  // A complete response with Content-Length.
  static std::string Response(int status, const std::string& body,
                              const std::vector<std::string>& headers = {});

 private:
  void Run();

  std::vector<Handler> script_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  mutable std::mutex mu_;
  std::vector<ScriptedRequest> requests_;
  std::thread thread_;
};

// A loopback port with nothing listening on it (bound, then closed).
int UnusedLoopbackPort();

}  // namespace xet::testing
