// ObjectKeys: the key grammar (ValidateObjectKey) and the xorb and shard keys, which every
// ObjectStore shares (src/store/object_keys.cc).
#include <gtest/gtest.h>

#include "format/hash.h"
#include "store/object_store.h"

namespace xet {
namespace {

using Code = Status::Code;

TEST(ObjectStoreKeys, XorbAndShardKeys) {
  Hash h = *Hash::FromHex("0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef");
  EXPECT_EQ(XorbKey(h), "xorbs/01/" + h.ToHex());
  EXPECT_EQ(ShardKey(h), "shards/" + h.ToHex());
  EXPECT_TRUE(ValidateObjectKey(XorbKey(h)).ok());
  EXPECT_TRUE(ValidateObjectKey(ShardKey(h)).ok());
}

TEST(ObjectStoreKeys, RejectsBadKeys) {
  for (const char* bad : {"", "/abs", "a//b", "a/", "..", "a/../b", "../x", ".", "a/./b", ".tmp-x",
                          "a/.tmp-x", "UPPER", "sp ace", "a\\b", "a\nb", "x?y"}) {
    EXPECT_EQ(ValidateObjectKey(bad).code(), Code::kInvalidArgument) << bad;
  }
  for (const char* good : {"a", "a/b", "xorbs/ab/cd", "a-b_c.d", "0/1/2/3"}) {
    EXPECT_TRUE(ValidateObjectKey(good).ok()) << good;
  }
}

}  // namespace
}  // namespace xet
