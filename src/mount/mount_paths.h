// Paths inside a mount: relative to the mounted directory, "" for its root, components
// joined by '/', never a leading or trailing '/'.
#pragma once

#include <string>
#include <string_view>

namespace xet {

// "a/b/c" -> "a/b"; "c" -> "".
std::string ParentPath(std::string_view path);
// "a/b/c" -> "c".
std::string BaseName(std::string_view path);
// ("a/b", "c") -> "a/b/c"; ("", "c") -> "c".
std::string JoinPath(std::string_view dir, std::string_view name);
// True when `path` is `dir` or lies below it ("" contains everything).
bool IsWithin(std::string_view path, std::string_view dir);
// `path` (within `from`) moved to below `to`: ("a/x/y", "a/x", "b") -> "b/y".
std::string Rebase(std::string_view path, std::string_view from, std::string_view to);

}  // namespace xet
