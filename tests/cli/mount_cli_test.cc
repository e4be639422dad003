// `xetstore mount` and `unmount` refusals that happen before anything is mounted, and the
// fstab argument form. (Mounting itself, through FUSE: tests/mount/run.)
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cli/mount_command.h"
#include "support/cli_fixture.h"

namespace xet {
namespace {

using cli::RewriteFstabArgs;
using Args = std::vector<std::string>;

TEST(RewriteFstabArgs, MountHelperFormBecomesADaemonMount) {
  EXPECT_EQ(
      RewriteFstabArgs({"xetstore", "ns/b", "/mnt", "-o", "ro,endpoint=http://h:1"}),
      (Args{"xetstore", "mount", "--daemon", "ns/b", "/mnt", "-o", "ro,endpoint=http://h:1"}));
  EXPECT_EQ(RewriteFstabArgs({"xetstore", "ns/b/prefix", "/mnt"}),
            (Args{"xetstore", "mount", "--daemon", "ns/b/prefix", "/mnt"}));
}

TEST(RewriteFstabArgs, CommandsAndOptionsStayAsTheyAre) {
  for (const Args& argv : {Args{"xetstore", "mount", "ns/b", "/mnt"},
                           Args{"xetstore", "cp", "a", "hf://buckets/ns/b/a"},
                           Args{"xetstore", "--endpoint", "http://x/y", "ls"},
                           Args{"xetstore", "hash"}, Args{"xetstore"}}) {
    EXPECT_EQ(RewriteFstabArgs(argv), argv);
  }
}

class MountCliTest : public testing::CliServerTest {};

TEST_F(MountCliTest, RefusesBeforeMounting) {
  CreateBucket("team/m");
  const std::string dir = LocalDir("mnt");
  auto r = Run("mount team/nothere " + dir);
  EXPECT_EQ(r.exit_code, 3) << r.err;  // unknown bucket
  r = Run("mount not-a-bucket " + dir);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  r = Run("mount team/m " + dir + "/missing");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("mkdir -p"), std::string::npos) << r.err;
  r = Run("mount team/m " + dir + " -o nonsense=1");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("unknown mount option 'nonsense=1'"), std::string::npos) << r.err;
  r = RunAs(server().CreateToken("read", "team/m"), "mount team/m " + dir);
  EXPECT_EQ(r.exit_code, 4) << r.err;  // a read token cannot mount read-write
  EXPECT_NE(r.err.find("--read-only"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace xet
