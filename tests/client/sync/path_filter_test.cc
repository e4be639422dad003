#include "client/sync/path_filter.h"

#include <gtest/gtest.h>

#include <string>

namespace xet {
namespace {

PathFilter Filter(std::initializer_list<std::pair<FilterAction, const char*>> rules) {
  PathFilter f;
  for (const auto& [action, pattern] : rules) EXPECT_TRUE(f.Add(action, pattern).ok());
  return f;
}

constexpr FilterAction kIn = FilterAction::kInclude;
constexpr FilterAction kEx = FilterAction::kExclude;

TEST(PathFilterTest, NoRulesIncludesEverything) {
  const PathFilter f;
  EXPECT_TRUE(f.empty());
  EXPECT_TRUE(f.Includes("a"));
  EXPECT_TRUE(f.Includes("deep/dir/.hidden"));
}

TEST(PathFilterTest, StarCrossesDirectories) {
  const PathFilter f = Filter({{kEx, "*.tmp"}});
  EXPECT_FALSE(f.Includes("x.tmp"));
  EXPECT_FALSE(f.Includes("a/b/x.tmp"));  // '*' matched "a/b/x"
  EXPECT_TRUE(f.Includes("x.tmp.keep"));  // the whole path must match
  EXPECT_TRUE(f.Includes("a/b/x.txt"));

  const PathFilter dir = Filter({{kEx, "logs/*"}});
  EXPECT_FALSE(dir.Includes("logs/a"));
  EXPECT_FALSE(dir.Includes("logs/2024/01/a.log"));
  EXPECT_TRUE(dir.Includes("logs"));        // the file named "logs" is not under logs/
  EXPECT_TRUE(dir.Includes("old/logs/a"));  // anchored at the sync root

  const PathFilter mid = Filter({{kEx, "a/*/c"}});
  EXPECT_FALSE(mid.Includes("a/b/c"));
  EXPECT_FALSE(mid.Includes("a/b/x/c"));
  EXPECT_TRUE(mid.Includes("a/c"));
}

TEST(PathFilterTest, QuestionMarkSetsAndEscapes) {
  const PathFilter q = Filter({{kEx, "file?.bin"}});
  EXPECT_FALSE(q.Includes("file1.bin"));
  EXPECT_TRUE(q.Includes("file10.bin"));
  EXPECT_FALSE(Filter({{kEx, "a?b"}}).Includes("a/b"));  // '?' matches '/' too

  const PathFilter set = Filter({{kEx, "part-[0-4].csv"}, {kEx, "x[!ab]"}});
  EXPECT_FALSE(set.Includes("part-3.csv"));
  EXPECT_TRUE(set.Includes("part-7.csv"));
  EXPECT_TRUE(set.Includes("xa"));
  EXPECT_FALSE(set.Includes("xc"));

  const PathFilter lit = Filter({{kEx, "star\\*"}});
  EXPECT_FALSE(lit.Includes("star*"));
  EXPECT_TRUE(lit.Includes("starry"));
}

TEST(PathFilterTest, LeadingDotIsNotSpecial) {
  EXPECT_FALSE(Filter({{kEx, "*"}}).Includes(".env"));
  EXPECT_FALSE(Filter({{kEx, "dir/*"}}).Includes("dir/.git/config"));
}

TEST(PathFilterTest, LaterRuleWins) {
  // aws s3 sync's documented example: everything but .txt files is excluded...
  const PathFilter only_txt = Filter({{kEx, "*"}, {kIn, "*.txt"}});
  EXPECT_TRUE(only_txt.Includes("notes.txt"));
  EXPECT_TRUE(only_txt.Includes("d/notes.txt"));
  EXPECT_FALSE(only_txt.Includes("image.png"));
  // ...and the reverse order excludes everything.
  const PathFilter nothing = Filter({{kIn, "*.txt"}, {kEx, "*"}});
  EXPECT_FALSE(nothing.Includes("notes.txt"));
  EXPECT_FALSE(nothing.Includes("image.png"));

  // Three layers: exclude a directory, re-include one kind of file in it, then exclude one
  // sub-directory again.
  const PathFilter layered = Filter({{kEx, "data/*"}, {kIn, "data/*.csv"}, {kEx, "data/raw/*"}});
  EXPECT_TRUE(layered.Includes("top.bin"));
  EXPECT_FALSE(layered.Includes("data/a.bin"));
  EXPECT_TRUE(layered.Includes("data/a.csv"));
  EXPECT_TRUE(layered.Includes("data/clean/b.csv"));
  EXPECT_FALSE(layered.Includes("data/raw/b.csv"));
}

TEST(PathFilterTest, IncludeAloneExcludesNothing) {
  // Everything is included by default, so an include rule on its own changes nothing.
  const PathFilter f = Filter({{kIn, "*.txt"}});
  EXPECT_TRUE(f.Includes("a.txt"));
  EXPECT_TRUE(f.Includes("a.bin"));
}

TEST(PathFilterTest, RejectsEmptyAndNulPatterns) {
  PathFilter f;
  EXPECT_EQ(f.Add(kEx, "").code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(f.Add(kEx, std::string("a\0b", 3)).code(), Status::Code::kInvalidArgument);
  EXPECT_TRUE(f.empty());
}

}  // namespace
}  // namespace xet
