// Draws a list of bucket paths as a tree (for `xetstore ls --tree`):
//   hf://buckets/ns/b/data
//   ├── a.bin  1.0 KiB
//   └── sub/
//       └── c.txt  12 B
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace xet::cli {

struct TreeItem {
  std::string path;  // '/'-separated, relative to the tree's root
  bool is_directory = false;
  uint64_t size = 0;  // files
};

// The tree of `items` under a first line `root_label`, one line per file and directory
// (directories end in '/'; intermediate directories appear even without an item of their
// own). Siblings are ordered bytewise by name. Files show "  <size_text(size)>" after the
// name. Every line ends in '\n'.
std::string RenderTree(const std::string& root_label, const std::vector<TreeItem>& items,
                       const std::function<std::string(uint64_t)>& size_text);

}  // namespace xet::cli
