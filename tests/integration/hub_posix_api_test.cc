// The xetstore extensions of the bucket API end to end, on a real `xetstore serve` over
// loopback: POSIX metadata on files, explicit directories, symbolic links, special files
// (FIFOs, sockets, device nodes), setMetadata,
// movePrefix's noReplace and the bucket generation, as raw HTTP; malformed posix objects
// fail their operation with a clear error and store nothing.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "support/curl_client.h"
#include "support/server_process.h"
#include "support/test_support.h"
#include "support/xet_fixtures.h"

namespace xet {
namespace {

using nlohmann::json;
using testing::Bearer;
using testing::Fetch;
using testing::HttpResult;
using testing::ServerProcess;

const std::string kZeros(64, '0');

class HubPosixApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = std::make_unique<ServerProcess>(testing::MakeTempDir("hubposix"));
    admin_ = server_->AdminToken();
    const auto r = Fetch("POST", Api(""), {Bearer(admin_), "Content-Type: application/json"},
                         R"({"private": true})");
    ASSERT_EQ(r.status, 200) << r.body;
    // One real file, uploaded with the bucket's write token.
    const auto t = Fetch("GET", Api("/xet-write-token"), {Bearer(admin_)});
    ASSERT_EQ(t.status, 200) << t.body;
    const std::string cas = json::parse(t.body)["accessToken"];
    data_ = testing::PrepareUpload(testing::RandomBytes(300'000, 4));
    for (const auto& x : data_.xorbs) {
      ASSERT_EQ(Fetch("POST", Url("/v1/xorbs/default/" + x.hash.ToHex()), {Bearer(cas)},
                      testing::AsString(x.bytes))
                    .status,
                200);
    }
    ASSERT_EQ(Fetch("POST", Url("/v1/shards"), {Bearer(cas)}, data_.shard_bytes).status, 200);
    hash_ = data_.file_hash.ToHex();
  }

  std::string Url(const std::string& path) const { return server_->url() + path; }
  std::string Api(const std::string& rest) const { return Url("/api/buckets/ns/b" + rest); }

  HttpResult Batch(const std::vector<std::string>& lines) {
    std::string body;
    for (const auto& l : lines) body += l + "\n";
    return Fetch("POST", Api("/batch"), {Bearer(admin_), "Content-Type: application/x-ndjson"},
                 body);
  }
  json Get(const std::string& rest) {
    const auto r = Fetch("GET", Api(rest), {Bearer(admin_)});
    EXPECT_EQ(r.status, 200) << rest << ": " << r.body;
    return r.status == 200 ? json::parse(r.body) : json();
  }
  json PathsInfo(const std::vector<std::string>& paths) {
    const auto r =
        Fetch("POST", Api("/paths-info"), {Bearer(admin_), "Content-Type: application/json"},
              json{{"paths", paths}}.dump());
    EXPECT_EQ(r.status, 200) << r.body;
    return r.status == 200 ? json::parse(r.body) : json();
  }
  uint64_t Generation() { return Get("").value("generation", uint64_t{999}); }

  std::unique_ptr<ServerProcess> server_;
  std::string admin_;
  testing::UploadArtifacts data_;
  std::string hash_;
};

std::vector<std::string> Names(const json& items) {
  std::vector<std::string> out;
  for (const json& i : items) out.push_back(i.value("type", "?") + ":" + i.value("path", "?"));
  return out;
}

TEST_F(HubPosixApiTest, PosixDirectoriesAndLinksRoundTrip) {
  EXPECT_EQ(Generation(), 0u);
  const json file_posix = {{"mode", 0100640},
                           {"uid", 1000},
                           {"gid", 100},
                           {"atime", 1700000000123},
                           {"xattrs", {{"user.bin", "AP8Q"}, {"user.e", ""}}}};
  const json dir_posix = {{"mode", 040750}, {"uid", 1}, {"gid", 2}};
  const json link_posix = {{"mode", 0120777}, {"uid", 0}, {"gid", 0}, {"target", "../f"}};
  const auto r = Batch(
      {json{{"type", "addFile"},
            {"path", "f"},
            {"xetHash", hash_},
            {"mtime", 5000},
            {"posix", file_posix}}
           .dump(),
       json{{"type", "addDirectory"}, {"path", "d"}, {"mtime", 7000}, {"posix", dir_posix}}.dump(),
       json{{"type", "addDirectory"}, {"path", "d/empty"}}.dump(),
       json{{"type", "addFile"}, {"path", "d/l"}, {"xetHash", kZeros}, {"posix", link_posix}}
           .dump(),
       json{{"type", "addFile"}, {"path", "plain/x"}, {"xetHash", hash_}}.dump()});
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(Generation(), 1u);

  const json root = Get("/tree");
  EXPECT_EQ(Names(root), (std::vector<std::string>{"directory:d", "file:f", "directory:plain"}));
  EXPECT_EQ(root[0]["posix"], dir_posix);
  EXPECT_EQ(root[0]["mtime"], "1970-01-01T00:00:07.000Z");
  EXPECT_EQ(root[1]["posix"], file_posix);
  EXPECT_EQ(root[1]["size"], data_.size);
  // A directory with only entries below it is listed as before: type and path only.
  EXPECT_EQ(root[2], json::parse(R"({"type":"directory","path":"plain"})"));
  // A file without posix carries none.
  const json plain = Get("/tree/plain");
  ASSERT_EQ(plain.size(), 1u);
  EXPECT_FALSE(plain[0].contains("posix"));

  const json all = Get("/tree?recursive=true");
  EXPECT_EQ(Names(all), (std::vector<std::string>{"directory:d", "directory:d/empty", "file:d/l",
                                                  "file:f", "file:plain/x"}));
  EXPECT_FALSE(all[1].contains("posix"));
  EXPECT_EQ(all[2]["posix"], link_posix);
  EXPECT_EQ(all[2]["size"], 0);
  EXPECT_EQ(all[2]["xetHash"], kZeros);
  // Pages of one item walk the same listing.
  std::vector<std::string> paged;
  std::string url = Api("/tree?recursive=true&limit=1");
  for (int i = 0; i < 20 && !url.empty(); ++i) {
    const auto p = Fetch("GET", url, {Bearer(admin_)});
    ASSERT_EQ(p.status, 200) << p.body;
    for (const auto& n : Names(json::parse(p.body))) paged.push_back(n);
    url.clear();
    if (auto it = p.headers.find("link"); it != p.headers.end()) {
      const std::string& link = it->second;
      url = link.substr(link.find('<') + 1, link.find('>') - link.find('<') - 1);
    }
  }
  EXPECT_EQ(paged, Names(all));
  EXPECT_EQ(Names(Get("/tree/d")), (std::vector<std::string>{"directory:d/empty", "file:d/l"}));

  const json info = PathsInfo({"d", "d/l", "nope", "plain", "d/empty"});
  EXPECT_EQ(Names(info),
            (std::vector<std::string>{"directory:d", "file:d/l", "directory:d/empty"}));
  EXPECT_EQ(info[0], root[0]);

  // setMetadata keeps the content; an implied directory gets an entry.
  const json new_posix = {{"mode", 0100600}, {"uid", 3}, {"gid", 4}};
  const auto s =
      Batch({json{{"type", "setMetadata"}, {"path", "f"}, {"posix", new_posix}}.dump(),
             json{{"type", "setMetadata"}, {"path", "plain"}, {"mtime", 9000}, {"posix", dir_posix}}
                 .dump()});
  ASSERT_EQ(s.status, 200) << s.body;
  EXPECT_EQ(Generation(), 2u);
  const json after = PathsInfo({"f", "plain"});
  ASSERT_EQ(after.size(), 2u);
  EXPECT_EQ(after[0]["posix"], new_posix);
  EXPECT_EQ(after[0]["xetHash"], hash_);
  EXPECT_EQ(after[0]["mtime"], "1970-01-01T00:00:05.000Z");
  EXPECT_EQ(after[1]["type"], "directory");
  EXPECT_EQ(after[1]["mtime"], "1970-01-01T00:00:09.000Z");

  // A directory has no bytes to resolve; a symbolic link is the empty file, which was never
  // uploaded.
  const auto res = Fetch("GET", Url("/buckets/ns/b/resolve/d"), {Bearer(admin_)});
  EXPECT_EQ(res.status, 404);
  const auto link = Fetch("GET", Url("/buckets/ns/b/resolve/d/l"), {Bearer(admin_)});
  EXPECT_EQ(link.status, 200) << link.body;
  EXPECT_TRUE(link.body.empty());
  EXPECT_EQ(link.headers.count("x-linked-size") ? link.headers.at("x-linked-size") : "", "0");
  // Directory entries count in no total.
  EXPECT_EQ(Get("")["totalFiles"], 3);

  // noReplace: the move fails when anything is at the target.
  const auto nr = Batch({R"({"type":"movePrefix","from":"f","to":"d","noReplace":true})",
                         R"({"type":"movePrefix","from":"f","to":"plain","noReplace":true})"});
  EXPECT_EQ(nr.status, 422) << nr.body;
  const json failed = json::parse(nr.body)["failed"];
  ASSERT_EQ(failed.size(), 2u);
  EXPECT_EQ(failed[0]["error"], "d exists");
  EXPECT_EQ(failed[1]["error"], "plain exists");
  EXPECT_EQ(Generation(), 2u);
  ASSERT_EQ(Batch({R"({"type":"movePrefix","from":"d","to":"e","noReplace":true})",
                   R"({"type":"deleteFile","path":"e/empty"})"})
                .status,
            200);
  EXPECT_EQ(Names(Get("/tree?recursive=true")),
            (std::vector<std::string>{"directory:e", "file:e/l", "file:f", "directory:plain",
                                      "file:plain/x"}));
  EXPECT_EQ(Generation(), 3u);
}

// A FIFO, a socket and a device node are empty files with posix: a stock Hub client sees
// valid file items of size 0 (the empty file's hash), and resolving one gives no bytes.
TEST_F(HubPosixApiTest, SpecialFilesAreEmptyFilesToHubClients) {
  const json fifo = {{"mode", 010640}, {"uid", 5}, {"gid", 6}};
  const json sock = {{"mode", 0140755}, {"uid", 0}, {"gid", 0}};
  const json chr = {{"mode", 020620}, {"uid", 0}, {"gid", 5}, {"rdev", 0x8801}};
  const auto add = [](const std::string& path, const json& posix) {
    return json{{"type", "addFile"}, {"path", path}, {"xetHash", kZeros}, {"posix", posix}}.dump();
  };
  const auto r = Batch({add("p", fifo), add("s", sock), add("dev/tty", chr)});
  ASSERT_EQ(r.status, 200) << r.body;
  const json all = Get("/tree?recursive=true");
  EXPECT_EQ(Names(all), (std::vector<std::string>{"file:dev/tty", "file:p", "file:s"}));
  for (const json& item : all) {
    EXPECT_EQ(item["size"], 0) << item;
    EXPECT_EQ(item["xetHash"], kZeros) << item;
    EXPECT_TRUE(item["mtime"].is_string()) << item;
  }
  EXPECT_EQ(all[0]["posix"], chr);
  EXPECT_EQ(all[1]["posix"], fifo);
  EXPECT_EQ(all[2]["posix"], sock);
  const json info = PathsInfo({"p", "dev/tty"});
  EXPECT_EQ(Names(info), (std::vector<std::string>{"file:p", "file:dev/tty"}));
  EXPECT_EQ(info[1]["posix"]["rdev"], 0x8801);
  const auto res = Fetch("GET", Url("/buckets/ns/b/resolve/p"), {Bearer(admin_)});
  EXPECT_EQ(res.status, 200) << res.body;
  EXPECT_TRUE(res.body.empty());
  EXPECT_EQ(Get("")["totalFiles"], 3);
  EXPECT_EQ(Get("")["size"], 0);
}

TEST_F(HubPosixApiTest, MalformedPosixFailsTheOperationAndStoresNothing) {
  const std::string add = R"({"type":"addFile","path":"a","xetHash":")" + hash_ + "\"";
  const std::string big_value(90'000, 'A');  // decodes to more than 64 KiB
  const std::vector<std::pair<std::string, std::string>> cases = {
      {add + R"(,"posix":"rw-r--r--"})", "must be an object"},
      {add + R"(,"posix":{"mode":"0644","uid":0,"gid":0}})", "\"mode\" must be an integer"},
      {add + R"(,"posix":{"mode":33188,"uid":"root","gid":0}})", "\"uid\" must be an integer"},
      {add + R"(,"posix":{"mode":33188,"uid":0,"gid":0,"xattrs":{"user.v":")" + big_value + "\"}}}",
       "larger than 65536"},
      {add + R"(,"posix":{"mode":33188,"uid":0,"gid":0,"xattrs":{"user.v":7}}})",
       "must be a base64 string"},
      {add + R"(,"posix":{"mode":12708,"uid":0,"gid":0}})", "type bits"},                // 0030644
      {add + R"(,"posix":{"mode":4516,"uid":0,"gid":0}})", "must be the empty file's"},  // FIFO
      {add + R"(,"posix":{"mode":4516,"uid":0,"gid":0,"rdev":1}})", "only for device nodes"},
      {add + R"(,"posix":{"mode":8612,"uid":0,"gid":0,"rdev":4294967296}})",
       "\"rdev\" must be at most"},
      {add + R"(,"posix":{"mode":33188,"uid":0,"gid":0,"target":"x"}})", "only for symbolic links"},
      {add + R"(,"posix":{"mode":41471,"uid":0,"gid":0,"target":"x"}})",
       "must be the empty file's"},
      {R"({"type":"addDirectory","path":"d","posix":{"mode":33188,"uid":0,"gid":0}})",
       "must be a directory's"},
      {R"({"type":"setMetadata","path":"a"})", "missing \"posix\""},
  };
  std::vector<std::string> lines;
  for (const auto& c : cases) lines.push_back(c.first);
  // Operations that are valid on their own but not here fail too.
  lines.push_back(R"({"type":"setMetadata","path":"nope","posix":{"mode":16877,"uid":0,"gid":0}})");
  const auto r = Batch(lines);
  ASSERT_EQ(r.status, 422) << r.body;
  const json answer = json::parse(r.body);
  EXPECT_EQ(answer["succeeded"], 0);
  const json failed = answer["failed"];
  ASSERT_EQ(failed.size(), cases.size() + 1);
  for (size_t i = 0; i < cases.size(); ++i) {
    const std::string error = failed[i]["error"];
    EXPECT_NE(error.find(cases[i].second), std::string::npos) << cases[i].first << " -> " << error;
    EXPECT_NE(error.find("posix"), std::string::npos) << error;
  }
  EXPECT_EQ(failed[cases.size()]["error"], "nothing at nope");
  EXPECT_EQ(Get("/tree?recursive=true"), json::array());
  EXPECT_EQ(Generation(), 0u);

  // A posix object past the line limit fails the body (400), applying nothing.
  json huge = {{"mode", 0100644}, {"uid", 0}, {"gid", 0}, {"xattrs", json::object()}};
  for (int i = 0; i < 5; ++i) huge["xattrs"]["user." + std::to_string(i)] = std::string(60000, 'A');
  const auto too_long =
      Batch({json{{"type", "addFile"}, {"path", "a"}, {"xetHash", hash_}, {"posix", huge}}.dump()});
  EXPECT_EQ(too_long.status, 400) << too_long.body;
  // Under the line limit but past the 128 KiB posix limit: the op fails alone.
  json over = {{"mode", 0100644}, {"uid", 0}, {"gid", 0}, {"xattrs", json::object()}};
  for (int i = 0; i < 3; ++i) over["xattrs"]["user." + std::to_string(i)] = std::string(60000, 'A');
  const auto r2 =
      Batch({json{{"type", "addFile"}, {"path", "a"}, {"xetHash", hash_}, {"posix", over}}.dump()});
  EXPECT_EQ(r2.status, 422) << r2.body;
  EXPECT_NE(r2.body.find("larger than 131072"), std::string::npos) << r2.body;
  EXPECT_EQ(Get("/tree?recursive=true"), json::array());
  EXPECT_EQ(Generation(), 0u);
}

}  // namespace
}  // namespace xet
