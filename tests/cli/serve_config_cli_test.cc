// `xetstore serve --config FILE`: the file's `key = value` lines fill the options that no
// flag and no XETSTORE_* variable set; a bad file stops serve with one line, exit 2.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <string>

#include "support/cli_fixture.h"
#include "support/server_process.h"

namespace xet::testing {
namespace {

namespace fs = std::filesystem;

std::string ConfigFile(const std::string& dir, const std::string& text) {
  const std::string path = dir + "/serve.toml";
  WriteLocalFile(path, text);
  return path;
}

TEST(ServeConfigCli, TheFileFillsWhatNoFlagOrVariableSet) {
  const std::string dir = MakeTempDir("serve-config");
  // Both spellings of a key; a quoted and a bare value.
  const std::string config = ConfigFile(dir,
                                        "# a comment\n"
                                        "secret_file = \"" +
                                            dir +
                                            "/file-secret\"\n"
                                            "access-log = false\n"
                                            "workers = 3\n");
  {
    ServerProcess node(MakeTempDir("serve-config-a"), {"--config", config});
    EXPECT_TRUE(fs::exists(dir + "/file-secret"));
  }
  {
    ServerProcess node(MakeTempDir("serve-config-b"),
                       {"--config", config, "--secret-file", dir + "/flag-secret"});
    EXPECT_TRUE(fs::exists(dir + "/flag-secret"));
  }
  fs::remove(dir + "/file-secret");
  ::setenv("XETSTORE_SECRET_FILE", (dir + "/env-secret").c_str(), 1);
  {
    ServerProcess node(MakeTempDir("serve-config-c"), {"--config", config});
    EXPECT_TRUE(fs::exists(dir + "/env-secret"));
  }
  ::unsetenv("XETSTORE_SECRET_FILE");
  EXPECT_FALSE(fs::exists(dir + "/file-secret")) << "the file beat a flag or a variable";
}

TEST(ServeConfigCli, ABadFileStopsServeWithOneLine) {
  const std::string dir = MakeTempDir("serve-config-bad");
  const struct {
    const char* text;
    const char* says;
  } cases[] = {
      {"no-such-option = 1\n", "unknown option 'no-such-option'"},
      {"[serve]\nlisten = \"127.0.0.1:0\"\n", "sections are not supported"},
      {"workers = 0\n", "workers"},
      {"workers = many\n", "workers"},
      {"config = \"/etc/other.toml\"\n", "cannot name another file"},
  };
  for (const auto& c : cases) {
    const std::string config = ConfigFile(dir, c.text);
    const CommandResult r =
        RunXetstore("serve --listen 127.0.0.1:0 --data-dir " + dir + "/data --config " + config);
    EXPECT_EQ(r.exit_code, 2) << c.text << r.err;
    EXPECT_EQ(r.err.rfind("xetstore: error: config file " + config, 0), 0u) << r.err;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(dir + "/data")) << c.text << ": serve started";
  }
  const CommandResult missing = RunXetstore("serve --listen 127.0.0.1:0 --data-dir " + dir +
                                            "/data --config " + dir + "/absent.toml");
  EXPECT_EQ(missing.exit_code, 2) << missing.err;
  EXPECT_NE(missing.err.find("absent.toml"), std::string::npos) << missing.err;
}

}  // namespace
}  // namespace xet::testing
