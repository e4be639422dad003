#include "http/router.h"

#include <gtest/gtest.h>

namespace xet {
namespace {

HttpHandler Named(std::string name) {
  return [name](const HttpRequest&, const RouteParams&) { return HttpResponse::Json(name); };
}

std::string Call(const RouteMatch& match) {
  HttpRequest request;
  return (*match.handler)(request, match.params).body;
}

TEST(RouterTest, MatchesLiteralAndParameterSegments) {
  Router router;
  ASSERT_TRUE(router.Add("GET", "/v1/xorbs/{prefix}/{hash}", Named("xorb")).ok());
  ASSERT_TRUE(router.Add("GET", "/healthz", Named("health")).ok());
  RouteMatch match = router.Find("GET", "/v1/xorbs/default/abc123");
  ASSERT_TRUE(match.found());
  EXPECT_EQ(Call(match), "xorb");
  EXPECT_EQ(match.params.at("prefix"), "default");
  EXPECT_EQ(match.params.at("hash"), "abc123");
  EXPECT_EQ(match.options->name, "/v1/xorbs/{prefix}/{hash}");
  EXPECT_EQ(Call(router.Find("GET", "/healthz")), "health");
}

TEST(RouterTest, UnknownPathIs404) {
  Router router;
  ASSERT_TRUE(router.Add("GET", "/v1/xorbs/{prefix}/{hash}", Named("xorb")).ok());
  for (const char* path : {"/", "/v1", "/v1/xorbs/default", "/v1/xorbs/default/h/extra",
                           "/v1/xorbs//h", "", "relative"}) {
    RouteMatch match = router.Find("GET", path);
    EXPECT_EQ(match.kind, RouteMatch::Kind::kNotFound) << path;
    EXPECT_EQ(match.status(), 404) << path;
  }
}

TEST(RouterTest, KnownPathWithOtherMethodIs405WithAllow) {
  Router router;
  ASSERT_TRUE(router.Add("GET", "/v1/xorbs/{prefix}/{hash}", Named("get")).ok());
  ASSERT_TRUE(router.Add("POST", "/v1/xorbs/{prefix}/{hash}", Named("post")).ok());
  RouteMatch match = router.Find("DELETE", "/v1/xorbs/default/abc");
  EXPECT_EQ(match.kind, RouteMatch::Kind::kMethodNotAllowed);
  EXPECT_EQ(match.status(), 405);
  EXPECT_EQ(match.allow, "GET, HEAD, POST");
  EXPECT_EQ(Call(router.Find("POST", "/v1/xorbs/default/abc")), "post");
}

TEST(RouterTest, HeadFallsBackToGetUnlessAHeadRouteExists) {
  Router router;
  ASSERT_TRUE(router.Add("GET", "/a", Named("get-a")).ok());
  ASSERT_TRUE(router.Add("GET", "/b", Named("get-b")).ok());
  ASSERT_TRUE(router.Add("HEAD", "/b", Named("head-b")).ok());
  EXPECT_EQ(Call(router.Find("HEAD", "/a")), "get-a");
  EXPECT_EQ(Call(router.Find("HEAD", "/b")), "head-b");
  EXPECT_EQ(Call(router.Find("GET", "/b")), "get-b");
}

TEST(RouterTest, CatchAllCapturesTheRest) {
  Router router;
  ASSERT_TRUE(router.Add("GET", "/buckets/{ns}/{name}/resolve/{*path}", Named("resolve")).ok());
  RouteMatch match = router.Find("GET", "/buckets/me/data/resolve/dir/sub/file%20name.bin");
  ASSERT_TRUE(match.found());
  EXPECT_EQ(match.params.at("ns"), "me");
  EXPECT_EQ(match.params.at("name"), "data");
  EXPECT_EQ(match.params.at("path"), "dir/sub/file name.bin");

  match = router.Find("GET", "/buckets/me/data/resolve/");
  ASSERT_TRUE(match.found());
  EXPECT_EQ(match.params.at("path"), "");
  EXPECT_FALSE(router.Find("GET", "/buckets/me/data/resolve").found());
}

TEST(RouterTest, MostSpecificPatternWins) {
  Router router;
  ASSERT_TRUE(router.Add("GET", "/v1/chunks/{prefix}/{hash}", Named("param")).ok());
  ASSERT_TRUE(router.Add("GET", "/v1/chunks/default-merkledb/{hash}", Named("literal")).ok());
  ASSERT_TRUE(router.Add("GET", "/v1/{*rest}", Named("catchall")).ok());
  EXPECT_EQ(Call(router.Find("GET", "/v1/chunks/default-merkledb/h")), "literal");
  EXPECT_EQ(Call(router.Find("GET", "/v1/chunks/default/h")), "param");
  EXPECT_EQ(Call(router.Find("GET", "/v1/other/thing")), "catchall");
}

TEST(RouterTest, ParametersArePercentDecodedAfterSplitting) {
  Router router;
  ASSERT_TRUE(router.Add("GET", "/files/{name}", Named("file")).ok());
  RouteMatch match = router.Find("GET", "/files/a%2Fb%20c");
  ASSERT_TRUE(match.found());
  EXPECT_EQ(match.params.at("name"), "a/b c");
  // Literal segments compare decoded.
  EXPECT_TRUE(router.Find("GET", "/%66iles/x").found());
}

TEST(RouterTest, RouteOptionsAreKept) {
  Router router;
  RouteOptions options;
  options.max_body_bytes = 64 << 20;
  options.name = "xorb_upload";
  ASSERT_TRUE(router.Add("POST", "/v1/xorbs/{prefix}/{hash}", Named("x"), options).ok());
  RouteMatch match = router.Find("POST", "/v1/xorbs/default/h");
  ASSERT_TRUE(match.found());
  EXPECT_EQ(match.options->name, "xorb_upload");
  EXPECT_EQ(match.options->max_body_bytes, uint64_t{64} << 20);
}

TEST(RouterTest, RejectsMalformedAndDuplicatePatterns) {
  Router router;
  EXPECT_FALSE(router.Add("GET", "no-slash", Named("x")).ok());
  EXPECT_FALSE(router.Add("GET", "/a/{", Named("x")).ok());
  EXPECT_FALSE(router.Add("GET", "/a/{}", Named("x")).ok());
  EXPECT_FALSE(router.Add("GET", "/a/x{id}", Named("x")).ok());
  EXPECT_FALSE(router.Add("GET", "/a/{*rest}/b", Named("x")).ok());
  EXPECT_FALSE(router.Add("GET", "/a/{id}/{id}", Named("x")).ok());
  EXPECT_FALSE(router.Add("GET", "/a", HttpHandler()).ok());
  ASSERT_TRUE(router.Add("GET", "/a/{id}", Named("x")).ok());
  EXPECT_FALSE(router.Add("GET", "/a/{other}", Named("y")).ok());  // same shape
  EXPECT_TRUE(router.Add("PUT", "/a/{other}", Named("y")).ok());
  EXPECT_TRUE(router.Has("GET", "/a/{id}"));
  EXPECT_FALSE(router.Has("GET", "/a/{other}"));
}

}  // namespace
}  // namespace xet
