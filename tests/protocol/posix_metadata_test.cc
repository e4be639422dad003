// protocol/posix_metadata.h and protocol/base64.h: the "posix" object's codec and rules,
// with malformed, oversized and hostile input.
#include "protocol/posix_metadata.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "protocol/base64.h"

namespace xet {
namespace {

using nlohmann::json;

TEST(Base64, Rfc4648VectorsAndRefusals) {
  const std::pair<const char*, const char*> vectors[] = {{"", ""},
                                                         {"f", "Zg=="},
                                                         {"fo", "Zm8="},
                                                         {"foo", "Zm9v"},
                                                         {"foob", "Zm9vYg=="},
                                                         {"fooba", "Zm9vYmE="},
                                                         {"foobar", "Zm9vYmFy"}};
  for (const auto& [plain, enc] : vectors) {
    EXPECT_EQ(Base64Encode(plain), enc);
    auto dec = Base64Decode(enc);
    ASSERT_TRUE(dec.has_value()) << enc;
    EXPECT_EQ(*dec, plain);
  }
  const std::string binary("\0\xff\x10", 3);
  EXPECT_EQ(Base64Encode(binary), "AP8Q");
  EXPECT_EQ(*Base64Decode("AP8Q"), binary);
  for (const char* bad : {"Zg=", "Zg", "Z===", "====", "Zm9v\n", " Zm9v", "Zm=v", "Zm9-", "Zm9_",
                          "Zg==Zg==", "Zm9vYmFy=", "\xc3\xa9xyz"}) {
    EXPECT_FALSE(Base64Decode(bad).has_value()) << bad;
  }
}

PosixMetadata Full() {
  PosixMetadata p;
  p.mode = kPosixRegular | 04755;
  p.uid = 4294967295u;
  p.gid = 7;
  p.atime_ms = 1'700'000'000'123;
  p.xattrs = {{"security.selinux", std::string("a\0b", 3)}, {"user.e", ""}, {"user.\xc3\xa9", "x"}};
  return p;
}

TEST(PosixMetadata, RoundTripsThroughJsonAndText) {
  const PosixMetadata p = Full();
  ASSERT_TRUE(ValidatePosix(p).ok());
  const json j = PosixToJson(p);
  EXPECT_EQ(j["mode"], 0104755);
  EXPECT_EQ(j["xattrs"]["security.selinux"], "YQBi");
  EXPECT_EQ(j["xattrs"]["user.e"], "");
  EXPECT_FALSE(j.contains("target"));
  auto back = PosixFromJson(j);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, p);
  auto decoded = DecodePosixJson(EncodePosixJson(p));
  ASSERT_TRUE(decoded.ok());
  EXPECT_EQ(*decoded, p);

  PosixMetadata link;
  link.mode = kPosixSymlink | 0777;
  link.target = std::string(4095, 't');
  auto l = DecodePosixJson(EncodePosixJson(link));
  ASSERT_TRUE(l.ok()) << l.status().ToString();
  EXPECT_EQ(*l, link);
  // Minimal: optional fields omitted, unknown fields ignored.
  auto dir = DecodePosixJson(R"({"mode":16877,"uid":0,"gid":0,"future":[1,2]})");
  ASSERT_TRUE(dir.ok());
  EXPECT_TRUE(dir->IsDirectory());
  EXPECT_EQ(dir->atime_ms, 0);
  EXPECT_EQ(EncodePosixJson(*dir), R"({"gid":0,"mode":16877,"uid":0})");
}

// Special files: FIFOs, sockets and device nodes, with the device number of the latter.
TEST(PosixMetadata, SpecialFilesRoundTrip) {
  struct Case {
    const char* text;
    uint32_t mode;  // written out in octal, independently of the constants
    uint32_t rdev;
  };
  const Case cases[] = {
      {R"({"mode":4516,"uid":0,"gid":0})", 010644, 0},                               // FIFO
      {R"({"mode":49645,"uid":1,"gid":2})", 0140755, 0},                             // socket
      {R"({"mode":8612,"uid":0,"gid":0,"rdev":2049})", 020644, 2049},                // 8:1
      {R"({"mode":8612,"uid":0,"gid":0})", 020644, 0},                               // rdev 0
      {R"({"mode":25008,"uid":0,"gid":6,"rdev":4294967295})", 060660, 4294967295u},  // max
      {R"({"mode":8612,"uid":0,"gid":0,"rdev":null})", 020644, 0},
  };
  for (const auto& c : cases) {
    auto p = DecodePosixJson(c.text);
    ASSERT_TRUE(p.ok()) << c.text << ": " << p.status().ToString();
    EXPECT_EQ(p->mode, c.mode) << c.text;
    EXPECT_EQ(p->rdev, c.rdev) << c.text;
    EXPECT_TRUE(p->IsSpecial()) << c.text;
    EXPECT_TRUE(p->IsContentless()) << c.text;
    EXPECT_FALSE(p->IsRegular() || p->IsDirectory() || p->IsSymlink()) << c.text;
    auto again = DecodePosixJson(EncodePosixJson(*p));
    ASSERT_TRUE(again.ok()) << EncodePosixJson(*p);
    EXPECT_EQ(*again, *p);
  }
  EXPECT_TRUE(DecodePosixJson(R"({"mode":8612,"uid":0,"gid":0,"rdev":5})")->IsDevice());
  EXPECT_TRUE(DecodePosixJson(R"({"mode":25008,"uid":0,"gid":0,"rdev":5})")->IsDevice());
  EXPECT_FALSE(DecodePosixJson(R"({"mode":4516,"uid":0,"gid":0})")->IsDevice());
  // The encoding: rdev for every device node (0 included), for nothing else.
  EXPECT_EQ(EncodePosixJson(*DecodePosixJson(R"({"mode":8612,"uid":0,"gid":0})")),
            R"({"gid":0,"mode":8612,"rdev":0,"uid":0})");
  EXPECT_EQ(EncodePosixJson(*DecodePosixJson(R"({"mode":4516,"uid":3,"gid":4})")),
            R"({"gid":4,"mode":4516,"uid":3})");
  // Regular files, directories and links are not special, and hold content only for files.
  EXPECT_FALSE(DecodePosixJson(R"({"mode":33188,"uid":0,"gid":0})")->IsContentless());
  EXPECT_FALSE(DecodePosixJson(R"({"mode":16877,"uid":0,"gid":0})")->IsContentless());
  auto link = DecodePosixJson(R"({"mode":41471,"uid":0,"gid":0,"target":"t"})");
  EXPECT_TRUE(link->IsContentless());
  EXPECT_FALSE(link->IsSpecial());
  // ValidatePosix: a device number on anything but a device node is refused.
  PosixMetadata p;
  for (uint32_t type : {0010000u, 0140000u, 0100000u, 0040000u}) {
    p.mode = type | 0644;
    p.rdev = 7;
    EXPECT_FALSE(ValidatePosix(p).ok()) << std::oct << type;
    p.rdev = 0;
    EXPECT_TRUE(ValidatePosix(p).ok()) << std::oct << type;
  }
  p.mode = 0020000 | 07777;
  p.rdev = 0xFFFFFFFFu;
  EXPECT_TRUE(ValidatePosix(p).ok());
  p.target = "x";
  EXPECT_FALSE(ValidatePosix(p).ok());  // a target is for symbolic links only
}

// Each malformed object is refused with InvalidArgument naming the problem.
TEST(PosixMetadata, RefusesMalformedObjects) {
  const std::pair<const char*, const char*> cases[] = {
      {R"([])", "must be an object"},
      {R"("x")", "must be an object"},
      {R"({"uid":0,"gid":0})", "missing \"mode\""},
      {R"({"mode":33188,"gid":0})", "missing \"uid\""},
      {R"({"mode":33188,"uid":0})", "missing \"gid\""},
      {R"({"mode":"33188","uid":0,"gid":0})", "\"mode\" must be an integer"},
      {R"({"mode":33188.5,"uid":0,"gid":0})", "\"mode\" must be an integer"},
      {R"({"mode":true,"uid":0,"gid":0})", "\"mode\" must be an integer"},
      {R"({"mode":-1,"uid":0,"gid":0})", "must not be negative"},
      {R"({"mode":65536,"uid":0,"gid":0})", "\"mode\" must be at most"},
      {R"({"mode":420,"uid":0,"gid":0})", "type bits"},    // no type
      {R"({"mode":12708,"uid":0,"gid":0})", "type bits"},  // 0030644: no such type
      {R"({"mode":20900,"uid":0,"gid":0})", "type bits"},  // 0050644
      {R"({"mode":29092,"uid":0,"gid":0})", "type bits"},  // 0070644
      {R"({"mode":37284,"uid":0,"gid":0})", "type bits"},  // 0110644
      {R"({"mode":53668,"uid":0,"gid":0})", "type bits"},  // 0150644
      {R"({"mode":65444,"uid":0,"gid":0})", "type bits"},  // 0177644
      {R"({"mode":33188,"uid":4294967296,"gid":0})", "\"uid\" must be at most"},
      {R"({"mode":33188,"uid":0,"gid":-5})", "must not be negative"},
      {R"({"mode":33188,"uid":0,"gid":0,"atime":-1})", "must not be negative"},
      {R"({"mode":33188,"uid":0,"gid":0,"atime":253402300800000})", "\"atime\" must be at most"},
      {R"({"mode":33188,"uid":0,"gid":0,"atime":"now"})", "\"atime\" must be an integer"},
      {R"({"mode":33188,"uid":0,"gid":0,"target":"x"})", "only for symbolic links"},
      {R"({"mode":16877,"uid":0,"gid":0,"target":"x"})", "only for symbolic links"},
      {R"({"mode":41471,"uid":0,"gid":0})", "needs a \"target\""},
      {R"({"mode":41471,"uid":0,"gid":0,"target":""})", "needs a \"target\""},
      {R"({"mode":41471,"uid":0,"gid":0,"target":5})", "\"target\" must be a string"},
      {R"({"mode":41471,"uid":0,"gid":0,"target":"a\u0000b"})", "NUL"},
      // "rdev": device nodes only (present at all, even 0, is refused elsewhere), an
      // unsigned 32-bit integer.
      {R"({"mode":4516,"uid":0,"gid":0,"rdev":1})", "only for device nodes"},   // FIFO
      {R"({"mode":4516,"uid":0,"gid":0,"rdev":0})", "only for device nodes"},   // FIFO
      {R"({"mode":49645,"uid":0,"gid":0,"rdev":5})", "only for device nodes"},  // socket
      {R"({"mode":33188,"uid":0,"gid":0,"rdev":0})", "only for device nodes"},  // file
      {R"({"mode":16877,"uid":0,"gid":0,"rdev":3})", "only for device nodes"},  // dir
      {R"({"mode":41471,"uid":0,"gid":0,"target":"x","rdev":1})", "only for device nodes"},
      {R"({"mode":8612,"uid":0,"gid":0,"rdev":4294967296})", "\"rdev\" must be at most"},
      {R"({"mode":25008,"uid":0,"gid":0,"rdev":18446744073709551615})", "\"rdev\" must be at most"},
      {R"({"mode":8612,"uid":0,"gid":0,"rdev":-1})", "must not be negative"},
      {R"({"mode":8612,"uid":0,"gid":0,"rdev":"2049"})", "\"rdev\" must be an integer"},
      {R"({"mode":8612,"uid":0,"gid":0,"rdev":2049.5})", "\"rdev\" must be an integer"},
      {R"({"mode":8612,"uid":0,"gid":0,"rdev":1e3})", "\"rdev\" must be an integer"},
      {R"({"mode":8612,"uid":0,"gid":0,"rdev":[1]})", "\"rdev\" must be an integer"},
      {R"({"mode":8612,"uid":0,"gid":0,"target":"x"})", "only for symbolic links"},
      {R"({"mode":4516,"uid":0,"gid":0,"target":"x"})", "only for symbolic links"},
      {R"({"mode":49645,"uid":0,"gid":0,"target":"x"})", "only for symbolic links"},
      {R"({"mode":33188,"uid":0,"gid":0,"xattrs":[]})", "\"xattrs\" must be an object"},
      {R"({"mode":33188,"uid":0,"gid":0,"xattrs":{"user.a":1}})", "must be a base64 string"},
      {R"({"mode":33188,"uid":0,"gid":0,"xattrs":{"user.a":"!!!!"}})", "not padded base64"},
      {R"({"mode":33188,"uid":0,"gid":0,"xattrs":{"user.a":"Zg"}})", "not padded base64"},
      {R"({"mode":33188,"uid":0,"gid":0,"xattrs":{"":"Zg=="}})", "1 to 255 bytes"},
      {R"({"mode":33188,"uid":0,"gid":0,"xattrs":{"a\u0000b":"Zg=="}})", "without NUL"},
  };
  for (const auto& [text, want] : cases) {
    auto r = DecodePosixJson(text);
    ASSERT_FALSE(r.ok()) << text;
    EXPECT_EQ(r.status().code(), Status::Code::kInvalidArgument) << text;
    EXPECT_NE(r.status().message().find(want), std::string::npos)
        << text << " -> " << r.status().message();
  }
}

TEST(PosixMetadata, EnforcesTheSizeLimits) {
  auto with = [](auto&& fill) {
    json j = {{"mode", 0100644}, {"uid", 1}, {"gid", 1}};
    fill(j);
    return PosixFromJson(j);
  };
  // Name: 255 bytes fine, 256 refused.
  EXPECT_TRUE(with([](json& j) { j["xattrs"][std::string(255, 'n')] = "Zg=="; }).ok());
  EXPECT_FALSE(with([](json& j) { j["xattrs"][std::string(256, 'n')] = "Zg=="; }).ok());
  // Value: 64 KiB fine, one byte more refused.
  EXPECT_TRUE(
      with([](json& j) { j["xattrs"]["user.v"] = Base64Encode(std::string(64 << 10, 'v')); }).ok());
  auto big =
      with([](json& j) { j["xattrs"]["user.v"] = Base64Encode(std::string((64 << 10) + 1, 'v')); });
  ASSERT_FALSE(big.ok());
  EXPECT_NE(big.status().message().find("larger than 65536"), std::string::npos);
  // A huge base64 string is refused before it is decoded.
  EXPECT_FALSE(with([](json& j) { j["xattrs"]["user.v"] = std::string(10 << 20, 'A'); }).ok());
  // Count: 64 fine, 65 refused.
  auto many = [&](int n) {
    return with([n](json& j) {
      for (int i = 0; i < n; ++i) j["xattrs"]["user." + std::to_string(100 + i)] = "Zg==";
    });
  };
  EXPECT_TRUE(many(64).ok());
  EXPECT_FALSE(many(65).ok());
  // Total: two 64 KiB values fit under 128 KiB of JSON only just not: refused as a whole.
  auto total = with([](json& j) {
    j["xattrs"]["user.a"] = Base64Encode(std::string(50'000, 'a'));
    j["xattrs"]["user.b"] = Base64Encode(std::string(50'000, 'b'));
  });
  ASSERT_FALSE(total.ok());
  EXPECT_NE(total.status().message().find("larger than 131072"), std::string::npos);
  // Target: 4095 fine (covered above), 4096 refused.
  EXPECT_FALSE(with([](json& j) {
                 j["mode"] = 0120777;
                 j["target"] = std::string(4096, 't');
               }).ok());
  // ValidatePosix refuses unsorted or duplicate names, which no JSON object can give.
  PosixMetadata p;
  p.mode = kPosixRegular | 0644;
  p.xattrs = {{"b", "1"}, {"a", "2"}};
  EXPECT_FALSE(ValidatePosix(p).ok());
  p.xattrs = {{"a", "1"}, {"a", "2"}};
  EXPECT_FALSE(ValidatePosix(p).ok());
  p.xattrs = {{"a", "1"}, {std::string("\xff"), "2"}};
  EXPECT_FALSE(ValidatePosix(p).ok());  // invalid UTF-8 name
  p.xattrs.clear();
  p.mode = kPosixRegular | 0644 | 0200000;
  EXPECT_FALSE(ValidatePosix(p).ok());  // bits outside type and 07777
}

TEST(PosixMetadata, DecodeRefusesHostileText) {
  EXPECT_FALSE(DecodePosixJson("").ok());
  EXPECT_FALSE(DecodePosixJson("{").ok());
  EXPECT_FALSE(DecodePosixJson(R"({"mode":33188,"uid":0,"gid":0} x)").ok());
  EXPECT_FALSE(DecodePosixJson(std::string(100'000, '[')).ok());  // depth, not a stack overflow
  EXPECT_FALSE(DecodePosixJson(R"({"mode":33188,"uid":0,"gid":0,"x":[[[1]]]})").ok());
  EXPECT_FALSE(DecodePosixJson(std::string(kMaxPosixJsonBytes + 1, ' ')).ok());
  EXPECT_FALSE(DecodePosixJson("{\"mode\":33188,\"uid\":0,\"gid\":0,\"\xff\":1}").ok());
  // Brackets inside strings do not count as nesting.
  EXPECT_TRUE(DecodePosixJson(R"({"mode":41471,"uid":0,"gid":0,"target":"[[[{{{\"]]"})").ok());
}

}  // namespace
}  // namespace xet
