#include "client/sync/sync_plan.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

namespace xet {
namespace {

Hash H(uint8_t b) {
  std::array<uint8_t, Hash::kSize> raw{};
  raw.fill(b);
  return Hash::FromArray(raw);
}

SyncFile Local(std::string path, uint64_t size, int64_t mtime) {
  return {std::move(path), size, mtime, std::nullopt};
}
SyncFile Remote(std::string path, uint64_t size, int64_t mtime, uint8_t hash_byte) {
  return {std::move(path), size, mtime, H(hash_byte)};
}

SyncOp Op(SyncOpKind kind, std::string path, uint64_t size, int64_t mtime, SyncReason reason,
          std::optional<Hash> hash = std::nullopt) {
  return {kind, std::move(path), size, mtime, hash, reason};
}

Result<SyncPlan> Plan(std::vector<SyncFile> src, std::vector<SyncFile> dst,
                      const SyncOptions& options = {}, SyncPlanCounts* counts = nullptr) {
  return PlanSync(std::move(src), std::move(dst), options, {}, counts);
}

constexpr auto kUp = SyncOpKind::kUpload;
constexpr auto kDown = SyncOpKind::kDownload;
constexpr auto kDel = SyncOpKind::kDelete;

TEST(SyncPlanTest, EmptyListingsPlanNothing) {
  SyncPlanCounts counts{1, 2, 3};
  auto plan = Plan({}, {}, {}, &counts);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_TRUE(plan->ops.empty());
  EXPECT_EQ(plan->direction, SyncDirection::kUpload);
  EXPECT_EQ(counts.unchanged + counts.excluded + counts.kept, 0u);  // reset, not added to
}

TEST(SyncPlanTest, NewFileIsUploaded) {
  auto plan = Plan({Local("a.bin", 10, 1000)}, {});
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  ASSERT_EQ(plan->ops.size(), 1u);
  EXPECT_EQ(plan->ops[0], Op(kUp, "a.bin", 10, 1000, SyncReason::kNew));
}

TEST(SyncPlanTest, ChangedSizeIsUploadedWhateverTheMtime) {
  auto plan = Plan({Local("a", 11, 1000)}, {Remote("a", 10, 1000, 1)});
  ASSERT_TRUE(plan.ok());
  ASSERT_EQ(plan->ops.size(), 1u);
  EXPECT_EQ(plan->ops[0], Op(kUp, "a", 11, 1000, SyncReason::kSizeChanged));
}

TEST(SyncPlanTest, ChangedMtimeEitherWayIsUploaded) {
  auto plan = Plan({Local("newer", 5, 2001), Local("older", 5, 1999)},
                   {Remote("newer", 5, 2000, 1), Remote("older", 5, 2000, 2)});
  ASSERT_TRUE(plan.ok());
  ASSERT_EQ(plan->ops.size(), 2u);
  EXPECT_EQ(plan->ops[0], Op(kUp, "newer", 5, 2001, SyncReason::kMtimeChanged));
  EXPECT_EQ(plan->ops[1], Op(kUp, "older", 5, 1999, SyncReason::kMtimeChanged));
}

TEST(SyncPlanTest, SameSizeAndMtimeIsUnchanged) {
  SyncPlanCounts counts;
  auto plan = Plan({Local("a", 5, 2000), Local("b", 0, 7)},
                   {Remote("a", 5, 2000, 1), Remote("b", 0, 7, 0)}, {}, &counts);
  ASSERT_TRUE(plan.ok());
  EXPECT_TRUE(plan->ops.empty());
  EXPECT_EQ(counts.unchanged, 2u);
}

TEST(SyncPlanTest, UnknownMtimeNeverCountsAsEqual) {
  auto plan = Plan({Local("a", 5, 0)}, {Remote("a", 5, 0, 1)});
  ASSERT_TRUE(plan.ok());
  ASSERT_EQ(plan->ops.size(), 1u);
  EXPECT_EQ(plan->ops[0].reason, SyncReason::kMtimeChanged);
}

TEST(SyncPlanTest, DestinationOnlyFileIsKeptWithoutDelete) {
  SyncPlanCounts counts;
  auto plan =
      Plan({Local("a", 1, 1)}, {Remote("a", 1, 1, 1), Remote("gone", 3, 1, 2)}, {}, &counts);
  ASSERT_TRUE(plan.ok());
  EXPECT_TRUE(plan->ops.empty());
  EXPECT_EQ(counts.kept, 1u);
  EXPECT_EQ(counts.unchanged, 1u);
}

TEST(SyncPlanTest, DestinationOnlyFileIsDeletedWithDelete) {
  SyncOptions options;
  options.delete_extraneous = true;
  SyncPlanCounts counts;
  auto plan =
      Plan({Local("b", 1, 1), Local("z", 2, 2)},
           {Remote("a", 7, 1, 1), Remote("c/d", 8, 1, 2), Remote("z", 2, 2, 3)}, options, &counts);
  ASSERT_TRUE(plan.ok());
  // Transfers first, then deletes; each group in path order.
  const std::vector<SyncOp> want = {Op(kUp, "b", 1, 1, SyncReason::kNew),
                                    Op(kDel, "a", 7, 0, SyncReason::kNotInSource),
                                    Op(kDel, "c/d", 8, 0, SyncReason::kNotInSource)};
  EXPECT_EQ(plan->ops, want);
  EXPECT_EQ(counts.kept, 0u);
  EXPECT_EQ(counts.unchanged, 1u);
}

TEST(SyncPlanTest, OpsAreInPathOrderWhateverTheListingOrder) {
  auto plan = Plan({Local("c", 1, 1), Local("a/b", 1, 1), Local("a", 1, 1), Local("B", 1, 1)}, {});
  ASSERT_TRUE(plan.ok());
  std::vector<std::string> paths;
  for (const auto& op : plan->ops) paths.push_back(op.path);
  EXPECT_EQ(paths, (std::vector<std::string>{"B", "a", "a/b", "c"}));  // byte order
}

TEST(SyncPlanTest, DownloadDirectionFetchesRemoteFilesByHash) {
  SyncOptions options;
  options.direction = SyncDirection::kDownload;
  options.delete_extraneous = true;
  auto plan =
      Plan({Remote("new", 4, 10, 1), Remote("same", 2, 10, 2), Remote("touched", 2, 11, 3)},
           {Local("same", 2, 10), Local("touched", 2, 10), Local("local-only", 9, 5)}, options);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->direction, SyncDirection::kDownload);
  const std::vector<SyncOp> want = {Op(kDown, "new", 4, 10, SyncReason::kNew, H(1)),
                                    Op(kDown, "touched", 2, 11, SyncReason::kMtimeChanged, H(3)),
                                    Op(kDel, "local-only", 9, 0, SyncReason::kNotInSource)};
  EXPECT_EQ(plan->ops, want);
}

TEST(SyncPlanTest, ExcludedPathsAreNeitherTransferredNorDeleted) {
  SyncOptions options;
  options.delete_extraneous = true;
  ASSERT_TRUE(options.filter.Add(FilterAction::kExclude, "*.tmp").ok());
  ASSERT_TRUE(options.filter.Add(FilterAction::kExclude, "cache/*").ok());
  SyncPlanCounts counts;
  auto plan =
      Plan({Local("a.tmp", 1, 1), Local("cache/x", 1, 1), Local("keep", 1, 1)},
           {Remote("old.tmp", 1, 1, 1), Remote("cache/y", 1, 1, 2), Remote("gone", 1, 1, 3)},
           options, &counts);
  ASSERT_TRUE(plan.ok());
  const std::vector<SyncOp> want = {Op(kUp, "keep", 1, 1, SyncReason::kNew),
                                    Op(kDel, "gone", 1, 0, SyncReason::kNotInSource)};
  EXPECT_EQ(plan->ops, want);
  EXPECT_EQ(counts.excluded, 4u);  // a.tmp, cache/x, cache/y, old.tmp
}

TEST(SyncPlanTest, IncludeAfterExcludeWins) {
  SyncOptions options;
  ASSERT_TRUE(options.filter.Add(FilterAction::kExclude, "*").ok());
  ASSERT_TRUE(options.filter.Add(FilterAction::kInclude, "*.txt").ok());
  auto plan =
      Plan({Local("a.txt", 1, 1), Local("d/b.txt", 1, 1), Local("c.bin", 1, 1)}, {}, options);
  ASSERT_TRUE(plan.ok());
  ASSERT_EQ(plan->ops.size(), 2u);
  EXPECT_EQ(plan->ops[0].path, "a.txt");
  EXPECT_EQ(plan->ops[1].path, "d/b.txt");

  SyncOptions reversed;
  ASSERT_TRUE(reversed.filter.Add(FilterAction::kInclude, "*.txt").ok());
  ASSERT_TRUE(reversed.filter.Add(FilterAction::kExclude, "*").ok());
  plan = Plan({Local("a.txt", 1, 1), Local("c.bin", 1, 1)}, {}, reversed);
  ASSERT_TRUE(plan.ok());
  EXPECT_TRUE(plan->ops.empty());
}

// A hasher that serves fixed hashes and records which files it was asked about.
struct FakeHasher {
  std::map<std::string, Hash> hashes;
  std::vector<std::string> asked;
  SyncHasher Fn() {
    return [this](const SyncFile& f) -> Result<Hash> {
      asked.push_back(f.path);
      const auto it = hashes.find(f.path);
      if (it == hashes.end()) return Status::IoError(f.path + ": cannot read");
      return it->second;
    };
  }
};

TEST(SyncPlanTest, ChecksumModeComparesHashesAndIgnoresMtimes) {
  SyncOptions options;
  options.checksum = true;
  FakeHasher hasher;
  hasher.hashes = {{"same", H(1)}, {"edited", H(9)}};
  SyncPlanCounts counts;
  auto plan = PlanSync(
      {Local("same", 5, 111), Local("edited", 5, 2000), Local("grown", 6, 1), Local("new", 3, 1)},
      {Remote("same", 5, 999, 1), Remote("edited", 5, 2000, 2), Remote("grown", 5, 1, 3)}, options,
      hasher.Fn(), &counts);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  const std::vector<SyncOp> want = {
      Op(kUp, "edited", 5, 2000, SyncReason::kContentChanged, H(9)),  // equal mtimes, new bytes
      Op(kUp, "grown", 6, 1, SyncReason::kSizeChanged), Op(kUp, "new", 3, 1, SyncReason::kNew)};
  EXPECT_EQ(plan->ops, want);
  EXPECT_EQ(counts.unchanged, 1u);  // "same": equal hashes, different mtimes
  // Only same-size pairs are hashed: not "grown" (size differs) nor "new" (nothing to compare).
  EXPECT_EQ(hasher.asked, (std::vector<std::string>{"edited", "same"}));
}

TEST(SyncPlanTest, ChecksumModeUsesHashesAlreadyInTheListing) {
  SyncOptions options;
  options.checksum = true;
  SyncFile local = Local("a", 5, 1);
  local.xet_hash = H(4);
  auto plan = PlanSync({local}, {Remote("a", 5, 1, 4)}, options, {});
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_TRUE(plan->ops.empty());
  // Without a hash and without a hasher, checksum mode cannot decide.
  plan = PlanSync({Local("a", 5, 1)}, {Remote("a", 5, 1, 4)}, options, {});
  EXPECT_EQ(plan.status().code(), Status::Code::kInvalidArgument);
}

TEST(SyncPlanTest, ChecksumModeHashesTheLocalSideWhenDownloading) {
  SyncOptions options;
  options.checksum = true;
  options.direction = SyncDirection::kDownload;
  FakeHasher hasher;
  hasher.hashes = {{"a", H(1)}, {"b", H(7)}};
  auto plan = PlanSync({Remote("a", 5, 1, 1), Remote("b", 5, 1, 2)},
                       {Local("a", 5, 1), Local("b", 5, 1)}, options, hasher.Fn());
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  ASSERT_EQ(plan->ops.size(), 1u);
  EXPECT_EQ(plan->ops[0], Op(kDown, "b", 5, 1, SyncReason::kContentChanged, H(2)));
}

TEST(SyncPlanTest, HasherErrorFailsThePlan) {
  SyncOptions options;
  options.checksum = true;
  FakeHasher hasher;  // knows no file
  auto plan = PlanSync({Local("a", 5, 1)}, {Remote("a", 5, 1, 1)}, options, hasher.Fn());
  EXPECT_EQ(plan.status().code(), Status::Code::kIoError);
}

TEST(SyncPlanTest, PathListedTwiceIsRejected) {
  auto plan = Plan({Local("a", 1, 1), Local("a", 2, 2)}, {});
  EXPECT_EQ(plan.status().code(), Status::Code::kInvalidArgument);
  plan = Plan({}, {Remote("x", 1, 1, 1), Remote("x", 1, 1, 1)});
  EXPECT_EQ(plan.status().code(), Status::Code::kInvalidArgument);
}

TEST(SyncPlanTest, NamesAreStable) {
  EXPECT_EQ(SyncOpKindName(kUp), "upload");
  EXPECT_EQ(SyncOpKindName(kDown), "download");
  EXPECT_EQ(SyncOpKindName(kDel), "delete");
  EXPECT_EQ(SyncReasonName(SyncReason::kNew), "new");
  EXPECT_EQ(SyncReasonName(SyncReason::kSizeChanged), "size-changed");
  EXPECT_EQ(SyncReasonName(SyncReason::kMtimeChanged), "mtime-changed");
  EXPECT_EQ(SyncReasonName(SyncReason::kContentChanged), "content-changed");
  EXPECT_EQ(SyncReasonName(SyncReason::kNotInSource), "not-in-source");
  EXPECT_EQ(SyncDirectionName(SyncDirection::kDownload), "download");
}

}  // namespace
}  // namespace xet
