// Connection option resolution (cli/remote_options.h) and exit codes of failures
// (cli/remote_failure.h).
#include "cli/remote_options.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <string>

#include "cli/remote_failure.h"

namespace xet::cli {
namespace {

EnvLookup Env(std::map<std::string, std::string> vars) {
  auto owned = std::make_shared<std::map<std::string, std::string>>(std::move(vars));
  return [owned](const char* name) -> const char* {
    auto it = owned->find(name);
    return it == owned->end() ? nullptr : it->second.c_str();
  };
}

TEST(CliRemoteOptions, DefaultsWithoutFlagsOrEnvironment) {
  const auto r = ResolveRemote(RemoteOptions{}, Env({}));
  EXPECT_EQ(r.endpoint, "http://127.0.0.1:8080");
  EXPECT_EQ(r.token, "");
}

TEST(CliRemoteOptions, RetriesPassThroughAsGiven) {
  RemoteOptions flags;
  EXPECT_EQ(ResolveRemote(flags, Env({})).retries, 5);
  flags.retries = 0;
  EXPECT_EQ(ResolveRemote(flags, Env({})).retries, 0);
  flags.retries = 17;
  EXPECT_EQ(ResolveRemote(flags, Env({})).retries, 17);
}

TEST(CliRemoteOptions, CacheDirPrecedenceAndNoCache) {
  std::map<std::string, std::string> vars = {
      {"XETSTORE_CACHE_DIR", "/c/env"}, {"XDG_CACHE_HOME", "/xdg"}, {"HOME", "/home/u"}};
  RemoteOptions flags;
  flags.cache_dir = "/c/flag";
  EXPECT_EQ(ResolveRemote(flags, Env(vars)).cache_dir, "/c/flag");
  EXPECT_EQ(ResolveRemote(RemoteOptions{}, Env(vars)).cache_dir, "/c/env");
  vars.erase("XETSTORE_CACHE_DIR");
  EXPECT_EQ(ResolveRemote(RemoteOptions{}, Env(vars)).cache_dir, "/xdg/xetstore");
  vars.erase("XDG_CACHE_HOME");
  EXPECT_EQ(ResolveRemote(RemoteOptions{}, Env(vars)).cache_dir, "/home/u/.cache/xetstore");
  vars.erase("HOME");
  EXPECT_EQ(ResolveRemote(RemoteOptions{}, Env(vars)).cache_dir, "");
  flags.chunk_cache = true;
  EXPECT_EQ(ResolveRemote(flags, Env(vars)).chunk_cache_dir, "/c/flag/chunks");
  flags.no_cache = true;
  vars["XETSTORE_CACHE_DIR"] = "/c/env";
  EXPECT_EQ(ResolveRemote(flags, Env(vars)).cache_dir, "");  // --no-cache wins over all
  EXPECT_EQ(ResolveRemote(flags, Env(vars)).chunk_cache_dir, "");
  EXPECT_EQ(ResolveRemote(RemoteOptions{}, Env(vars)).chunk_cache_dir, "");  // opt-in
}

TEST(CliRemoteOptions, PrecedenceFlagThenXetstoreThenHf) {
  const auto env = Env({{"XETSTORE_ENDPOINT", "http://x:1"},
                        {"HF_ENDPOINT", "http://hf:2"},
                        {"XETSTORE_TOKEN", "hf_x"},
                        {"HF_TOKEN", "hf_h"}});
  RemoteOptions flags;
  flags.endpoint = "http://flag:3/";
  flags.token = "hf_flag";
  auto r = ResolveRemote(flags, env);
  EXPECT_EQ(r.endpoint, "http://flag:3");  // trailing '/' dropped
  EXPECT_EQ(r.token, "hf_flag");
  r = ResolveRemote(RemoteOptions{}, env);
  EXPECT_EQ(r.endpoint, "http://x:1");
  EXPECT_EQ(r.token, "hf_x");
  r = ResolveRemote(RemoteOptions{}, Env({{"HF_ENDPOINT", "http://hf:2"}, {"HF_TOKEN", "hf_h"}}));
  EXPECT_EQ(r.endpoint, "http://hf:2");
  EXPECT_EQ(r.token, "hf_h");
}

TEST(CliRemoteOptions, EmptyValuesCountAsUnset) {
  const auto r = ResolveRemote(
      RemoteOptions{},
      Env({{"XETSTORE_ENDPOINT", ""}, {"HF_ENDPOINT", "http://hf:2"}, {"XETSTORE_TOKEN", ""}}));
  EXPECT_EQ(r.endpoint, "http://hf:2");
  EXPECT_EQ(r.token, "");
}

TEST(CliRemoteFailure, ExitCodes) {
  EXPECT_EQ(ExitCodeFor(Status::Ok()), 0);
  EXPECT_EQ(ExitCodeFor(Status::InvalidArgument("bad path")), 2);
  EXPECT_EQ(ExitCodeFor(Status::NotFound("no bucket")), 3);
  EXPECT_EQ(ExitCodeFor(Status::Unauthenticated("401")), 4);
  EXPECT_EQ(ExitCodeFor(Status::PermissionDenied("403")), 4);
  EXPECT_EQ(ExitCodeFor(Status::Unavailable("down")), 5);
  EXPECT_EQ(ExitCodeFor(Status::Cancelled("stop")), 130);
  EXPECT_EQ(ExitCodeFor(Status::Internal("x")), 1);
  EXPECT_EQ(ExitCodeFor(Status::IoError("read a: Permission denied")), 1);
  const Status full = Status::IoError(std::string("write out: ") + std::strerror(ENOSPC));
  EXPECT_TRUE(IsDiskFull(full));
  EXPECT_EQ(ExitCodeFor(full), 6);
  EXPECT_TRUE(IsDiskFull(Status::IoError(std::string("x: ") + std::strerror(EDQUOT))));
  EXPECT_FALSE(IsDiskFull(Status::Internal(std::strerror(ENOSPC))));
}

}  // namespace
}  // namespace xet::cli
