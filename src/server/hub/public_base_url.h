// The base of the URLs the bucket API hands out (Link headers, create and token answers,
// the casUrl), replaceable while the server runs (e.g. once an ephemeral port is known).
#pragma once

#include <mutex>
#include <string>
#include <utility>

namespace xet {

class PublicBaseUrl {
 public:
  explicit PublicBaseUrl(std::string url) : url_(std::move(url)) {}

  // Thread-safe; handlers see the old or the new base, never a torn one.
  void Set(std::string url) {
    std::lock_guard lock(mu_);
    url_ = std::move(url);
  }
  std::string Get() const {
    std::lock_guard lock(mu_);
    return url_;
  }

 private:
  mutable std::mutex mu_;  // guards url_
  std::string url_;        // no trailing '/'
};

}  // namespace xet
