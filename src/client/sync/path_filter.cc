#include "client/sync/path_filter.h"

#include <fnmatch.h>

#include <utility>

namespace xet {

Status PathFilter::Add(FilterAction action, std::string pattern) {
  if (pattern.empty()) return Status::InvalidArgument("filter pattern is empty");
  if (pattern.find('\0') != std::string::npos) {
    return Status::InvalidArgument("filter pattern may not contain NUL");
  }
  rules_.push_back({action, std::move(pattern)});
  return Status::Ok();
}

bool PathFilter::Includes(const std::string& path) const {
  for (auto it = rules_.rbegin(); it != rules_.rend(); ++it) {
    if (::fnmatch(it->pattern.c_str(), path.c_str(), 0) == 0) {
      return it->action == FilterAction::kInclude;
    }
  }
  return true;
}

}  // namespace xet
