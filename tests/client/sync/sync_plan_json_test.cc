#include "client/sync/sync_plan_json.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

namespace xet {
namespace {

const std::string kHash1 = std::string(63, '0') + "1";
const std::string kHeaderUp =
    R"({"type":"xetstore-sync-plan","version":1,"direction":"upload","source":"/data",)"
    R"("destination":"hf://buckets/ns/b"})";
const std::string kHeaderDown =
    R"({"type":"xetstore-sync-plan","version":1,"direction":"download",)"
    R"("source":"hf://buckets/ns/b","destination":"/data"})";

SyncPlan SamplePlan() {
  SyncPlan plan;
  plan.direction = SyncDirection::kUpload;
  plan.source = "/home/me/data";
  plan.destination = "hf://buckets/team/ckpt/run 1";
  plan.ops = {
      {SyncOpKind::kUpload, "a/b.bin", 123, 1'700'000'000'123, std::nullopt, SyncReason::kNew},
      {SyncOpKind::kUpload, "caf\xc3\xa9 \"quoted\".txt", 0, 0, Hash::FromHex(kHash1),
       SyncReason::kContentChanged},
      {SyncOpKind::kUpload, "m", 9, 1, std::nullopt, SyncReason::kMtimeChanged},
      {SyncOpKind::kUpload, "s", UINT64_MAX, 253'402'300'799'999, std::nullopt,
       SyncReason::kSizeChanged},
      {SyncOpKind::kDelete, "old/x.log", 77, 0, std::nullopt, SyncReason::kNotInSource},
  };
  return plan;
}

TEST(SyncPlanJsonTest, WritesTheDocumentedFormat) {
  SyncPlan plan;
  plan.direction = SyncDirection::kDownload;
  plan.source = "hf://buckets/ns/b";
  plan.destination = "/data";
  plan.ops = {{SyncOpKind::kDownload, "c.txt", 5, 1'700'000'000'000, Hash::FromHex(kHash1),
               SyncReason::kSizeChanged},
              {SyncOpKind::kDelete, "old.log", 9, 0, std::nullopt, SyncReason::kNotInSource}};
  const std::string want =
      kHeaderDown + "\n" +
      R"({"op":"download","path":"c.txt","size":5,"mtime":1700000000000,"xetHash":")" + kHash1 +
      R"(","reason":"size-changed"})" + "\n" +
      R"({"op":"delete","path":"old.log","size":9,"reason":"not-in-source"})" + "\n";
  // nlohmann orders an object's keys alphabetically; compare the parsed lines instead of
  // relying on key order.
  const std::string got = SyncPlanToJsonLines(plan);
  size_t g = 0;
  size_t w = 0;
  int lines = 0;
  while (g < got.size() && w < want.size()) {
    const size_t ge = got.find('\n', g);
    const size_t we = want.find('\n', w);
    ASSERT_NE(ge, std::string::npos);
    EXPECT_EQ(nlohmann::json::parse(got.substr(g, ge - g)),
              nlohmann::json::parse(want.substr(w, we - w)));
    g = ge + 1;
    w = we + 1;
    ++lines;
  }
  EXPECT_EQ(lines, 3);
  EXPECT_EQ(g, got.size());
  EXPECT_EQ(w, want.size());
}

TEST(SyncPlanJsonTest, RoundTrip) {
  const SyncPlan plan = SamplePlan();
  const std::string text = SyncPlanToJsonLines(plan);
  auto back = SyncPlanFromJsonLines(text);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->direction, plan.direction);
  EXPECT_EQ(back->source, plan.source);
  EXPECT_EQ(back->destination, plan.destination);
  EXPECT_EQ(back->ops, plan.ops);
  EXPECT_EQ(SyncPlanToJsonLines(*back), text);
}

TEST(SyncPlanJsonTest, EmptyPlanAndBlankLines) {
  SyncPlan plan;
  plan.source = "s";
  plan.destination = "d";
  auto back = SyncPlanFromJsonLines(SyncPlanToJsonLines(plan));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_TRUE(back->ops.empty());

  back = SyncPlanFromJsonLines(
      "\n" + kHeaderUp + "\n\n" +
      R"({"op":"upload","path":"a","size":1,"mtime":2,"reason":"new"})");  // no final newline
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ASSERT_EQ(back->ops.size(), 1u);
  EXPECT_EQ(back->ops[0].path, "a");
  EXPECT_EQ(back->ops[0].mtime_ms, 2);
}

// Parses a plan made of the upload header and `op_line`; returns the error message.
std::string UploadPlanError(const std::string& op_line) {
  auto r = SyncPlanFromJsonLines(kHeaderUp + "\n" + op_line + "\n");
  EXPECT_FALSE(r.ok()) << op_line;
  EXPECT_EQ(r.status().code(), Status::Code::kInvalidArgument) << op_line;
  return r.status().message();
}

TEST(SyncPlanJsonTest, RejectsBadJsonWithTheLineNumber) {
  EXPECT_EQ(UploadPlanError(R"({"op":"upload",)"), "plan line 2: invalid JSON");
  EXPECT_EQ(UploadPlanError(R"(["upload","a"])"), "plan line 2: not a JSON object");
  EXPECT_EQ(UploadPlanError("\"upload\""), "plan line 2: not a JSON object");
  auto r = SyncPlanFromJsonLines("garbage\n");
  EXPECT_EQ(r.status().message(), "plan line 1: invalid JSON");
}

TEST(SyncPlanJsonTest, RejectsMissingOrWrongHeader) {
  EXPECT_EQ(SyncPlanFromJsonLines("").status().message(), "plan is empty (no header line)");
  EXPECT_EQ(SyncPlanFromJsonLines("\n\n").status().code(), Status::Code::kInvalidArgument);
  // An op where the header should be.
  auto r = SyncPlanFromJsonLines(R"({"op":"upload","path":"a","size":1,"mtime":2,"reason":"new"})");
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("plan line 1"), std::string::npos);
  // Wrong version, bad direction, missing source.
  r = SyncPlanFromJsonLines(
      R"({"type":"xetstore-sync-plan","version":2,"direction":"upload","source":"a","destination":"b"})");
  EXPECT_NE(r.status().message().find("unsupported plan version 2"), std::string::npos);
  r = SyncPlanFromJsonLines(
      R"({"type":"xetstore-sync-plan","version":1,"direction":"sideways","source":"a","destination":"b"})");
  EXPECT_NE(r.status().message().find("\"direction\""), std::string::npos);
  r = SyncPlanFromJsonLines(
      R"({"type":"xetstore-sync-plan","version":1,"direction":"upload","destination":"b"})");
  EXPECT_EQ(r.status().message(), "plan line 1: missing \"source\"");
}

TEST(SyncPlanJsonTest, RejectsUnknownOpsReasonsAndKeys) {
  EXPECT_EQ(UploadPlanError(R"({"op":"chmod","path":"a","size":1,"mtime":1,"reason":"new"})"),
            "plan line 2: unknown op \"chmod\"");
  EXPECT_EQ(UploadPlanError(R"({"path":"a","size":1,"mtime":1,"reason":"new"})"),
            "plan line 2: missing \"op\"");
  EXPECT_EQ(UploadPlanError(R"({"op":"upload","path":"a","size":1,"mtime":1,"reason":"whim"})"),
            "plan line 2: unknown reason \"whim\"");
  EXPECT_EQ(UploadPlanError(
                R"({"op":"upload","path":"a","size":1,"mtime":1,"reason":"new","mode":"0777"})"),
            "plan line 2: unknown key \"mode\"");
  // Deletes carry no mtime or hash.
  EXPECT_EQ(
      UploadPlanError(R"({"op":"delete","path":"a","size":1,"mtime":1,"reason":"not-in-source"})"),
      "plan line 2: unknown key \"mtime\"");
  // Reasons must fit the op.
  EXPECT_EQ(UploadPlanError(R"({"op":"delete","path":"a","size":1,"reason":"new"})"),
            "plan line 2: reason \"new\" does not fit op \"delete\"");
  EXPECT_EQ(
      UploadPlanError(R"({"op":"upload","path":"a","size":1,"mtime":1,"reason":"not-in-source"})"),
      "plan line 2: reason \"not-in-source\" does not fit op \"upload\"");
}

TEST(SyncPlanJsonTest, RejectsOpsOfTheOtherDirection) {
  const std::string download = R"({"op":"download","path":"a","size":1,"mtime":1,"xetHash":")" +
                               kHash1 + R"(","reason":"new"})";
  EXPECT_EQ(UploadPlanError(download),
            "plan line 2: op \"download\" in a plan of direction \"upload\"");
  auto r = SyncPlanFromJsonLines(kHeaderDown + "\n" +
                                 R"({"op":"upload","path":"a","size":1,"mtime":1,"reason":"new"})");
  EXPECT_EQ(r.status().message(), "plan line 2: op \"upload\" in a plan of direction \"download\"");
  r = SyncPlanFromJsonLines(kHeaderDown + "\n" + download);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
}

TEST(SyncPlanJsonTest, RejectsBadValues) {
  EXPECT_EQ(UploadPlanError(R"({"op":"upload","path":"a","size":-1,"mtime":1,"reason":"new"})"),
            "plan line 2: \"size\" must be an integer from 0 to 18446744073709551615");
  EXPECT_NE(UploadPlanError(R"({"op":"upload","path":"a","size":1.5,"mtime":1,"reason":"new"})")
                .find("\"size\""),
            std::string::npos);
  EXPECT_NE(UploadPlanError(R"({"op":"upload","path":"a","size":"1","mtime":1,"reason":"new"})")
                .find("\"size\""),
            std::string::npos);
  EXPECT_NE(UploadPlanError(R"({"op":"upload","path":"a","size":1,"mtime":-5,"reason":"new"})")
                .find("\"mtime\""),
            std::string::npos);
  EXPECT_NE(UploadPlanError(
                R"({"op":"upload","path":"a","size":1,"mtime":253402300800000,"reason":"new"})")
                .find("\"mtime\""),
            std::string::npos);
  EXPECT_EQ(UploadPlanError(R"({"op":"upload","path":"a","size":1,"reason":"new"})"),
            "plan line 2: missing \"mtime\"");
  EXPECT_EQ(UploadPlanError(R"({"op":"upload","path":7,"size":1,"mtime":1,"reason":"new"})"),
            "plan line 2: \"path\" must be a string");
  EXPECT_EQ(UploadPlanError(
                R"({"op":"upload","path":"a","size":1,"mtime":1,"xetHash":"abc","reason":"new"})"),
            "plan line 2: \"xetHash\" must be 64 hex digits");
  auto r = SyncPlanFromJsonLines(
      kHeaderDown + "\n" + R"({"op":"download","path":"a","size":1,"mtime":1,"reason":"new"})");
  EXPECT_EQ(r.status().message(), "plan line 2: missing \"xetHash\"");
}

TEST(SyncPlanJsonTest, RejectsHostilePaths) {
  const auto error_for = [](const std::string& path_json) {
    return UploadPlanError(R"({"op":"delete","path":)" + path_json +
                           R"(,"size":1,"reason":"not-in-source"})");
  };
  EXPECT_EQ(error_for(R"("../etc/passwd")"),
            "plan line 2: bad \"path\": path may not contain '.' or '..' segments");
  EXPECT_EQ(error_for(R"("a/../../b")"),
            "plan line 2: bad \"path\": path may not contain '.' or '..' segments");
  EXPECT_EQ(error_for(R"("/etc/passwd")"),
            "plan line 2: bad \"path\": path may not start with '/'");
  EXPECT_EQ(error_for(R"("a\u0000b")"),
            "plan line 2: bad \"path\": path may not contain NUL or control characters");
  EXPECT_EQ(error_for(R"("a\nb")"),
            "plan line 2: bad \"path\": path may not contain NUL or control characters");
  EXPECT_EQ(error_for(R"("")"), "plan line 2: bad \"path\": path is empty");
  EXPECT_EQ(error_for(R"("a\\..\\b")"), "plan line 2: bad \"path\": path may not contain '\\'");
  EXPECT_EQ(error_for(R"("a//b")"), "plan line 2: bad \"path\": path may not contain '//'");
  EXPECT_EQ(error_for('"' + std::string(1025, 'x') + '"'),
            "plan line 2: bad \"path\": path is longer than 1024 bytes");
}

TEST(SyncPlanJsonTest, RejectsAPathNamedTwice) {
  auto r = SyncPlanFromJsonLines(
      kHeaderUp + "\n" + R"({"op":"upload","path":"a","size":1,"mtime":1,"reason":"new"})" + "\n" +
      R"({"op":"delete","path":"a","size":1,"reason":"not-in-source"})" + "\n");
  EXPECT_EQ(r.status().message(), "plan line 3: 'a' is already named by an earlier op");
}

TEST(SyncPlanJsonTest, InvalidUtf8IsReplacedWhenWritten) {
  SyncPlan plan;
  plan.source = "s";
  plan.destination = "d";
  plan.ops = {{SyncOpKind::kUpload, "bad\xff", 1, 1, std::nullopt, SyncReason::kNew}};
  const std::string text = SyncPlanToJsonLines(plan);  // must not throw
  auto back = SyncPlanFromJsonLines(text);
  // U+FFFD is valid UTF-8, so the replaced path parses, but it is not the original path:
  // the writer cannot represent the name, and the reader never sees the raw byte.
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_NE(back->ops[0].path, "bad\xff");
}

}  // namespace
}  // namespace xet
