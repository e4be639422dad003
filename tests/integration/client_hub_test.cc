// HubClient against a real `xetstore serve`: the bucket API calls the CLI and the pipelines
// make, and CasClient over CAS tokens minted by the bucket token endpoints.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "client/cas/cas_client.h"
#include "client/hub/hub_client.h"
#include "client/transport/http_client.h"
#include "format/compression.h"
#include "format/xorb.h"
#include "support/server_process.h"
#include "support/subprocess.h"
#include "support/test_support.h"
#include "support/xet_fixtures.h"

namespace xet {
namespace {

using testing::ServerProcess;
using testing::UploadArtifacts;

HttpClientOptions Fast() {
  HttpClientOptions o;
  o.retry.max_attempts = 2;
  o.retry.base_delay = std::chrono::milliseconds(1);
  o.retry.max_delay = std::chrono::milliseconds(5);
  return o;
}

std::span<const uint8_t> Bytes(const std::string& s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

RemoteOp Add(const std::string& path, const Hash& hash, int64_t mtime_ms = 0,
             const std::string& content_type = "") {
  RemoteOp op;
  op.kind = RemoteOp::Kind::kAddFile;
  op.path = path;
  op.xet_hash = hash;
  op.mtime_ms = mtime_ms;
  op.content_type = content_type;
  return op;
}

// Every item under `prefix`, keyed by path.
std::map<std::string, RemoteEntry> Tree(HubClient& hub, const std::string& bucket,
                                        const std::string& prefix, bool recursive) {
  std::map<std::string, RemoteEntry> out;
  Status st = hub.ListTree(bucket, prefix, recursive, [&](const RemoteEntry& e) {
    EXPECT_TRUE(out.emplace(e.path, e).second) << "listed twice: " << e.path;
    return true;
  });
  EXPECT_TRUE(st.ok()) << st.ToString();
  return out;
}

class ClientHubTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = std::make_unique<ServerProcess>(testing::MakeTempDir("client-hub"));
    admin_ = server_->AdminToken();
    http_ = std::make_unique<HttpClient>(Fast());
    hub_ = std::make_unique<HubClient>(*http_, server_->url(), admin_);
  }

  std::unique_ptr<ServerProcess> server_;
  std::string admin_;
  std::unique_ptr<HttpClient> http_;
  std::unique_ptr<HubClient> hub_;
};

TEST_F(ClientHubTest, BucketLifecycle) {
  auto created = hub_->CreateBucket("team/data", /*is_private=*/true);
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  EXPECT_EQ(created->id, "team/data");
  EXPECT_TRUE(created->is_private);
  ASSERT_TRUE(hub_->CreateBucket("team/open", false).ok());
  ASSERT_TRUE(hub_->CreateBucket("other/x", true).ok());
  EXPECT_EQ(hub_->CreateBucket("team/data", true).status().code(), Status::Code::kAlreadyExists);

  auto info = hub_->GetBucket("team/open");
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  EXPECT_EQ(info->id, "team/open");
  EXPECT_FALSE(info->is_private);
  EXPECT_EQ(info->total_files, 0u);
  EXPECT_FALSE(info->created_at.empty());

  auto list = hub_->ListBuckets("team");
  ASSERT_TRUE(list.ok()) << list.status().ToString();
  std::set<std::string> ids;
  for (const auto& b : *list) ids.insert(b.id);
  EXPECT_EQ(ids, (std::set<std::string>{"team/data", "team/open"}));

  ASSERT_TRUE(hub_->MoveBucket("team/data", "team/renamed").ok());
  EXPECT_EQ(hub_->GetBucket("team/data").status().code(), Status::Code::kNotFound);
  EXPECT_TRUE(hub_->GetBucket("team/renamed").ok());
  EXPECT_EQ(hub_->MoveBucket("team/renamed", "team/open").code(), Status::Code::kAlreadyExists);

  ASSERT_TRUE(hub_->DeleteBucket("team/renamed").ok());
  EXPECT_EQ(hub_->GetBucket("team/renamed").status().code(), Status::Code::kNotFound);
  EXPECT_EQ(hub_->DeleteBucket("team/renamed").code(), Status::Code::kNotFound);

  // Names are checked before any request.
  EXPECT_EQ(hub_->CreateBucket("no-slash", true).status().code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(hub_->GetBucket("team/a/b").status().code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(hub_->ListBuckets("bad ns").status().code(), Status::Code::kInvalidArgument);
}

TEST_F(ClientHubTest, ListingFollowsPagination) {
  for (int i = 0; i < 105; ++i) {  // above the default page of 100 buckets
    ASSERT_TRUE(hub_->CreateBucket("many/b" + std::to_string(i), i % 2 == 0).ok());
  }
  auto list = hub_->ListBuckets("many");
  ASSERT_TRUE(list.ok()) << list.status().ToString();
  std::set<std::string> ids;
  for (const auto& b : *list) ids.insert(b.id);
  EXPECT_EQ(ids.size(), 105u);
}

TEST_F(ClientHubTest, PermissionsMapToStatuses) {
  ASSERT_TRUE(hub_->CreateBucket("team/private", true).ok());
  ASSERT_TRUE(hub_->CreateBucket("team/public", false).ok());
  const std::string reader = server_->CreateToken("read", "team/private");
  const std::string outsider = server_->CreateToken("write", "elsewhere/x");
  HubClient read_hub(*http_, server_->url(), reader);
  HubClient out_hub(*http_, server_->url(), outsider);
  HubClient anon(*http_, server_->url(), "");
  HubClient bad(*http_, server_->url(), "hf_" + std::string(40, '0'));

  EXPECT_TRUE(read_hub.GetBucket("team/private").ok());
  EXPECT_EQ(read_hub.DeleteBucket("team/private").code(), Status::Code::kPermissionDenied);
  EXPECT_EQ(read_hub.GetXetToken("team/private", /*write=*/true).status().code(),
            Status::Code::kPermissionDenied);
  EXPECT_TRUE(read_hub.GetXetToken("team/private", /*write=*/false).ok());
  EXPECT_EQ(out_hub.GetBucket("team/private").status().code(), Status::Code::kNotFound);
  EXPECT_EQ(out_hub.CreateBucket("team/new", true).status().code(),
            Status::Code::kPermissionDenied);
  EXPECT_TRUE(anon.GetBucket("team/public").ok());
  EXPECT_EQ(anon.GetBucket("team/private").status().code(), Status::Code::kUnauthenticated);
  EXPECT_EQ(bad.GetBucket("team/public").status().code(), Status::Code::kUnauthenticated);
}

TEST_F(ClientHubTest, UploadRegisterListAndDownloadThroughBucketTokens) {
  ASSERT_TRUE(hub_->CreateBucket("team/a", true).ok());
  ASSERT_TRUE(hub_->CreateBucket("team/b", true).ok());
  const std::string writer = server_->CreateToken("write", "team/a");
  HubClient hub(*http_, server_->url(), writer);

  // Upload with a minted write token (refreshed by the caching source as needed).
  auto write_tokens = MakeHubTokenSource(hub, "team/a", /*write=*/true);
  auto minted = write_tokens->Token();
  ASSERT_TRUE(minted.ok()) << minted.status().ToString();
  EXPECT_NE(minted->access_token, writer);
  EXPECT_GT(minted->expires_at, 0);
  CasClient cas(*http_, *write_tokens);
  const auto data = testing::TextLikeBytes(500'000, 3);
  const UploadArtifacts a = testing::PrepareUpload(data);
  for (const SerializedXorb& x : a.xorbs) ASSERT_TRUE(cas.UploadXorb(x.hash, x.bytes).ok());
  ASSERT_TRUE(cas.UploadShard(Bytes(a.shard_bytes)).ok());

  const std::vector<RemoteOp> ops = {
      Add("top.txt", a.file_hash, 1'700'000'000'123, "text/plain"),
      Add("dir/x.bin", a.file_hash),
      Add("dir/sub/y.bin", a.file_hash, 1'600'000'000'000),
  };
  auto outcome = hub.Batch("team/a", ops);
  ASSERT_TRUE(outcome.ok()) << outcome.status().ToString();
  EXPECT_EQ(outcome->processed, 3u);
  EXPECT_EQ(outcome->succeeded, 3u);
  EXPECT_TRUE(outcome->failed.empty());

  auto root = Tree(hub, "team/a", "", /*recursive=*/false);
  ASSERT_EQ(root.size(), 2u);
  EXPECT_TRUE(root["dir"].is_directory);
  const RemoteEntry& top = root["top.txt"];
  EXPECT_FALSE(top.is_directory);
  EXPECT_EQ(top.size, data.size());
  EXPECT_EQ(top.xet_hash, a.file_hash);
  EXPECT_EQ(top.mtime_ms, 1'700'000'000'123);
  EXPECT_EQ(top.content_type, "text/plain");
  EXPECT_FALSE(top.uploaded_at.empty());
  auto all = Tree(hub, "team/a", "", /*recursive=*/true);
  std::set<std::string> files;
  for (const auto& [path, e] : all) {
    if (!e.is_directory) files.insert(path);
  }
  EXPECT_EQ(files, (std::set<std::string>{"top.txt", "dir/x.bin", "dir/sub/y.bin"}));
  auto under = Tree(hub, "team/a", "dir/", /*recursive=*/false);
  EXPECT_EQ(under.size(), 2u);
  EXPECT_TRUE(under.contains("dir/x.bin"));
  EXPECT_TRUE(under["dir/sub"].is_directory);

  const std::vector<std::string> paths = {"dir/x.bin", "missing.bin", "top.txt"};
  auto info = hub.PathsInfo("team/a", paths);
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  ASSERT_EQ(info->size(), 2u);
  for (const RemoteEntry& e : *info) EXPECT_EQ(e.xet_hash, a.file_hash);
  const std::vector<std::string> bad_paths = {"../etc"};
  EXPECT_EQ(hub.PathsInfo("team/a", bad_paths).status().code(), Status::Code::kInvalidArgument);

  // Failed operations are reported, not errors; the rest applies.
  RemoteOp del;
  del.kind = RemoteOp::Kind::kDeleteFile;
  del.path = "never-existed";
  RemoteOp copy;
  copy.kind = RemoteOp::Kind::kCopyFile;
  copy.path = "copy.txt";
  copy.xet_hash = a.file_hash;
  RemoteOp move;
  move.kind = RemoteOp::Kind::kMovePrefix;
  move.from = "dir/sub";
  move.to = "moved";
  Hash unknown = a.file_hash;
  unknown.mutable_data()[0] ^= 1;
  const std::vector<RemoteOp> mixed = {del, copy, move, Add("bogus.bin", unknown)};
  auto mixed_outcome = hub.Batch("team/a", mixed);
  ASSERT_TRUE(mixed_outcome.ok()) << mixed_outcome.status().ToString();
  EXPECT_EQ(mixed_outcome->processed, 4u);
  EXPECT_EQ(mixed_outcome->succeeded, 3u);  // deleting a missing path succeeds (as in S3)
  ASSERT_EQ(mixed_outcome->failed.size(), 1u);
  EXPECT_EQ(mixed_outcome->failed[0].path, "bogus.bin");
  EXPECT_FALSE(mixed_outcome->failed[0].error.empty());
  all = Tree(hub, "team/a", "", true);
  EXPECT_TRUE(all.contains("copy.txt"));
  EXPECT_TRUE(all.contains("moved/y.bin"));
  EXPECT_FALSE(all.contains("bogus.bin"));
  EXPECT_FALSE(all.contains("dir/sub/y.bin"));

  // Server-side copy of a prefix into another bucket (admin can read both).
  RemoteOp copy_prefix;
  copy_prefix.kind = RemoteOp::Kind::kCopyPrefix;
  copy_prefix.from = "dir";
  copy_prefix.to = "from-a";
  copy_prefix.source_bucket = "team/a";
  const std::vector<RemoteOp> cross = {copy_prefix};
  auto cross_outcome = hub_->Batch("team/b", cross);
  ASSERT_TRUE(cross_outcome.ok()) << cross_outcome.status().ToString();
  EXPECT_TRUE(cross_outcome->failed.empty());
  EXPECT_TRUE(Tree(*hub_, "team/b", "", true).contains("from-a/x.bin"));

  // Download through a read token of the bucket.
  auto read_tokens = MakeHubTokenSource(hub, "team/a", /*write=*/false);
  CasClient reader(*http_, *read_tokens);
  auto recon = reader.GetReconstruction(a.file_hash, std::nullopt);
  ASSERT_TRUE(recon.ok()) << recon.status().ToString();
  std::map<std::pair<Hash, uint32_t>, std::string> chunks;
  for (const auto& [xorb, entries] : recon->xorbs) {
    for (const FetchEntry& e : entries) {
      Status st = reader.FetchRanges(
          e, 0, e.ranges.size() - 1, [&, xorb = xorb](size_t i, std::span<const uint8_t> b) {
            ChunkCodec codec;
            for (uint32_t c = e.ranges[i].chunk_start; c < e.ranges[i].chunk_end; ++c) {
              std::vector<uint8_t> out;
              auto n = ExtractXorbChunk(b, codec, &out);
              if (!n.ok()) return n.status();
              chunks[{xorb, c}] = testing::AsString(out);
              b = b.subspan(*n);
            }
            return Status::Ok();
          });
      ASSERT_TRUE(st.ok()) << st.ToString();
    }
  }
  std::string rebuilt;
  for (const ReconTerm& t : recon->terms) {
    for (uint32_t c = t.chunk_start; c < t.chunk_end; ++c) rebuilt += chunks[{t.xorb_hash, c}];
  }
  EXPECT_EQ(rebuilt, testing::AsString(data));

  // The other bucket's read token does not see team/a's file... until team/b references it.
  const std::string b_reader = server_->CreateToken("read", "team/b");
  HubClient b_hub(*http_, server_->url(), b_reader);
  auto b_tokens = MakeHubTokenSource(b_hub, "team/b", false);
  CasClient b_cas(*http_, *b_tokens);
  EXPECT_TRUE(b_cas.GetReconstruction(a.file_hash, std::nullopt).ok());  // copied above
  ASSERT_TRUE(hub_->CreateBucket("team/c", true).ok());
  const std::string c_reader = server_->CreateToken("read", "team/c");
  HubClient c_hub(*http_, server_->url(), c_reader);
  auto c_tokens = MakeHubTokenSource(c_hub, "team/c", false);
  CasClient c_cas(*http_, *c_tokens);
  EXPECT_EQ(c_cas.GetReconstruction(a.file_hash, std::nullopt).status().code(),
            Status::Code::kNotFound);
}

TEST_F(ClientHubTest, LargeBatchesAndTreesArePaged) {
  ASSERT_TRUE(hub_->CreateBucket("team/big", true).ok());
  auto tokens = MakeHubTokenSource(*hub_, "team/big", true);
  CasClient cas(*http_, *tokens);
  const UploadArtifacts a = testing::PrepareUpload(testing::RandomBytes(10'000, 8));
  for (const SerializedXorb& x : a.xorbs) ASSERT_TRUE(cas.UploadXorb(x.hash, x.bytes).ok());
  ASSERT_TRUE(cas.UploadShard(Bytes(a.shard_bytes)).ok());
  // 2,500 files: more than one tree page (1,000), sent as one batch request.
  std::vector<RemoteOp> ops;
  std::vector<std::string> paths;
  for (int i = 0; i < 2500; ++i) {
    paths.push_back("f/" + std::to_string(100000 + i));
    ops.push_back(Add(paths.back(), a.file_hash));
  }
  auto outcome = hub_->Batch("team/big", ops);
  ASSERT_TRUE(outcome.ok()) << outcome.status().ToString();
  EXPECT_EQ(outcome->succeeded, 2500u);
  EXPECT_EQ(Tree(*hub_, "team/big", "f", true).size(), 2500u);
  // paths-info in requests of 1,000.
  auto info = hub_->PathsInfo("team/big", paths);
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  EXPECT_EQ(info->size(), 2500u);
  // Early stop.
  size_t seen = 0;
  ASSERT_TRUE(
      hub_->ListTree("team/big", "", true, [&](const RemoteEntry&) { return ++seen < 10; }).ok());
  EXPECT_EQ(seen, 10u);
  // Other page sizes: pages of 7 (not dividing 2,500) and the server's maximum; every file
  // once, in order.
  for (size_t limit : {size_t{7}, size_t{10'000}}) {
    std::vector<std::string> listed;
    ASSERT_TRUE(hub_->ListTree(
                        "team/big", "f", true,
                        [&](const RemoteEntry& e) {
                          listed.push_back(e.path);
                          return true;
                        },
                        limit)
                    .ok());
    EXPECT_EQ(listed, paths) << "page limit " << limit;
  }
}

}  // namespace
}  // namespace xet
