// Request routing by method and path pattern.
//
// Patterns are absolute paths whose segments are literals, `{name}` parameters (one
// non-empty segment) or, as the last segment only, a `{*name}` catch-all that captures
// the rest of the path (possibly empty, slashes included):
//   "/v1/xorbs/{prefix}/{hash}"
//   "/api/buckets/{ns}/{name}/resolve/{*path}"
// When several patterns match a path, the most specific wins, compared segment by
// segment from the left: literal > parameter > catch-all. A HEAD request matches a GET
// route when no HEAD route exists for that path (the handler sees method "HEAD").
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "http/message.h"

namespace xet {

// A route's check of a request before its body is read. `head` is the request without its
// body (method, path, query, headers, remote address; `body` is empty). Returns the answer
// that refuses the request (e.g. 401/403), or nullopt to let the body be read and the
// handler run. Runs on a worker thread (it may block, e.g. on a token lookup), only for
// requests that have a body (a Content-Length above 0, or chunked), before `100 Continue`
// is sent and before any body byte is buffered. A refused request's body is never read:
// the answer closes the connection.
using PreBodyCheck =
    std::function<std::optional<HttpResponse>(const HttpRequest& head, const RouteParams& params)>;

struct RouteOptions {
  // Largest request body accepted (413 above it); unset: ServerLimits::max_body_bytes.
  std::optional<uint64_t> max_body_bytes;
  // Label used for this route in metrics and the access log; empty: the pattern.
  std::string name;
  // Empty: the body is read without a check (the handler sees every request).
  PreBodyCheck pre_body = {};
};

struct RouteMatch {
  enum class Kind { kFound, kNotFound, kMethodNotAllowed };
  Kind kind = Kind::kNotFound;
  // kFound: the route's handler and options (owned by the Router) and the captured,
  // percent-decoded path parameters.
  const HttpHandler* handler = nullptr;
  const RouteOptions* options = nullptr;
  RouteParams params;
  // kMethodNotAllowed: the value of the Allow header, e.g. "GET, HEAD, PUT".
  std::string allow;

  bool found() const { return kind == Kind::kFound; }
  // The HTTP status a miss answers with: 404 or 405 (200 when found).
  int status() const;
};

class Router {
 public:
  // Registers `handler` for `method` (upper case, e.g. "GET") and `pattern`. Fails with
  // InvalidArgument for a malformed pattern (not starting with '/', an unterminated or
  // empty `{}`, a catch-all not last, a duplicated parameter name) or when the same
  // method and pattern shape is already registered.
  Status Add(std::string_view method, std::string_view pattern, HttpHandler handler,
             RouteOptions options = {});

  // Finds the route for `method` and `path` (the path part of the request target, still
  // percent-encoded: segments are split on '/' first, then decoded, so "%2F" stays
  // inside one parameter). Pointers in the result stay valid while the Router lives and
  // is not modified.
  RouteMatch Find(std::string_view method, std::string_view path) const;

  // Whether `method` + `pattern` is registered (patterns compared as written).
  bool Has(std::string_view method, std::string_view pattern) const;

 private:
  struct Segment {
    enum class Kind { kLiteral, kParam, kCatchAll };
    Kind kind;
    std::string text;  // literal text or parameter name
  };
  struct Route {
    std::string method;
    std::string pattern;
    std::vector<Segment> segments;
    HttpHandler handler;
    RouteOptions options;
  };
  // Matches `segments` of a path against `route`; fills `params` and `score` on success.
  static bool Match(const Route& route, const std::vector<std::string_view>& segments,
                    std::string_view path, RouteParams* params, std::vector<int>* score);

  std::vector<Route> routes_;
};

}  // namespace xet
