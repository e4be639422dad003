// The Hub-compatible bucket API end to end: a real `xetstore serve` on a loopback port,
// driven over HTTP the way @huggingface/hub and huggingface_hub call it, with real xorbs and
// shards uploaded through the bucket's CAS write token. Every endpoint, status code and
// scope rule; expectations are computed from what the test itself uploaded.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string_view>
#include <thread>

#include "client/hub/wire.h"
#include "support/curl_client.h"
#include "support/server_process.h"
#include "support/subprocess.h"
#include "support/test_support.h"
#include "support/xet_fixtures.h"

namespace xet {
namespace {

using nlohmann::json;
using testing::Bearer;
using testing::Fetch;
using testing::HttpResult;
using testing::ServerProcess;
using testing::UploadArtifacts;

const char* const kJson = "Content-Type: application/json";
const char* const kNdjson = "Content-Type: application/x-ndjson";
const char* const kFileInfoAccept = "Accept: application/vnd.xet-fileinfo+json, */*";

std::vector<std::string> Auth(const std::string& token) {
  return token.empty() ? std::vector<std::string>{} : std::vector<std::string>{Bearer(token)};
}

// The URL inside `<...>; rel="next"`, or "" when there is no next page.
std::string NextLink(const HttpResult& r) {
  const auto it = r.headers.find("link");
  if (it == r.headers.end()) return {};
  return NextLinkUrl(it->second).value_or(std::string());
}

std::string NdjsonBody(const std::vector<json>& ops) {
  std::string body;
  for (const json& op : ops) body += op.dump() + "\n";
  return body;
}

json AddFile(const std::string& path, const Hash& hash) {
  return {{"type", "addFile"}, {"path", path}, {"xetHash", hash.ToHex()}};
}
json DeleteFile(const std::string& path) { return {{"type", "deleteFile"}, {"path", path}}; }

// A response header's value ("" when absent).
std::string Header(const HttpResult& r, const std::string& lower_name) {
  const auto it = r.headers.find(lower_name);
  return it == r.headers.end() ? std::string() : it->second;
}

std::string Bytes(const std::vector<uint8_t>& v) { return testing::AsString(v); }

// True for an ISO-8601 UTC time with milliseconds: YYYY-MM-DDTHH:MM:SS.mmmZ.
bool IsIsoMillis(const std::string& s) {
  static constexpr std::string_view kShape = "dddd-dd-ddTdd:dd:dd.dddZ";
  if (s.size() != kShape.size()) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    const bool ok = kShape[i] == 'd' ? (s[i] >= '0' && s[i] <= '9') : s[i] == kShape[i];
    if (!ok) return false;
  }
  return true;
}

class HubApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = std::make_unique<ServerProcess>(testing::MakeTempDir("hub"));
    admin_ = server_->AdminToken();
    ASSERT_TRUE(admin_.starts_with("hf_")) << admin_;
  }

  std::string Url(const std::string& path) const { return server_->url() + path; }
  std::string Api(const std::string& bucket, const std::string& rest = "") const {
    return Url("/api/buckets/" + bucket + rest);
  }
  std::string Resolve(const std::string& bucket, const std::string& path) const {
    return Url("/buckets/" + bucket + "/resolve/" + path);
  }
  std::string Token(const std::string& perm, const std::string& scope) const {
    return server_->CreateToken(perm, scope);
  }

  HttpResult Create(const std::string& bucket, const std::string& token,
                    const std::string& body = "") {
    auto headers = Auth(token);
    headers.push_back(kJson);
    return Fetch("POST", Api(bucket), headers, body);
  }
  void CreateOk(const std::string& bucket, bool is_private) {
    const auto r = Create(bucket, admin_, json{{"private", is_private}}.dump());
    ASSERT_EQ(r.status, 200) << r.body;
  }

  // The bucket's CAS token of the given kind ("read" or "write"), fetched with `token`.
  json XetToken(const std::string& bucket, const std::string& kind, const std::string& token) {
    const auto r = Fetch("GET", Api(bucket, "/xet-" + kind + "-token"), Auth(token));
    EXPECT_EQ(r.status, 200) << r.body;
    return r.status == 200 ? json::parse(r.body) : json::object();
  }

  // Uploads `data`'s xorbs and shard with the bucket's CAS write token, as a client does.
  UploadArtifacts Upload(const std::string& bucket, const std::string& token,
                         const std::vector<uint8_t>& data) {
    UploadArtifacts a = testing::PrepareUpload(data);
    const std::string cas = XetToken(bucket, "write", token).value("accessToken", "");
    for (const auto& x : a.xorbs) {
      const auto r = Fetch("POST", Url("/v1/xorbs/default/" + x.hash.ToHex()), {Bearer(cas)},
                           testing::AsString(x.bytes));
      EXPECT_EQ(r.status, 200) << r.body;
    }
    const auto r = Fetch("POST", Url("/v1/shards"), {Bearer(cas)}, a.shard_bytes);
    EXPECT_EQ(r.status, 200) << r.body;
    return a;
  }

  HttpResult Batch(const std::string& bucket, const std::string& token,
                   const std::vector<json>& ops) {
    auto headers = Auth(token);
    headers.push_back(kNdjson);
    return Fetch("POST", Api(bucket, "/batch"), headers, NdjsonBody(ops));
  }
  void BatchOk(const std::string& bucket, const std::string& token, const std::vector<json>& ops) {
    const auto r = Batch(bucket, token, ops);
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(json::parse(r.body)["succeeded"], ops.size()) << r.body;
  }

  // Every item of a listing, following Link rel="next" (at most 1,000 pages).
  std::vector<json> ListAll(const std::string& first_url, const std::string& token,
                            int* pages = nullptr) {
    std::vector<json> out;
    std::string url = first_url;
    int n = 0;
    while (!url.empty() && n < 1000) {
      const auto r = Fetch("GET", url, Auth(token));
      EXPECT_EQ(r.status, 200) << url << ": " << r.body;
      if (r.status != 200) break;
      for (const json& item : json::parse(r.body)) out.push_back(item);
      url = NextLink(r);
      ++n;
    }
    if (pages) *pages = n;
    return out;
  }

  std::unique_ptr<ServerProcess> server_;
  std::string admin_;
};

std::vector<std::string> Paths(const std::vector<json>& items) {
  std::vector<std::string> out;
  for (const json& i : items)
    out.push_back(i["type"].get<std::string>() + ":" + i["path"].get<std::string>());
  return out;
}

// ---------------------------------------------------------------------------------------
// create / info / list / delete / move

TEST_F(HubApiTest, CreateAnswersUrlIdNameAndInfoDescribesTheBucket) {
  const auto r = Create("org/data", admin_, R"({"private": false})");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(json::parse(r.body),
            json({{"url", Url("/buckets/org/data")}, {"id", "org/data"}, {"name", "org/data"}}));
  const auto info = Fetch("GET", Api("org/data"), Auth(admin_));
  ASSERT_EQ(info.status, 200) << info.body;
  const json j = json::parse(info.body);
  EXPECT_EQ(j["id"], "org/data");
  EXPECT_EQ(j["private"], false);
  EXPECT_EQ(j["size"], 0);
  EXPECT_EQ(j["totalFiles"], 0);
  EXPECT_TRUE(IsIsoMillis(j["createdAt"].get<std::string>())) << j;
  EXPECT_TRUE(IsIsoMillis(j["updatedAt"].get<std::string>())) << j;

  // Creating it again is a conflict (huggingface_hub's exist_ok relies on 409).
  EXPECT_EQ(Create("org/data", admin_, "{}").status, 409);
}

TEST_F(HubApiTest, BucketsArePrivateUnlessAskedOtherwise) {
  struct Case {
    std::string name, body;
    bool is_private;
  };
  const Case cases[] = {
      {"ns/empty-body", "", true},
      {"ns/empty-object", "{}", true},
      {"ns/nulls", R"({"private":null,"visibility":null})", true},
      {"ns/vis-public", R"({"visibility":"public"})", false},
      {"ns/vis-private", R"({"visibility":"private"})", true},
      {"ns/priv-false", R"({"private":false,"resourceGroupId":"x"})", false},
      {"ns/both", R"({"private":true,"visibility":"private","region":"eu"})", true}};
  for (const Case& c : cases) {
    const auto r = Create(c.name, admin_, c.body);
    ASSERT_EQ(r.status, 200) << c.body << ": " << r.body;
    const auto info = Fetch("GET", Api(c.name), Auth(admin_));
    ASSERT_EQ(info.status, 200);
    EXPECT_EQ(json::parse(info.body)["private"], c.is_private) << c.body;
  }
}

TEST_F(HubApiTest, CreateRejectsBadNamesAndBodies) {
  for (const std::string& bucket :
       std::vector<std::string>{"ns/-lead", "ns/trail.", "ns/a..b", "ns/sp%20ace", "-ns/b",
                                "ns/" + std::string(97, 'x'), "ns/%2E%2E", "n%00s/b"}) {
    const auto r = Create(bucket, admin_, "{}");
    EXPECT_EQ(r.status, 400) << bucket << ": " << r.body;
    EXPECT_TRUE(json::parse(r.body, nullptr, false).contains("error")) << r.body;
  }
  for (const std::string& body : std::vector<std::string>{
           "not json", "[]", "42", R"({"private":"yes"})", R"({"visibility":"secret"})",
           R"({"visibility":true})", R"({"private":true,"visibility":"public"})",
           R"({"resourceGroupId":5})", R"({"region":["eu"]})"}) {
    const auto r = Create("ns/bodies", admin_, body);
    EXPECT_EQ(r.status, 400) << body << ": " << r.body;
  }
  EXPECT_EQ(Fetch("GET", Api("ns/bodies"), Auth(admin_)).status, 404);  // nothing was created
  // Bodies over 64 KiB: 413 before the handler.
  const std::string big = R"({"region":")" + std::string(70 << 10, 'x') + "\"}";
  EXPECT_EQ(Create("ns/big", admin_, big).status, 413);
  // "me" means the caller's account, which tokens do not have.
  EXPECT_EQ(Create("me/mine", admin_, "{}").status, 400);
}

TEST_F(HubApiTest, CreateNeedsAWriteTokenCoveringTheName) {
  EXPECT_EQ(Create("team/a", "", "{}").status, 401);
  EXPECT_EQ(Create("team/a", "hf_0000000000000000000000000000000000000000", "{}").status, 401);
  EXPECT_EQ(Create("team/a", Token("read", "team/a"), "{}").status, 403);
  EXPECT_EQ(Create("team/a", Token("write", "team/b"), "{}").status, 403);
  EXPECT_EQ(Create("team/a", Token("write", "team/a"), "{}").status, 200);
  EXPECT_EQ(Create("team/e", Token("write", "team/d --scope team/e"), "{}").status, 200);
  EXPECT_EQ(Create("team/c", admin_, "{}").status, 200);  // unrestricted scopes
}

TEST_F(HubApiTest, InfoHidesPrivateBucketsAndMissingOnesAlike) {
  CreateOk("ns/pub", false);
  CreateOk("ns/priv", true);
  const std::string outsider = Token("read", "ns/other");
  const std::string reader = Token("read", "ns/priv");

  EXPECT_EQ(Fetch("GET", Api("ns/pub"), {}).status, 200);  // public: no token needed
  EXPECT_EQ(Fetch("GET", Api("ns/pub"), Auth(outsider)).status, 200);
  EXPECT_EQ(Fetch("GET", Api("ns/priv"), Auth(reader)).status, 200);
  for (const std::string& bucket : std::vector<std::string>{"ns/priv", "ns/missing"}) {
    // An outsider sees 404 with the error code clients map to "bucket not found"...
    const auto r = Fetch("GET", Api(bucket), Auth(outsider));
    EXPECT_EQ(r.status, 404) << bucket;
    EXPECT_EQ(Header(r, "x-error-code"), "RepoNotFound") << bucket;
    // ...and an anonymous caller 401, whether the bucket exists or not.
    const auto anon = Fetch("GET", Api(bucket), {});
    EXPECT_EQ(anon.status, 401) << bucket;
    EXPECT_EQ(Header(anon, "x-error-code"), "RepoNotFound") << bucket;
  }
  // A bad token is 401 even for a public bucket.
  EXPECT_EQ(Fetch("GET", Api("ns/pub"), {Bearer("hf_bogus")}).status, 401);
  EXPECT_EQ(Fetch("GET", Api("ns/pub"), {"Authorization: Basic abc"}).status, 401);
}

TEST_F(HubApiTest, ListShowsOnlyReadableBucketsWithPaginationAndSearch) {
  std::set<std::string> all, pub;
  for (int i = 0; i < 7; ++i) {
    const std::string name = "ns/b" + std::to_string(i);
    const bool is_private = i % 2 == 1;
    CreateOk(name, is_private);
    all.insert(name);
    if (!is_private) pub.insert(name);
  }
  CreateOk("other/x", false);
  auto ids = [](const std::vector<json>& items) {
    std::vector<std::string> out;
    for (const json& i : items) out.push_back(i["id"]);
    return out;
  };
  const std::vector<std::string> all_sorted(all.begin(), all.end());
  int pages = 0;
  EXPECT_EQ(ids(ListAll(Api("ns?limit=3"), admin_, &pages)), all_sorted);
  EXPECT_EQ(pages, 3);
  EXPECT_EQ(ids(ListAll(Api("ns"), admin_)), all_sorted);
  // Anonymous: the public ones only, across pages.
  EXPECT_EQ(ids(ListAll(Api("ns?limit=2"), "")), std::vector<std::string>(pub.begin(), pub.end()));
  // A token scoped to one private bucket also sees it (and the public ones).
  std::set<std::string> scoped = pub;
  scoped.insert("ns/b3");
  EXPECT_EQ(ids(ListAll(Api("ns?limit=2"), Token("read", "ns/b3"))),
            std::vector<std::string>(scoped.begin(), scoped.end()));
  // Items have the info shape.
  const auto first = ListAll(Api("ns"), admin_);
  ASSERT_FALSE(first.empty());
  for (const char* field : {"id", "private", "createdAt", "updatedAt", "size", "totalFiles"}) {
    EXPECT_TRUE(first[0].contains(field)) << field;
  }
  // search filters names; "me" lists every namespace.
  EXPECT_EQ(ids(ListAll(Api("ns?search=b4"), admin_)), std::vector<std::string>{"ns/b4"});
  auto everything = ids(ListAll(Api("me"), admin_));
  EXPECT_EQ(everything.size(), all.size() + 1);
  EXPECT_TRUE(std::count(everything.begin(), everything.end(), "other/x") == 1);
  // Bad input.
  for (const char* q : {"ns?limit=0", "ns?limit=x", "ns?cursor=nonsense", "-ns"}) {
    EXPECT_EQ(Fetch("GET", Api(q), Auth(admin_)).status, 400) << q;
  }
}

TEST_F(HubApiTest, DeleteRemovesTheBucketAndNeedsWriteScope) {
  CreateOk("ns/gone", true);
  EXPECT_EQ(Fetch("DELETE", Api("ns/gone"), {}).status, 401);
  EXPECT_EQ(Fetch("DELETE", Api("ns/gone"), Auth(Token("read", "ns/gone"))).status, 403);
  EXPECT_EQ(Fetch("DELETE", Api("ns/gone"), Auth(Token("write", "ns/else"))).status, 403);
  const std::string writer = Token("write", "ns/gone");
  const auto r = Fetch("DELETE", Api("ns/gone"), Auth(writer));
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(Fetch("GET", Api("ns/gone"), Auth(admin_)).status, 404);
  const auto again = Fetch("DELETE", Api("ns/gone"), Auth(writer));
  EXPECT_EQ(again.status, 404);
  EXPECT_EQ(Header(again, "x-error-code"), "RepoNotFound");
  EXPECT_EQ(Fetch("DELETE", Api("ns/a..b"), Auth(admin_)).status, 400);
}

TEST_F(HubApiTest, MoveRenamesWithEntriesAndChecksBothNames) {
  CreateOk("ns/from", true);
  const auto a = Upload("ns/from", admin_, testing::RandomBytes(5000, 1));
  BatchOk("ns/from", admin_, {AddFile("dir/f.bin", a.file_hash)});
  CreateOk("ns/taken", true);
  auto move = [&](const std::string& token, const json& body) {
    return Fetch("POST", Url("/api/repos/move"), {Bearer(token), kJson}, body.dump());
  };
  const json ok_body = {{"fromRepo", "ns/from"}, {"toRepo", "ns/to"}, {"type", "bucket"}};
  EXPECT_EQ(move(Token("write", "ns/from"), ok_body).status, 403);  // not the target name
  EXPECT_EQ(move(Token("write", "ns/to"), ok_body).status, 403);    // not the source name
  EXPECT_EQ(Fetch("POST", Url("/api/repos/move"), {kJson}, ok_body.dump()).status, 401);
  EXPECT_EQ(
      move(admin_, {{"fromRepo", "ns/from"}, {"toRepo", "ns/taken"}, {"type", "bucket"}}).status,
      409);
  const auto missing =
      move(admin_, {{"fromRepo", "ns/nope"}, {"toRepo", "ns/x"}, {"type", "bucket"}});
  EXPECT_EQ(missing.status, 404);
  EXPECT_EQ(Header(missing, "x-error-code"), "RepoNotFound");
  for (const json& bad :
       {json{{"fromRepo", "ns/from"}, {"toRepo", "ns/to"}, {"type", "model"}},
        json{{"fromRepo", "ns/from"}, {"toRepo", "ns/to"}},
        json{{"fromRepo", "ns/from"}, {"toRepo", "to"}, {"type", "bucket"}},
        json{{"fromRepo", 5}, {"toRepo", "ns/to"}, {"type", "bucket"}},
        json{{"fromRepo", "ns/from"}, {"toRepo", "ns/../x"}, {"type", "bucket"}}, json::array()}) {
    EXPECT_EQ(move(admin_, bad).status, 400) << bad;
  }

  const std::string both = Token("write", "ns/from --scope ns/to");
  const auto r = move(both, ok_body);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(Fetch("GET", Api("ns/from"), Auth(admin_)).status, 404);
  const auto items = ListAll(Api("ns/to", "/tree?recursive=true"), admin_);
  ASSERT_EQ(items.size(), 1u);
  EXPECT_EQ(items[0]["path"], "dir/f.bin");
  EXPECT_EQ(items[0]["xetHash"], a.file_hash.ToHex());
  // The renamed bucket's readers can still download the file.
  const auto body = Fetch("GET", Resolve("ns/to", "dir/f.bin"), Auth(admin_));
  EXPECT_EQ(body.status, 200);
  EXPECT_EQ(body.body, Bytes(testing::RandomBytes(5000, 1)));
}

// ---------------------------------------------------------------------------------------
// xet tokens

TEST_F(HubApiTest, XetTokensAnswerJsonAndHeaders) {
  CreateOk("ns/pub", false);
  const auto r = Fetch("GET", Api("ns/pub", "/xet-read-token"), {});  // anonymous, public
  ASSERT_EQ(r.status, 200) << r.body;
  const json j = json::parse(r.body);
  const std::string token = j["accessToken"];
  EXPECT_TRUE(token.starts_with("xet_")) << token;
  EXPECT_EQ(j["casUrl"], server_->url());
  const int64_t now = std::chrono::duration_cast<std::chrono::seconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  EXPECT_GT(j["exp"].get<int64_t>(), now + 600);  // clients refresh 60 s before expiry
  EXPECT_LE(j["exp"].get<int64_t>(), now + 3700);
  EXPECT_EQ(Header(r, "x-xet-access-token"), token);
  EXPECT_EQ(Header(r, "x-xet-cas-url"), server_->url());
  EXPECT_EQ(Header(r, "x-xet-token-expiration"), std::to_string(j["exp"].get<int64_t>()));

  // A trailing revision segment (the Python client may add one) is accepted.
  EXPECT_EQ(Fetch("GET", Api("ns/pub", "/xet-read-token/main"), {}).status, 200);
  EXPECT_EQ(Fetch("GET", Api("ns/pub", "/xet-write-token/main"), Auth(admin_)).status, 200);

  // Write tokens need write on the bucket.
  EXPECT_EQ(Fetch("GET", Api("ns/pub", "/xet-write-token"), {}).status, 401);
  EXPECT_EQ(Fetch("GET", Api("ns/pub", "/xet-write-token"), Auth(Token("read", "ns/pub"))).status,
            403);
  EXPECT_EQ(
      Fetch("GET", Api("ns/pub", "/xet-write-token"), Auth(Token("write", "ns/other"))).status,
      403);
  EXPECT_EQ(Fetch("GET", Api("ns/missing", "/xet-write-token"), Auth(admin_)).status, 404);

  // A read CAS token cannot upload.
  const auto a = testing::PrepareUpload(testing::RandomBytes(1000, 2));
  const auto up = Fetch("POST", Url("/v1/xorbs/default/" + a.xorbs[0].hash.ToHex()),
                        {Bearer(token)}, testing::AsString(a.xorbs[0].bytes));
  EXPECT_EQ(up.status, 403) << up.body;

  // Private: readers only.
  CreateOk("ns/priv", true);
  EXPECT_EQ(Fetch("GET", Api("ns/priv", "/xet-read-token"), {}).status, 401);
  EXPECT_EQ(Fetch("GET", Api("ns/priv", "/xet-read-token"), Auth(Token("read", "ns/x"))).status,
            404);
  EXPECT_EQ(Fetch("GET", Api("ns/priv", "/xet-read-token"), Auth(Token("read", "ns/priv"))).status,
            200);
}

// ---------------------------------------------------------------------------------------
// batch, tree, paths-info, resolve: the core flow

TEST_F(HubApiTest, UploadAddListAndDownload) {
  CreateOk("ns/data", true);
  const std::string writer = Token("write", "ns/data");
  const auto big_data = testing::TextLikeBytes(3'000'000, 3);
  const auto small_data = testing::RandomBytes(777, 4);
  const auto big = Upload("ns/data", writer, big_data);
  const auto small = Upload("ns/data", writer, small_data);

  const auto r = Batch("ns/data", writer,
                       {{{"type", "addFile"},
                         {"path", "models/big.txt"},
                         {"xetHash", big.file_hash.ToHex()},
                         {"mtime", 1700000000123},
                         {"contentType", "text/plain"}},
                        AddFile("small.bin", small.file_hash)});
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(json::parse(r.body),
            json::parse(R"({"success":true,"processed":2,"succeeded":2,"failed":[]})"));

  // Info totals.
  const json info = json::parse(Fetch("GET", Api("ns/data"), Auth(writer)).body);
  EXPECT_EQ(info["totalFiles"], 2);
  EXPECT_EQ(info["size"], big_data.size() + small_data.size());

  // Tree: root (non-recursive) has the file and the directory.
  const auto root = ListAll(Api("ns/data", "/tree"), writer);
  std::vector<std::string> got = Paths(root);
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, (std::vector<std::string>{"directory:models", "file:small.bin"}));
  // Recursive: every file with its fields.
  const auto all = ListAll(Api("ns/data", "/tree?recursive=true"), writer);
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0]["path"], "models/big.txt");  // bytewise order
  EXPECT_EQ(all[0]["type"], "file");
  EXPECT_EQ(all[0]["size"], big_data.size());
  EXPECT_EQ(all[0]["xetHash"], big.file_hash.ToHex());
  EXPECT_EQ(all[0]["mtime"], "2023-11-14T22:13:20.123Z");
  EXPECT_EQ(all[0]["contentType"], "text/plain");
  EXPECT_TRUE(IsIsoMillis(all[0]["uploadedAt"].get<std::string>()));
  EXPECT_EQ(all[1]["path"], "small.bin");
  EXPECT_EQ(all[1]["mtime"], all[1]["uploadedAt"]);  // no client mtime: the upload time
  EXPECT_FALSE(all[1].contains("contentType"));
  // A prefix, with and without a trailing slash, and one matching nothing.
  EXPECT_EQ(Paths(ListAll(Api("ns/data", "/tree/models"), writer)),
            std::vector<std::string>{"file:models/big.txt"});
  EXPECT_EQ(Paths(ListAll(Api("ns/data", "/tree/models/"), writer)),
            std::vector<std::string>{"file:models/big.txt"});
  EXPECT_EQ(Paths(ListAll(Api("ns/data", "/tree/nothing/here?recursive=true"), writer)),
            std::vector<std::string>{});
  // The Python client encodes the prefix as one segment.
  EXPECT_EQ(Paths(ListAll(Api("ns/data", "/tree/models%2F"), writer)),
            std::vector<std::string>{"file:models/big.txt"});

  // paths-info: present paths, in a shape like the tree's; missing ones omitted.
  const auto pi = Fetch("POST", Api("ns/data", "/paths-info"), {Bearer(writer), kJson},
                        R"({"paths":["small.bin","missing.bin","models/big.txt","small.bin"]})");
  ASSERT_EQ(pi.status, 200) << pi.body;
  const json pij = json::parse(pi.body);
  ASSERT_EQ(pij.size(), 2u) << pij;
  std::map<std::string, json> by_path;
  for (const json& e : pij) by_path[e["path"]] = e;
  EXPECT_EQ(by_path["small.bin"]["xetHash"], small.file_hash.ToHex());
  EXPECT_EQ(by_path["small.bin"]["size"], small_data.size());
  EXPECT_EQ(by_path["models/big.txt"]["type"], "file");

  // resolve with the file-info Accept (as the JS client asks, Range bytes=0-0 included).
  const auto fi = Fetch("GET", Resolve("ns/data", "models/big.txt"),
                        {Bearer(writer), kFileInfoAccept, "Range: bytes=0-0"});
  ASSERT_EQ(fi.status, 200) << fi.body;
  EXPECT_NE(Header(fi, "content-type").find("application/vnd.xet-fileinfo+json"),
            std::string::npos);
  const std::string hex = big.file_hash.ToHex();
  EXPECT_EQ(Header(fi, "x-xet-hash"), hex);
  EXPECT_EQ(Header(fi, "x-linked-size"), std::to_string(big_data.size()));
  EXPECT_EQ(Header(fi, "etag"), "\"" + hex + "\"");
  EXPECT_EQ(Header(fi, "x-linked-etag"), "\"" + hex + "\"");
  EXPECT_EQ(Header(fi, "accept-ranges"), "bytes");
  const std::string refresh = Url("/api/buckets/ns/data/xet-read-token");
  const std::string recon = Url("/v1/reconstructions/" + hex);
  EXPECT_EQ(Header(fi, "link"), "<" + refresh + ">; rel=\"xet-auth\", <" + recon +
                                    ">; rel=\"xet-reconstruction-info\"");
  EXPECT_EQ(json::parse(fi.body), json({{"hash", hex},
                                        {"size", big_data.size()},
                                        {"etag", "\"" + hex + "\""},
                                        {"refreshUrl", refresh},
                                        {"reconstructionUrl", recon}}));
  // The links work: a read token from xet-auth reconstructs the file.
  const json rt = XetToken("ns/data", "read", writer);
  const auto rec = Fetch("GET", Url("/v2/reconstructions/" + hex),
                         {Bearer(rt["accessToken"].get<std::string>())});
  EXPECT_EQ(rec.status, 200) << rec.body;

  // Plain GET: the bytes, with the entry's content type.
  const auto whole = Fetch("GET", Resolve("ns/data", "models/big.txt"), {Bearer(writer)});
  ASSERT_EQ(whole.status, 200);
  EXPECT_EQ(Header(whole, "content-type"), "text/plain");
  EXPECT_EQ(Header(whole, "content-length"), std::to_string(big_data.size()));
  EXPECT_EQ(whole.headers.count("transfer-encoding"), 0u);
  EXPECT_EQ(Header(whole, "x-xet-hash"), hex);
  EXPECT_TRUE(whole.body == Bytes(big_data)) << "downloaded bytes differ";
  const auto sm = Fetch("GET", Resolve("ns/data", "small.bin"), {Bearer(writer)});
  EXPECT_EQ(Header(sm, "content-type"), "application/octet-stream");
  EXPECT_TRUE(sm.body == Bytes(small_data));
  // HEAD: Content-Length is the size (huggingface_hub reads it), no body.
  const auto head = Fetch("HEAD", Resolve("ns/data", "models/big.txt"), {Bearer(writer)});
  EXPECT_EQ(head.status, 200);
  EXPECT_EQ(Header(head, "content-length"), std::to_string(big_data.size()));
  EXPECT_TRUE(head.body.empty());
  // The Python client percent-encodes the whole path as one segment.
  const auto encoded = Fetch("HEAD", Resolve("ns/data", "models%2Fbig.txt"), {Bearer(writer)});
  EXPECT_EQ(encoded.status, 200);
  EXPECT_EQ(Header(encoded, "x-xet-hash"), hex);
}

TEST_F(HubApiTest, ResolveServesRanges) {
  CreateOk("ns/r", false);
  const auto data = testing::TextLikeBytes(2'500'000, 5);
  const auto a = Upload("ns/r", admin_, data);
  BatchOk("ns/r", admin_, {AddFile("f", a.file_hash)});
  const std::string all = Bytes(data);
  const uint64_t n = data.size();
  struct Case {
    std::string range;
    uint64_t first, last;
  };
  const Case cases[] = {{"bytes=0-0", 0, 0},
                        {"bytes=0-99", 0, 99},
                        {"bytes=100000-1200000", 100000, 1200000},
                        {"bytes=" + std::to_string(n - 10) + "-", n - 10, n - 1},
                        {"bytes=2000000-99999999", 2000000, n - 1},
                        {"bytes=-500", n - 500, n - 1},
                        {"bytes=-99999999", 0, n - 1}};
  for (const Case& c : cases) {
    const auto r = Fetch("GET", Resolve("ns/r", "f"), {"Range: " + c.range});  // anonymous
    ASSERT_EQ(r.status, 206) << c.range << ": " << r.body.substr(0, 200);
    EXPECT_EQ(Header(r, "content-range"), "bytes " + std::to_string(c.first) + "-" +
                                              std::to_string(c.last) + "/" + std::to_string(n))
        << c.range;
    EXPECT_EQ(Header(r, "content-length"), std::to_string(c.last - c.first + 1)) << c.range;
    EXPECT_TRUE(r.body == all.substr(c.first, c.last - c.first + 1)) << c.range;
  }
  for (const std::string& range :
       std::vector<std::string>{"bytes=" + std::to_string(n) + "-", "bytes=99999999-"}) {
    const auto r = Fetch("GET", Resolve("ns/r", "f"), {"Range: " + range});
    EXPECT_EQ(r.status, 416) << range;
    EXPECT_EQ(Header(r, "content-range"), "bytes */" + std::to_string(n));
  }
  for (const char* bad : {"bytes=5-1", "bytes=a-b", "items=0-1", "bytes=-"}) {
    EXPECT_EQ(Fetch("GET", Resolve("ns/r", "f"), {std::string("Range: ") + bad}).status, 400)
        << bad;
  }
  // Several ranges: the whole file (a server may ignore such a Range).
  const auto multi = Fetch("GET", Resolve("ns/r", "f"), {"Range: bytes=0-1,5-6"});
  EXPECT_EQ(multi.status, 200);
  EXPECT_EQ(multi.body.size(), n);
}

TEST_F(HubApiTest, EmptyFileResolvesToZeroBytes) {
  CreateOk("ns/e", false);
  const auto a = Upload("ns/e", admin_, {});
  BatchOk("ns/e", admin_, {AddFile("empty", a.file_hash)});
  const auto r = Fetch("GET", Resolve("ns/e", "empty"), {});
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(Header(r, "content-length"), "0");
  EXPECT_TRUE(r.body.empty());
  EXPECT_EQ(Header(r, "x-linked-size"), "0");
  EXPECT_EQ(Fetch("GET", Resolve("ns/e", "empty"), {"Range: bytes=0-0"}).status, 416);
}

TEST_F(HubApiTest, ResolveMissingEntryAndMissingBucketAreDistinct) {
  CreateOk("ns/r", false);
  const auto entry = Fetch("GET", Resolve("ns/r", "no/such/file"), {kFileInfoAccept});
  EXPECT_EQ(entry.status, 404);
  EXPECT_EQ(Header(entry, "x-error-code"), "EntryNotFound");  // the JS client's "null"
  const auto bucket = Fetch("GET", Resolve("ns/none", "f"), Auth(admin_));
  EXPECT_EQ(bucket.status, 404);
  EXPECT_EQ(Header(bucket, "x-error-code"), "RepoNotFound");
}

TEST_F(HubApiTest, HostilePathsAre400Everywhere) {
  CreateOk("ns/h", false);
  // As they reach the server (the client sends them unnormalized).
  const std::vector<std::string> paths = {"../x",  "a/../b", "a//b",     "a/./b", "%5C",
                                          "a%5Cb", "a%00b",  "%2E%2E/x", "a/",    "x%0Ay"};
  for (const std::string& p : paths) {
    const auto r = Fetch("GET", Resolve("ns/h", p), {});
    EXPECT_EQ(r.status, 400) << p << ": " << r.body;
    EXPECT_TRUE(json::parse(r.body, nullptr, false).contains("error")) << p;
    const auto t = Fetch("GET", Api("ns/h", "/tree/" + p), {});
    if (p != "a/") {  // as a tree prefix, "a/" is directory a
      EXPECT_EQ(t.status, 400) << "tree " << p << ": " << t.body;
    }
  }
  EXPECT_EQ(Fetch("GET", Resolve("ns/h", ""), {}).status, 400);
  EXPECT_EQ(Fetch("GET", Resolve("ns/h", std::string(1025, 'p')), {}).status, 400);
  // The same rules in a batch: each hostile path fails alone.
  std::vector<json> ops;
  for (const std::string& p :
       std::vector<std::string>{"../x", "a//b", "a\\b", std::string("a\0b", 3), "/abs", ""}) {
    ops.push_back(DeleteFile(p));
  }
  ops.push_back(DeleteFile("fine"));
  const auto r = Batch("ns/h", admin_, ops);
  ASSERT_EQ(r.status, 422) << r.body;
  const json j = json::parse(r.body);
  EXPECT_EQ(j["processed"], ops.size());
  EXPECT_EQ(j["succeeded"], 1);
  EXPECT_EQ(j["failed"].size(), ops.size() - 1);
  EXPECT_EQ(j["failed"][0]["path"], "../x");
}

// ---------------------------------------------------------------------------------------
// batch semantics and input errors

TEST_F(HubApiTest, BatchReportsPartialFailuresAnd422) {
  CreateOk("ns/b", true);
  const auto a = Upload("ns/b", admin_, testing::RandomBytes(3000, 6));
  const Hash unknown = *Hash::FromHex(std::string(64, '7'));
  const auto r = Batch("ns/b", admin_,
                       {AddFile("ok.bin", a.file_hash),
                        AddFile("unknown.bin", unknown),
                        {{"type", "explode"}, {"path", "x"}},
                        {{"type", "copyFile"},
                         {"path", "c.bin"},
                         {"xetHash", a.file_hash.ToHex()},
                         {"sourceRepoType", "model"},
                         {"sourceRepoId", "org/model"}},
                        {{"type", "addFile"}, {"path", "nohash.bin"}},
                        DeleteFile("never-existed")});
  ASSERT_EQ(r.status, 422) << r.body;
  const json j = json::parse(r.body);
  EXPECT_EQ(j["success"], false);
  EXPECT_EQ(j["processed"], 6);
  EXPECT_EQ(j["succeeded"], 2);  // ok.bin and the idempotent delete
  std::vector<std::string> failed;
  for (const json& f : j["failed"]) {
    failed.push_back(f["path"]);
    EXPECT_FALSE(f["error"].get<std::string>().empty()) << f;
  }
  EXPECT_EQ(failed, (std::vector<std::string>{"unknown.bin", "x", "c.bin", "nohash.bin"}));
  // Only the valid operation was applied.
  EXPECT_EQ(Paths(ListAll(Api("ns/b", "/tree?recursive=true"), admin_)),
            std::vector<std::string>{"file:ok.bin"});
}

TEST_F(HubApiTest, UnparseableBatchBodiesApplyNothing) {
  CreateOk("ns/b", true);
  const auto a = Upload("ns/b", admin_, testing::RandomBytes(3000, 7));
  const std::string good = AddFile("f.bin", a.file_hash).dump();
  for (const std::string& body :
       std::vector<std::string>{good + "\nnot json", good + "\n[1,2]", "{\"type\":", good + " 5",
                                std::string("{\"path\":\"\xff\"}")}) {
    const auto r = Fetch("POST", Api("ns/b", "/batch"), {Bearer(admin_), kNdjson}, body);
    EXPECT_EQ(r.status, 400) << body << ": " << r.body;
  }
  EXPECT_TRUE(ListAll(Api("ns/b", "/tree?recursive=true"), admin_).empty());
  // An empty batch is a no-op success.
  const auto empty = Fetch("POST", Api("ns/b", "/batch"), {Bearer(admin_), kNdjson}, "");
  EXPECT_EQ(empty.status, 200) << empty.body;
  EXPECT_EQ(json::parse(empty.body)["processed"], 0);
}

TEST_F(HubApiTest, OversizedBatchesAre413) {
  CreateOk("ns/b", true);
  std::string body;
  for (int i = 0; i <= 100'000; ++i)
    body += R"({"type":"deleteFile","path":"f)" + std::to_string(i) + "\"}\n";
  const auto r = Fetch("POST", Api("ns/b", "/batch"), {Bearer(admin_), kNdjson}, body);
  EXPECT_EQ(r.status, 413) << r.body.substr(0, 200);
  const auto big = Fetch("POST", Api("ns/b", "/batch"), {Bearer(admin_), kNdjson},
                         std::string((64 << 20) + 1, ' '));
  EXPECT_EQ(big.status, 413);
}

TEST_F(HubApiTest, BatchNeedsWriteOnThatBucket) {
  CreateOk("ns/a", false);
  CreateOk("ns/b", false);
  const std::string a_writer = Token("write", "ns/a");
  const std::vector<json> ops = {DeleteFile("x")};
  EXPECT_EQ(Batch("ns/a", "", ops).status, 401);
  EXPECT_EQ(Batch("ns/a", Token("read", "ns/a"), ops).status, 403);
  EXPECT_EQ(Batch("ns/b", a_writer, ops).status, 403);
  EXPECT_EQ(Batch("ns/a", a_writer, ops).status, 200);
  EXPECT_EQ(Batch("ns/zz", admin_, ops).status, 404);
  // A CAS write token for bucket A is a token for A only.
  const std::string cas_a = XetToken("ns/a", "write", a_writer)["accessToken"];
  EXPECT_EQ(Batch("ns/a", cas_a, ops).status, 200);
  EXPECT_EQ(Batch("ns/b", cas_a, ops).status, 403);
}

// ---------------------------------------------------------------------------------------
// scopes and visibility end to end

TEST_F(HubApiTest, AWriteTokenForOneBucketCannotWriteAnother) {
  CreateOk("ns/a", true);
  CreateOk("ns/b", true);
  const std::string a_writer = Token("write", "ns/a");
  const std::string b_writer = Token("write", "ns/b");
  EXPECT_EQ(Fetch("GET", Api("ns/b", "/xet-write-token"), Auth(a_writer)).status, 403);
  // A file uploaded through A's CAS token is A's: B's writer cannot add it to B by hash.
  const auto a = Upload("ns/a", a_writer, testing::RandomBytes(4000, 8));
  const auto r = Batch("ns/b", b_writer, {AddFile("stolen.bin", a.file_hash)});
  EXPECT_EQ(r.status, 422) << r.body;
  EXPECT_EQ(json::parse(r.body)["failed"][0]["path"], "stolen.bin");
  BatchOk("ns/a", a_writer, {AddFile("mine.bin", a.file_hash)});
  EXPECT_TRUE(ListAll(Api("ns/b", "/tree?recursive=true"), admin_).empty());
}

TEST_F(HubApiTest, AReadTokenForOneBucketCannotReachFilesOnlyInAnother) {
  CreateOk("ns/a", true);
  CreateOk("ns/b", true);
  const auto data = testing::RandomBytes(200'000, 9);
  const auto b = Upload("ns/b", admin_, data);
  BatchOk("ns/b", admin_, {AddFile("secret.bin", b.file_hash)});
  const std::string a_reader = Token("read", "ns/a");
  const std::string b_reader = Token("read", "ns/b");
  const std::string hex = b.file_hash.ToHex();
  const std::string chunk = b.chunks[0].hash.ToHex();

  // Through the bucket API.
  EXPECT_EQ(Fetch("GET", Resolve("ns/b", "secret.bin"), Auth(a_reader)).status, 404);
  EXPECT_EQ(Fetch("GET", Api("ns/b", "/xet-read-token"), Auth(a_reader)).status, 404);
  EXPECT_EQ(Fetch("GET", Api("ns/b", "/tree"), Auth(a_reader)).status, 404);
  // Through the CAS API with A's CAS read token, knowing the hashes.
  const std::string cas_a = XetToken("ns/a", "read", a_reader)["accessToken"];
  const std::string cas_b = XetToken("ns/b", "read", b_reader)["accessToken"];
  for (const std::string& path : {"/v2/reconstructions/" + hex, "/v1/reconstructions/" + hex,
                                  "/v1/chunks/default-merkledb/" + chunk}) {
    EXPECT_EQ(Fetch("GET", Url(path), {Bearer(cas_a)}).status, 404) << path;
    EXPECT_EQ(Fetch("GET", Url(path), {Bearer(cas_b)}).status, 200) << path;  // control
  }
  EXPECT_EQ(Fetch("HEAD", Url("/v1/files/" + hex), {Bearer(cas_a)}).status, 404);
  EXPECT_EQ(Fetch("HEAD", Url("/v1/files/" + hex), {Bearer(cas_b)}).status, 200);
  // B's reader gets the bytes.
  EXPECT_TRUE(Fetch("GET", Resolve("ns/b", "secret.bin"), Auth(b_reader)).body == Bytes(data));
}

TEST_F(HubApiTest, DeletingTheLastEntryHidesTheFileFromTheBucketsReaders) {
  CreateOk("ns/v", true);
  const auto a = Upload("ns/v", admin_, testing::RandomBytes(50'000, 10));
  BatchOk("ns/v", admin_, {AddFile("one", a.file_hash), AddFile("two", a.file_hash)});
  const std::string reader = Token("read", "ns/v");
  const std::string hex = a.file_hash.ToHex();
  auto reconstruct = [&] {
    const std::string cas = XetToken("ns/v", "read", reader)["accessToken"];
    return Fetch("GET", Url("/v2/reconstructions/" + hex), {Bearer(cas)}).status;
  };
  EXPECT_EQ(reconstruct(), 200);
  BatchOk("ns/v", admin_, {DeleteFile("one")});
  EXPECT_EQ(reconstruct(), 200);  // "two" still references it
  EXPECT_EQ(Fetch("GET", Resolve("ns/v", "one"), Auth(reader)).status, 404);
  BatchOk("ns/v", admin_, {DeleteFile("two")});
  EXPECT_EQ(reconstruct(), 404);
  const auto gone = Fetch("GET", Resolve("ns/v", "two"), Auth(reader));
  EXPECT_EQ(gone.status, 404);
  EXPECT_EQ(Header(gone, "x-error-code"), "EntryNotFound");
  const json info = json::parse(Fetch("GET", Api("ns/v"), Auth(reader)).body);
  EXPECT_EQ(info["totalFiles"], 0);
  EXPECT_EQ(info["size"], 0);
}

// ---------------------------------------------------------------------------------------
// server-side copies

TEST_F(HubApiTest, CopyFileNeedsReadAccessToTheSource) {
  CreateOk("ns/src", true);
  CreateOk("ns/dst", true);
  const auto data = testing::RandomBytes(30'000, 11);
  const auto a = Upload("ns/src", admin_, data);
  BatchOk("ns/src", admin_, {AddFile("orig.bin", a.file_hash)});
  const json copy = {{"type", "copyFile"},
                     {"path", "copy.bin"},
                     {"xetHash", a.file_hash.ToHex()},
                     {"sourceRepoType", "bucket"},
                     {"sourceRepoId", "ns/src"}};
  // A writer of dst who cannot read src: the copy fails as if src did not exist.
  const auto denied = Batch("ns/dst", Token("write", "ns/dst"), {copy});
  ASSERT_EQ(denied.status, 422) << denied.body;
  EXPECT_NE(json::parse(denied.body)["failed"][0]["error"].get<std::string>().find("not found"),
            std::string::npos);
  // A hash the source bucket does not hold fails too.
  json wrong = copy;
  wrong["xetHash"] = std::string(64, '5');
  EXPECT_EQ(Batch("ns/dst", admin_, {wrong}).status, 422);
  // With read on src and write on dst: copied, and dst's readers can download it.
  BatchOk("ns/dst", admin_, {copy});
  const std::string dst_reader = Token("read", "ns/dst");
  EXPECT_TRUE(Fetch("GET", Resolve("ns/dst", "copy.bin"), Auth(dst_reader)).body == Bytes(data));
  const std::string cas = XetToken("ns/dst", "read", dst_reader)["accessToken"];
  EXPECT_EQ(Fetch("GET", Url("/v2/reconstructions/" + a.file_hash.ToHex()), {Bearer(cas)}).status,
            200);
}

TEST_F(HubApiTest, MovePrefixAndCopyPrefixAreMetadataOperations) {
  CreateOk("ns/p", true);
  CreateOk("ns/q", true);
  const auto a = Upload("ns/p", admin_, testing::RandomBytes(10'000, 12));
  const auto b = Upload("ns/p", admin_, testing::RandomBytes(20'000, 13));
  BatchOk("ns/p", admin_,
          {AddFile("dir/a", a.file_hash), AddFile("dir/sub/b", b.file_hash),
           AddFile("dir2/keep", a.file_hash), AddFile("dirx", b.file_hash)});
  BatchOk("ns/p", admin_, {{{"type", "movePrefix"}, {"from", "dir"}, {"to", "moved/here"}}});
  EXPECT_EQ(Paths(ListAll(Api("ns/p", "/tree?recursive=true"), admin_)),
            (std::vector<std::string>{"file:dir2/keep", "file:dirx", "file:moved/here/a",
                                      "file:moved/here/sub/b"}));
  const auto moved = Fetch("GET", Resolve("ns/p", "moved/here/sub/b"), Auth(admin_));
  EXPECT_TRUE(moved.body == Bytes(testing::RandomBytes(20'000, 13)));

  // Copy a directory into its own subdirectory: the copy reads the source as it was.
  BatchOk("ns/p", admin_, {{{"type", "copyPrefix"}, {"from", "dir2"}, {"to", "dir2/nested"}}});
  EXPECT_EQ(Paths(ListAll(Api("ns/p", "/tree/dir2?recursive=true"), admin_)),
            (std::vector<std::string>{"file:dir2/keep", "file:dir2/nested/keep"}));
  // A move into itself, or of nothing, fails alone.
  const auto bad = Batch("ns/p", admin_,
                         {{{"type", "movePrefix"}, {"from", "dir2"}, {"to", "dir2/x"}},
                          {{"type", "movePrefix"}, {"from", "nothing"}, {"to", "x"}}});
  EXPECT_EQ(bad.status, 422) << bad.body;
  EXPECT_EQ(json::parse(bad.body)["failed"].size(), 2u) << bad.body;
  BatchOk("ns/p", admin_, {DeleteFile("dir2/nested/keep")});

  // Copy a directory from p into q (another bucket): p is unchanged.
  BatchOk(
      "ns/q", admin_,
      {{{"type", "copyPrefix"}, {"from", "moved"}, {"to", "backup"}, {"sourceRepoId", "ns/p"}}});
  EXPECT_EQ(Paths(ListAll(Api("ns/q", "/tree?recursive=true"), admin_)),
            (std::vector<std::string>{"file:backup/here/a", "file:backup/here/sub/b"}));
  EXPECT_EQ(ListAll(Api("ns/p", "/tree?recursive=true"), admin_).size(), 4u);
  const std::string q_reader = Token("read", "ns/q");
  EXPECT_TRUE(Fetch("GET", Resolve("ns/q", "backup/here/a"), Auth(q_reader)).body ==
              Bytes(testing::RandomBytes(10'000, 12)));
  // Copying from a bucket the caller cannot read fails alone.
  const auto denied = Batch(
      "ns/q", Token("write", "ns/q"),
      {{{"type", "copyPrefix"}, {"from", "moved"}, {"to", "again"}, {"sourceRepoId", "ns/p"}}});
  EXPECT_EQ(denied.status, 422) << denied.body;
}

// ---------------------------------------------------------------------------------------
// listings

TEST_F(HubApiTest, TreePagesFollowLinkHeadersAndMatchTheUploadedSet) {
  CreateOk("ns/t", false);
  const auto a = Upload("ns/t", admin_, testing::RandomBytes(1000, 14));
  std::set<std::string> paths;  // std::string orders bytewise, as the listing does
  std::vector<json> ops;
  for (int i = 0; i < 25; ++i) {
    const std::string p = (i % 3 == 0   ? "d1/"
                           : i % 3 == 1 ? "d2/sub/"
                                        : "") +
                          std::string("f") + std::to_string(i) + (i % 4 == 0 ? " space ü" : "");
    paths.insert(p);
    ops.push_back(AddFile(p, a.file_hash));
  }
  BatchOk("ns/t", admin_, ops);
  std::vector<std::string> want;
  for (const auto& p : paths) want.push_back("file:" + p);

  int pages = 0;
  const auto items = ListAll(Api("ns/t", "/tree?recursive=true&limit=10"), "", &pages);
  EXPECT_EQ(pages, 3);
  EXPECT_EQ(Paths(items), want);
  // The limit is kept in the next links; limits above the maximum are lowered, not refused.
  EXPECT_EQ(Paths(ListAll(Api("ns/t", "/tree?recursive=true&limit=999999"), "")), want);

  // Non-recursive root: top-level files and one item per directory, over pages of 2.
  std::set<std::string> top;
  for (const auto& p : paths) {
    const size_t slash = p.find('/');
    top.insert(slash == std::string::npos ? "file:" + p : "directory:" + p.substr(0, slash));
  }
  auto got = Paths(ListAll(Api("ns/t", "/tree?recursive=false&limit=2"), ""));
  EXPECT_EQ(std::set<std::string>(got.begin(), got.end()), top);
  EXPECT_EQ(got.size(), top.size());  // nothing twice across pages
  // Inside d2: one directory.
  EXPECT_EQ(Paths(ListAll(Api("ns/t", "/tree/d2"), "")),
            std::vector<std::string>{"directory:d2/sub"});

  for (const char* bad :
       {"/tree?recursive=maybe", "/tree?limit=0", "/tree?limit=-3", "/tree?cursor=%FF%FEgarbage"}) {
    EXPECT_EQ(Fetch("GET", Api("ns/t", bad), {}).status, 400) << bad;
  }
}

TEST_F(HubApiTest, PathsInfoRejectsBadBodies) {
  CreateOk("ns/pi", false);
  std::string many = R"({"paths":[)";
  for (int i = 0; i <= 1000; ++i)
    many += (i ? "," : "") + std::string("\"p") + std::to_string(i) + "\"";
  many += "]}";
  for (const std::string& body : std::vector<std::string>{
           std::string("nope"), std::string("[]"), std::string("{}"),
           std::string(R"({"paths":"a"})"), std::string(R"({"paths":[1]})"),
           std::string(R"({"paths":["../x"]})"), std::string(R"({"paths":["a//b"]})"),
           std::string(R"({"paths":["a\u0000b"]})"), many}) {
    const auto r = Fetch("POST", Api("ns/pi", "/paths-info"), {kJson}, body);
    EXPECT_EQ(r.status, 400) << body.substr(0, 80) << ": " << r.body;
  }
  const auto ok =
      Fetch("POST", Api("ns/pi", "/paths-info"), {kJson}, R"({"paths":[],"expand":true})");
  EXPECT_EQ(ok.status, 200);
  EXPECT_EQ(ok.body, "[]");
  CreateOk("ns/private", true);
  EXPECT_EQ(Fetch("POST", Api("ns/private", "/paths-info"), {kJson}, R"({"paths":[]})").status,
            401);
}

// ---------------------------------------------------------------------------------------
// concurrency

// Writers race batches that point the same 40 paths at their own file; readers list while
// they do. Every listing must show all 40 paths at one writer's file (a whole batch), and
// the end state is one writer's batch entirely. (Each file also has an entry of its own
// under anchor/, so overwriting p/* never drops a file's last reference, which would make
// it invisible to the bucket and fail that writer's next batch: see the next test.)
TEST_F(HubApiTest, ConcurrentBatchesOnTheSamePathsNeverInterleave) {
  CreateOk("ns/c", true);
  constexpr int kWriters = 6, kRounds = 4, kPaths = 40;
  std::vector<UploadArtifacts> files;
  std::vector<json> anchors;
  uint64_t anchor_bytes = 0;
  for (int w = 0; w < kWriters; ++w) {
    files.push_back(Upload("ns/c", admin_, testing::RandomBytes(2000 + w, 100 + w)));
    anchors.push_back(AddFile("anchor/" + std::to_string(w), files.back().file_hash));
    anchor_bytes += files.back().size;
  }
  BatchOk("ns/c", admin_, anchors);
  std::set<std::string> hashes;
  for (const auto& f : files) hashes.insert(f.file_hash.ToHex());
  std::atomic<bool> done{false};
  std::atomic<int> bad_snapshots{0}, snapshots{0}, failed_batches{0};
  std::vector<std::thread> threads;
  for (int w = 0; w < kWriters; ++w) {
    threads.emplace_back([&, w] {
      std::vector<json> ops;
      for (int p = 0; p < kPaths; ++p)
        ops.push_back(AddFile("p/" + std::to_string(p), files[w].file_hash));
      for (int round = 0; round < kRounds; ++round) {
        const auto r = Batch("ns/c", admin_, ops);
        if (r.status != 200) {
          ++failed_batches;
          ADD_FAILURE() << "batch: " << r.status << " " << r.body.substr(0, 300);
        }
      }
    });
  }
  std::thread reader([&] {
    while (!done.load()) {
      const auto r =
          Fetch("GET", Api("ns/c", "/tree/p?recursive=true&limit=1000"), {Bearer(admin_)});
      if (r.status != 200) {
        ++bad_snapshots;
        continue;
      }
      const json items = json::parse(r.body);
      if (items.empty()) continue;  // before the first commit
      ++snapshots;
      std::set<std::string> seen;
      for (const json& i : items) seen.insert(i["xetHash"].get<std::string>());
      if (items.size() != kPaths || seen.size() != 1 || !hashes.count(*seen.begin())) {
        ++bad_snapshots;
      }
    }
  });
  for (auto& t : threads) t.join();
  done = true;
  reader.join();
  EXPECT_EQ(failed_batches.load(), 0);
  EXPECT_EQ(bad_snapshots.load(), 0) << "of " << snapshots.load() << " snapshots";
  const auto final_items = ListAll(Api("ns/c", "/tree/p?recursive=true"), admin_);
  ASSERT_EQ(final_items.size(), static_cast<size_t>(kPaths));
  std::set<std::string> final_hashes;
  for (const json& i : final_items) final_hashes.insert(i["xetHash"].get<std::string>());
  EXPECT_EQ(final_hashes.size(), 1u);
  EXPECT_TRUE(hashes.count(*final_hashes.begin()));
  // The totals match: the anchors plus the winner's size times the path count.
  const json info = json::parse(Fetch("GET", Api("ns/c"), Auth(admin_)).body);
  EXPECT_EQ(info["totalFiles"], kPaths + kWriters);
  uint64_t size = 0;
  for (const auto& f : files) {
    if (f.file_hash.ToHex() == *final_hashes.begin()) size = f.size;
  }
  EXPECT_EQ(info["size"], anchor_bytes + size * kPaths);
}

// Overwriting a path whose entry was a file's last reference in the bucket takes the file's
// visibility with it (as a delete does): adding it back by hash then fails until its shard
// is uploaded again through the bucket's write token.
TEST_F(HubApiTest, OverwritingTheLastReferenceHidesTheOldFile) {
  CreateOk("ns/o", true);
  const auto old_file = Upload("ns/o", admin_, testing::RandomBytes(3000, 20));
  const auto new_file = Upload("ns/o", admin_, testing::RandomBytes(3000, 21));
  BatchOk("ns/o", admin_, {AddFile("p", old_file.file_hash)});
  BatchOk("ns/o", admin_, {AddFile("p", new_file.file_hash)});
  const std::string cas = XetToken("ns/o", "read", admin_)["accessToken"];
  EXPECT_EQ(
      Fetch("GET", Url("/v2/reconstructions/" + old_file.file_hash.ToHex()), {Bearer(cas)}).status,
      404);
  EXPECT_EQ(
      Fetch("GET", Url("/v2/reconstructions/" + new_file.file_hash.ToHex()), {Bearer(cas)}).status,
      200);
  EXPECT_EQ(Batch("ns/o", admin_, {AddFile("q", old_file.file_hash)}).status, 422);
  // Uploading the shard again (idempotent) makes it visible again.
  Upload("ns/o", admin_, testing::RandomBytes(3000, 20));
  BatchOk("ns/o", admin_, {AddFile("q", old_file.file_hash)});
}

}  // namespace
}  // namespace xet
