// RemoteConnection (client/bucket_transfer/remote_connection.h): what it reports of its
// settings and where it keeps the caches. Constructing one sends no request, so no server
// is needed.
#include "client/bucket_transfer/remote_connection.h"

#include <gtest/gtest.h>

namespace xet {
namespace {

RemoteSettings Settings(const std::string& cache_dir) {
  RemoteSettings s;
  s.endpoint = "http://127.0.0.1:9";
  s.cache_dir = cache_dir;
  return s;
}

TEST(RemoteConnection, ShardCacheDirIsPerEndpointAndBucket) {
  RemoteConnection conn(Settings("/c"));
  // The first 32 hex digits of SHA-256("http://127.0.0.1:9\nteam/data") (and of ".../other"),
  // from sha256sum.
  EXPECT_EQ(conn.ShardCacheDir("team/data"), "/c/shards/c0af1ec4be9faddd6e4157760d7e6b0c");
  EXPECT_EQ(conn.ShardCacheDir("team/other"), "/c/shards/7a69fe4ebe82abdee520381d6c501baa");
}

TEST(RemoteConnection, NoCacheDirMeansNoShardCache) {
  RemoteConnection conn(Settings(""));
  EXPECT_EQ(conn.ShardCacheDir("team/data"), "");
  EXPECT_EQ(conn.ChunkCacheDir(), "");
}

TEST(RemoteConnection, ReportsItsSettings) {
  RemoteSettings s = Settings("/c");
  s.chunk_cache_dir = "/c/chunks";
  RemoteConnection anonymous(s);
  EXPECT_EQ(anonymous.endpoint(), "http://127.0.0.1:9");
  EXPECT_FALSE(anonymous.has_token());
  EXPECT_EQ(anonymous.ChunkCacheDir(), "/c/chunks");
  s.token = "hf_x";
  RemoteConnection with_token(s);
  EXPECT_TRUE(with_token.has_token());
}

}  // namespace
}  // namespace xet
