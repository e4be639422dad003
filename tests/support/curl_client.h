// A minimal blocking HTTP client over libcurl for integration tests.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace xet::testing {

struct HttpResult {
  long status = 0;
  std::map<std::string, std::string> headers;  // lower-case names; last value wins
  std::string body;
  std::string error;  // libcurl error, if the request failed at the transport level
};

// Sends one request. `headers` are "Name: value" lines. HEAD requests get no body.
HttpResult Fetch(const std::string& method, const std::string& url,
                 const std::vector<std::string>& headers = {}, const std::string& body = {});

// "Authorization: Bearer <token>"
inline std::string Bearer(const std::string& token) { return "Authorization: Bearer " + token; }

}  // namespace xet::testing
