#include "format/sha256.h"

#include <gtest/gtest.h>

#include <string>

#include "support/test_support.h"

namespace xet {
namespace {

std::span<const uint8_t> Bytes(const std::string& s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

TEST(Sha256, KnownDigests) {
  // FIPS 180-2 examples.
  EXPECT_EQ(Sha256Hex(Sha256Of({})),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(Sha256Hex(Sha256Of(Bytes("abc"))),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(Sha256, IncrementalEqualsOneShot) {
  const auto data = testing::RandomBytes(1'000'003, 4);
  Sha256 h;
  for (size_t pos = 0; pos < data.size(); pos += 4099) {
    h.Update(data.data() + pos, std::min<size_t>(4099, data.size() - pos));
  }
  EXPECT_EQ(h.Finish(), Sha256Of(data));
}

TEST(Sha256, XetOrderMatchesReferenceShardBytes) {
  // conformance README: the EV CSV's SHA-256 f41255b2...9734 is stored as 1276f752...86c1.
  const auto digest_hash =
      Hash::FromRawHex("f41255b252f776125f2b657136654e4d4d5d2ccf8ef4db0ec186bd1981b69734");
  ASSERT_TRUE(digest_hash);
  const Sha256Digest digest = digest_hash->bytes();
  const Hash stored = Sha256ToXetOrder(digest);
  EXPECT_EQ(stored.ToRawHex(), "1276f752b25512f44d4e653671652b5f0edbf48ecf2c5d4d3497b68119bd86c1");
  EXPECT_EQ(stored.ToHex(), Sha256Hex(digest));
  EXPECT_EQ(Sha256FromXetOrder(stored), digest);
}

}  // namespace
}  // namespace xet
