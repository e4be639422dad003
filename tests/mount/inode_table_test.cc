#include "mount/inode_table.h"

#include <gtest/gtest.h>

namespace xet {
namespace {

TEST(InodeTable, RootIsOneAndPathsGetStableNumbers) {
  InodeTable t;
  EXPECT_EQ(t.Path(kRootIno), std::optional<std::string>(""));
  const Ino a = t.Lookup("a");
  EXPECT_NE(a, kRootIno);
  EXPECT_EQ(t.Lookup("a"), a);
  EXPECT_EQ(t.Path(a), std::optional<std::string>("a"));
  EXPECT_EQ(t.Find("a"), std::optional<Ino>(a));
  EXPECT_FALSE(t.Find("b").has_value());
}

TEST(InodeTable, ForgetFreesAfterTheLastLookup) {
  InodeTable t;
  const Ino a = t.Lookup("a");
  t.Lookup("a");
  EXPECT_FALSE(t.Forget(a, 1));
  EXPECT_TRUE(t.Path(a).has_value());
  EXPECT_TRUE(t.Forget(a, 1));  // this call freed it
  EXPECT_FALSE(t.Path(a).has_value());
  EXPECT_FALSE(t.Forget(a, 1));           // already gone
  EXPECT_NE(t.Lookup("a"), a);            // a new inode for a new lookup
  EXPECT_FALSE(t.Forget(kRootIno, 100));  // the root is never freed
  EXPECT_TRUE(t.Path(kRootIno).has_value());
}

TEST(InodeTable, RenameMovesTheSubtreeOnly) {
  InodeTable t;
  const Ino d = t.Lookup("d");
  const Ino f = t.Lookup("d/f");
  const Ino deep = t.Lookup("d/sub/g");
  const Ino sibling = t.Lookup("d2/x");  // "d2" shares a prefix with "d" but is not below it
  const Ino dash = t.Lookup("d-1");
  t.Rename("d", "e/d");
  EXPECT_EQ(t.Path(d), std::optional<std::string>("e/d"));
  EXPECT_EQ(t.Path(f), std::optional<std::string>("e/d/f"));
  EXPECT_EQ(t.Path(deep), std::optional<std::string>("e/d/sub/g"));
  EXPECT_EQ(t.Path(sibling), std::optional<std::string>("d2/x"));
  EXPECT_EQ(t.Path(dash), std::optional<std::string>("d-1"));
  EXPECT_FALSE(t.Find("d/f").has_value());
}

TEST(InodeTable, RenameOverATargetDetachesIt) {
  InodeTable t;
  const Ino a = t.Lookup("a");
  const Ino b = t.Lookup("b");
  t.Rename("a", "b");
  EXPECT_EQ(t.Path(a), std::optional<std::string>("b"));
  EXPECT_FALSE(t.Path(b).has_value());  // detached, still known until forgotten
  EXPECT_EQ(t.Find("b"), std::optional<Ino>(a));
}

TEST(InodeTable, DetachKeepsTheNumberWithoutAPath) {
  InodeTable t;
  const Ino d = t.Lookup("d");
  const Ino f = t.Lookup("d/f");
  t.Detach("d");
  EXPECT_FALSE(t.Path(d).has_value());
  EXPECT_FALSE(t.Path(f).has_value());
  EXPECT_NE(t.Lookup("d/f"), f);
  t.Forget(f, 1);
  EXPECT_EQ(t.size(), 3u);  // root, d (detached), the new d/f
}

}  // namespace
}  // namespace xet
