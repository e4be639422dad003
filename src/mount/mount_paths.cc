#include "mount/mount_paths.h"

namespace xet {

std::string ParentPath(std::string_view path) {
  const size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? std::string() : std::string(path.substr(0, slash));
}

std::string BaseName(std::string_view path) {
  const size_t slash = path.rfind('/');
  return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

std::string JoinPath(std::string_view dir, std::string_view name) {
  if (dir.empty()) return std::string(name);
  std::string out(dir);
  out += '/';
  out += name;
  return out;
}

bool IsWithin(std::string_view path, std::string_view dir) {
  if (dir.empty()) return true;
  if (path.size() < dir.size() || path.substr(0, dir.size()) != dir) return false;
  return path.size() == dir.size() || path[dir.size()] == '/';
}

std::string Rebase(std::string_view path, std::string_view from, std::string_view to) {
  std::string_view rest = path.substr(from.size());
  if (!rest.empty() && rest.front() == '/') rest.remove_prefix(1);
  if (rest.empty()) return std::string(to);
  return JoinPath(to, rest);
}

}  // namespace xet
