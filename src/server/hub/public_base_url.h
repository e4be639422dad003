// The base of the URLs the bucket API hands out (Link headers, create and token answers,
// the casUrl), replaceable while the server runs (e.g. once an ephemeral port is known).
#pragma once

#include <string>
#include <utility>

#include "common/mutex.h"

namespace xet {

class PublicBaseUrl {
 public:
  explicit PublicBaseUrl(std::string url) : url_(std::move(url)) {}

  // Thread-safe; handlers see the old or the new base, never a torn one.
  void Set(std::string url) {
    MutexLock lock(mu_);
    url_ = std::move(url);
  }
  std::string Get() const {
    MutexLock lock(mu_);
    return url_;
  }

 private:
  mutable Mutex mu_;
  std::string url_ GUARDED_BY(mu_);  // no trailing '/'
};

}  // namespace xet
