// `--help` of the client commands names every command and flag.
#include <gtest/gtest.h>

#include "support/subprocess.h"

namespace xet {
namespace {

using testing::RunXetstore;

void ExpectMentions(const std::string& args, std::initializer_list<const char*> words) {
  const auto r = RunXetstore(args);
  EXPECT_EQ(r.exit_code, 0) << args << ": " << r.err;
  for (const char* w : words) EXPECT_NE(r.out.find(w), std::string::npos) << args << ": " << w;
}

TEST(HelpCli, EveryCommandAndFlagIsExplained) {
  ExpectMentions("--help", {"buckets", "ls", "cp", "rm", "--endpoint", "--token",
                            "XETSTORE_ENDPOINT", "HF_TOKEN", "Exit codes"});
  ExpectMentions("buckets --help", {"create", "list", "info", "delete", "move"});
  ExpectMentions("buckets create --help", {"--public", "--private", "--exist-ok", "--endpoint"});
  ExpectMentions("buckets list --help", {"--json", "-h,--human-readable", "namespace"});
  ExpectMentions("buckets info --help", {"--json", "-h,--human-readable"});
  ExpectMentions("buckets delete --help", {"--yes"});
  ExpectMentions("buckets move --help", {"from", "to"});
  ExpectMentions("ls --help",
                 {"-h,--human-readable", "-R,--recursive", "--tree", "--json", "--token"});
  ExpectMentions("cp --help", {"-r,--recursive", "-q,--quiet", "--json", "stdin", "--retries"});
  ExpectMentions("rm --help", {"-r,--recursive", "-n,--dry-run", "-q,--quiet"});
}

TEST(HelpCli, UnknownFlagIsAUsageError) {
  const auto r = RunXetstore("ls --bogus hf://buckets/a/b");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("--bogus"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace xet
