// RenderTree (cli/tree_view.h): the drawing of `xetstore ls --tree`.
#include "cli/tree_view.h"

#include <gtest/gtest.h>

namespace xet::cli {
namespace {

std::string Bytes(uint64_t n) { return std::to_string(n); }

TEST(CliTreeView, NestedFilesAndImplicitDirectories) {
  const std::vector<TreeItem> items = {
      {"b.txt", false, 2}, {"a/x.bin", false, 10}, {"a/sub/y", false, 0}, {"c/", true, 0}};
  EXPECT_EQ(RenderTree("root", items, Bytes),
            "root\n"
            "├── a/\n"
            "│   ├── sub/\n"
            "│   │   └── y  0\n"
            "│   └── x.bin  10\n"
            "├── b.txt  2\n"
            "└── c/\n");
}

TEST(CliTreeView, EmptyTreeIsTheLabelOnly) {
  EXPECT_EQ(RenderTree("hf://buckets/a/b", {}, Bytes), "hf://buckets/a/b\n");
}

TEST(CliTreeView, OrderIsBytewise) {
  const std::vector<TreeItem> items = {{"b", false, 1}, {"B", false, 2}, {"a", false, 3}};
  EXPECT_EQ(RenderTree("r", items, Bytes), "r\n├── B  2\n├── a  3\n└── b  1\n");
}

TEST(CliTreeView, SizeTextIsTheCallersFormat) {
  const std::vector<TreeItem> items = {{"f", false, 1536}};
  EXPECT_EQ(RenderTree("r", items, [](uint64_t n) { return "<" + std::to_string(n) + ">"; }),
            "r\n└── f  <1536>\n");
}

}  // namespace
}  // namespace xet::cli
