// The HTTP types route handlers see: a fully read request and a response that is either
// a buffered body or a streamed one. Independent of the HTTP library underneath
// (http/http_server.h), so handlers can be unit-tested without sockets.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/unique_fd.h"

namespace xet {

// Header names compare case-insensitively; values keep their bytes.
class HttpHeaders {
 public:
  void Add(std::string name, std::string value) {
    fields_.emplace_back(std::move(name), std::move(value));
  }
  // Replaces every field with this name.
  void Set(std::string_view name, std::string value);
  // The first field with this name.
  std::optional<std::string_view> Get(std::string_view name) const;
  // Removes every field with this name; true if there was one. (Added by the server layer.)
  bool Remove(std::string_view name);
  const std::vector<std::pair<std::string, std::string>>& fields() const { return fields_; }

 private:
  std::vector<std::pair<std::string, std::string>> fields_;
};

struct HttpRequest {
  std::string method;  // upper case, e.g. "GET"
  std::string path;    // percent-decoded path, without the query string
  std::string query;   // raw query string (without '?'), possibly empty
  HttpHeaders headers;
  std::string body;
  std::string remote_address;  // "ip:port" of the peer

  // The url-decoded value of query parameter `name`, if present.
  std::optional<std::string> QueryParam(std::string_view name) const;
};

// Path parameters captured by the router: "/v1/xorbs/{prefix}/{hash}" -> prefix, hash.
using RouteParams = std::map<std::string, std::string, std::less<>>;

// A body of literal text and byte ranges of one source, in order. The source is either an
// open file, whose ranges the server writes with sendfile(2) so their bytes never pass
// through user space, or a shared read-only buffer (e.g. a cache entry), whose ranges are
// written straight from it. Exactly one of `file` and `memory` must be set.
// The source must hold every range: a file that ends early ends the body early, and the
// server then closes the connection, so the client sees a short body (as with a short
// stream); a range outside `memory` is treated the same way.
struct RangeBody {
  struct Piece {
    std::string text;     // sent first
    uint64_t offset = 0;  // then `length` bytes of the source, from `offset`
    uint64_t length = 0;
  };
  UniqueFd file;                              // open for reading, or
  std::shared_ptr<const std::string> memory;  // the bytes themselves
  std::vector<Piece> pieces;

  // Total bytes of text and ranges.
  uint64_t size() const;
};

struct HttpResponse {
  int status = 200;
  HttpHeaders headers;
  std::string body;
  // For HEAD-style answers: the Content-Length to announce when `body` is not sent; for
  // streamed answers: the stream's exact length.
  std::optional<uint64_t> content_length;
  // When set, the server sends the headers, then calls `stream` with a writer and sends
  // each piece as it is written (chunked transfer encoding). The writer returns false once
  // the client is gone; the producer should then stop. `body` is ignored. With
  // `content_length` also set, the body is sent unframed under that Content-Length: the
  // producer must write exactly that many bytes (a longer write fails; a shorter stream
  // ends with the connection closed, so the client sees the body is incomplete).
  std::function<void(const std::function<bool(std::string_view)>& write)> stream;
  // When set (and `stream` is not), the body is these pieces in order, shared read-only
  // with others (e.g. a cache) and sent without a copy under their total Content-Length;
  // `body` is ignored and nothing is compressed.
  std::shared_ptr<const std::vector<std::string>> shared_body;
  // When set (and neither `stream` nor `shared_body` is), the body is these ranges, sent
  // under their total Content-Length; `body` is ignored and nothing is compressed.
  std::shared_ptr<const RangeBody> range_body;

  // A JSON error answer {"error": message} with the given status.
  static HttpResponse Error(int status, std::string_view message);
  // A 200 JSON answer.
  static HttpResponse Json(std::string json_text, int status = 200);
};

using HttpHandler = std::function<HttpResponse(const HttpRequest&, const RouteParams&)>;

}  // namespace xet
