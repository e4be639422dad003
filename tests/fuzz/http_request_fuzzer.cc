// libFuzzer target: HTTP request parsing and routing as the server does them: the bytes go
// to a Boost.Beast request_parser with the server's header limit (ServerLimits), the
// target is split and routed through Router::Find over the server's real route table
// (RegisterCasRoutes + RegisterHubRoutes on services over an empty node in a temporary
// directory), the body is read under the route's limit, and the request is handed to the
// route's handler without credentials beyond what the input carries.
//
// Properties:
//   - nothing crashes; every parse error has a message;
//   - the target splits into path and query that rebuild it;
//   - routing is consistent: a found route has a handler, options and a name, its
//     parameters are substrings of the decoded path; a HEAD for a found GET path is found;
//     a 405's Allow list names only methods that are found for the path and never the
//     requested one; a 404 path is found for no method at all;
//   - a body read to the end is within the route's limit;
//   - ParsePageLimit / ParseBoolParam on the query's values stay within their contract;
//   - the handler of an empty node answers with a 2xx-4xx status (never 5xx), and an
//     error answer is a JSON object with an "error" string;
//   - heap growth stays linear in the input.
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "fuzz/support/heap_meter.h"
#include "fuzz/support/property_check.h"
#include "http/http_server.h"
#include "http/message.h"
#include "http/router.h"
#include "http/url.h"
#include "server/auth/crypto_util.h"
#include "server/auth/token_service.h"
#include "server/cas/cas_routes.h"
#include "server/cas/cas_service.h"
#include "server/hub/hub_query.h"
#include "server/hub/hub_routes.h"
#include "server/hub/hub_service.h"
#include "server/transfer/transfer_signer.h"
#include "store/local/local_object_store.h"
#include "store/sqlite/sqlite_index.h"

namespace {

namespace beast = boost::beast;
namespace http = beast::http;

constexpr xet::fuzz::PropertyCheck Check("http_request_fuzzer");

constexpr std::string_view kSecret = "http-request-fuzzer-secret-0123456789abcdef";

// An empty node (index, object store, services) and the server's route table over it, in
// a temporary directory removed at exit.
class Node {
 public:
  Node() {
    char tmpl[] = "/tmp/xetstore-http-fuzz-XXXXXX";
    Check(mkdtemp(tmpl) != nullptr, "mkdtemp");
    dir_ = tmpl;
    index_ = std::move(xet::SqliteIndex::Open(dir_ + "/index.db", {}).value());
    objects_ = std::move(xet::LocalObjectStore::Open(dir_ + "/objects").value());
    tokens_ = std::make_unique<xet::TokenService>(*index_, xet::AsBytes(kSecret),
                                                  [] { return int64_t{1'700'000'000}; });
    signer_ = std::make_unique<xet::TransferSigner>(
        std::move(xet::TransferSigner::Create(kSecret).value()));
    xet::CasServiceConfig cas_config;
    cas_config.public_url = "http://127.0.0.1:1";
    cas_ = std::make_unique<xet::CasService>(cas_config, *index_, *objects_, *tokens_, *signer_);
    xet::HubServiceConfig hub_config;
    hub_config.public_url = "http://127.0.0.1:1";
    hub_config.now_ms = [] { return int64_t{1'700'000'000'000}; };
    hub_ = std::make_unique<xet::HubService>(hub_config, *index_, *objects_, *tokens_);
    Check(xet::RegisterCasRoutes(router_, *cas_).ok(), "CAS routes");
    Check(xet::RegisterHubRoutes(router_, *hub_).ok(), "Hub routes");
  }
  ~Node() {
    router_ = xet::Router();
    hub_.reset();
    cas_.reset();
    signer_.reset();
    tokens_.reset();
    objects_.reset();
    index_.reset();
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
  const xet::Router& router() const { return router_; }

 private:
  std::string dir_;
  std::unique_ptr<xet::SqliteIndex> index_;
  std::unique_ptr<xet::LocalObjectStore> objects_;
  std::unique_ptr<xet::TokenService> tokens_;
  std::unique_ptr<xet::TransferSigner> signer_;
  std::unique_ptr<xet::CasService> cas_;
  std::unique_ptr<xet::HubService> hub_;
  xet::Router router_;
};

const Node& TheNode() {
  static const Node node;
  return node;
}

constexpr const char* kMethods[] = {"GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"};

void CheckRouting(const xet::Router& router, const std::string& method, std::string_view path,
                  const xet::RouteMatch& match) {
  using Kind = xet::RouteMatch::Kind;
  if (match.found()) {
    Check(match.handler != nullptr && *match.handler && match.options != nullptr,
          "found without a handler");
    Check(!match.options->name.empty(), "route without a name");
    if (auto decoded = xet::PercentDecode(path)) {
      for (const auto& [name, value] : match.params) {
        Check(decoded->find(value) != std::string::npos, "parameter not from the path");
      }
    }
    if (method == "GET") Check(router.Find("HEAD", path).found(), "HEAD not found for a GET");
    return;
  }
  if (match.kind == Kind::kMethodNotAllowed) {
    Check(!match.allow.empty(), "405 without Allow");
    std::string_view allow = match.allow;
    while (!allow.empty()) {
      const size_t comma = allow.find(", ");
      const std::string m(allow.substr(0, comma));
      allow = comma == std::string_view::npos ? std::string_view() : allow.substr(comma + 2);
      Check(m != method, "Allow names the refused method");
      Check(router.Find(m, path).found(), "Allow names a method that is not found");
    }
    return;
  }
  Check(match.allow.empty(), "404 with Allow");
  for (const char* m : kMethods) Check(!router.Find(m, path).found(), "404 path found");
}

void CheckQuery(const xet::HttpRequest& req) {
  auto limit = xet::ParsePageLimit(req.QueryParam("limit"), 100, 1000);
  if (limit.ok()) Check(*limit >= 1 && *limit <= 1000, "page limit out of range");
  if (!limit.ok()) Check(!limit.status().message().empty(), "limit error without a message");
  auto flag = xet::ParseBoolParam(req.QueryParam("recursive"), "recursive", false);
  if (!flag.ok()) Check(!flag.status().message().empty(), "bool error without a message");
}

void CheckAnswer(const xet::HttpResponse& res) {
  Check(res.status >= 200 && res.status < 500, "an empty node answered 5xx or < 200");
  if (res.status >= 400) {
    const auto j = nlohmann::json::parse(res.body, nullptr, false);
    Check(j.is_object() && j.contains("error") && j["error"].is_string(),
          "error answer is not {\"error\": string}");
  }
  // A streamed answer (never expected without credentials) is produced to the end.
  if (res.stream) res.stream([](std::string_view) { return true; });
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const Node& node = TheNode();
  xet::fuzz::HeapScope heap;
  const xet::ServerLimits limits;
  {
    http::request_parser<http::string_body> parser;
    parser.header_limit(limits.max_header_bytes);
    parser.body_limit(boost::none);
    beast::error_code ec;
    size_t used = parser.put(boost::asio::buffer(data, size), ec);
    if (ec == http::error::need_more && size == 0) return 0;
    if (ec && ec != http::error::need_more) {
      Check(!ec.message().empty(), "parse error without a message");
      return 0;
    }
    if (!parser.is_header_done()) return 0;  // incomplete header: the server waits

    auto& request = parser.get();
    const std::string method(request.method_string());
    const std::string target(request.target());
    Check(!method.empty(), "empty method");
    if (target.empty() || target[0] != '/') return 0;  // the server answers 400
    const xet::TargetParts parts = xet::SplitTarget(target);
    const bool has_q = target.find('?') != std::string::npos;
    Check(std::string(parts.path) + (has_q ? "?" : "") + std::string(parts.query) == target,
          "split target does not rebuild it");
    if (!xet::PercentDecode(parts.path)) return 0;  // the server answers 400

    const xet::RouteMatch match = node.router().Find(method, parts.path);
    CheckRouting(node.router(), method, parts.path, match);

    xet::HttpRequest req;
    req.method = method;
    req.path = *xet::PercentDecode(parts.path);
    req.query = std::string(parts.query);
    CheckQuery(req);
    if (!match.found()) return 0;

    const uint64_t max_body = match.options->max_body_bytes.value_or(limits.max_body_bytes);
    if (parser.content_length() && *parser.content_length() > max_body) return 0;  // 413
    parser.body_limit(max_body);
    while (!parser.is_done() && !ec && used < size) {
      used += parser.put(boost::asio::buffer(data + used, size - used), ec);
      if (ec == http::error::need_more) break;
    }
    if (!parser.is_done()) {
      if (ec && ec != http::error::need_more) Check(!ec.message().empty(), "no message");
      return 0;  // the body did not arrive: the server times out or answers 400/413
    }
    Check(request.body().size() <= max_body, "body beyond the route's limit");
    for (const auto& field : request) {
      req.headers.Add(std::string(field.name_string()), std::string(field.value()));
    }
    req.body = std::move(request.body());
    req.remote_address = "127.0.0.1:1";
    CheckAnswer((*match.handler)(req, match.params));
  }
  heap.Check("http_request_fuzzer", size, 64, 4 << 20);
  return 0;
}
