// PathFilter: the --include / --exclude rules of `xetstore sync`, with the semantics of
// `aws s3 sync`:
//   - Every path is included unless a rule says otherwise.
//   - Rules are applied in the order given and a later rule overrides an earlier one: the
//     last rule whose pattern matches a path decides (include or exclude). So
//     `--exclude '*' --include '*.txt'` keeps only .txt files, while
//     `--include '*.txt' --exclude '*'` keeps nothing.
//   - A pattern is matched against the whole path relative to the sync root
//     ("dir/sub/file.bin"), never against a suffix of it.
//   - Pattern syntax is fnmatch(3) without FNM_PATHNAME or FNM_PERIOD: `*` matches any run
//     of characters *including* '/', `?` any one character (also '/'), `[abc]`, `[a-z]`,
//     `[!abc]` one character of (or not of) a set, and `\` makes the next character literal.
//     So `logs/*` matches everything under logs/ at any depth, `*.tmp` matches a .tmp file
//     in any directory, and `a/*/c` matches "a/b/c" and "a/b/x/c".
// Leading dots are not special (`*` matches ".hidden").
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace xet {

enum class FilterAction { kInclude, kExclude };

struct FilterRule {
  FilterAction action = FilterAction::kExclude;
  std::string pattern;
};

class PathFilter {
 public:
  PathFilter() = default;  // no rules: includes every path

  // Appends a rule (it overrides every rule added before it). InvalidArgument for an empty
  // pattern or one holding NUL.
  Status Add(FilterAction action, std::string pattern);

  // True when `path` (relative, '/'-separated) is included.
  bool Includes(const std::string& path) const;

  bool empty() const { return rules_.empty(); }
  const std::vector<FilterRule>& rules() const { return rules_; }

 private:
  std::vector<FilterRule> rules_;
};

}  // namespace xet
