#include "mount/mount_paths.h"

#include <gtest/gtest.h>

namespace xet {
namespace {

TEST(MountPaths, ParentBaseJoin) {
  EXPECT_EQ(ParentPath("a/b/c"), "a/b");
  EXPECT_EQ(ParentPath("c"), "");
  EXPECT_EQ(BaseName("a/b/c"), "c");
  EXPECT_EQ(BaseName("c"), "c");
  EXPECT_EQ(JoinPath("", "c"), "c");
  EXPECT_EQ(JoinPath("a/b", "c"), "a/b/c");
}

TEST(MountPaths, WithinAndRebase) {
  EXPECT_TRUE(IsWithin("a/b", "a"));
  EXPECT_TRUE(IsWithin("a", "a"));
  EXPECT_TRUE(IsWithin("anything", ""));
  EXPECT_FALSE(IsWithin("ab", "a"));
  EXPECT_FALSE(IsWithin("a", "a/b"));
  EXPECT_EQ(Rebase("a/x/y", "a/x", "b"), "b/y");
  EXPECT_EQ(Rebase("a/x", "a/x", "b/c"), "b/c");
}

}  // namespace
}  // namespace xet
