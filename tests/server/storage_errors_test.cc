// A full disk or a failing one, from the system call or SQLite up to the HTTP answer, the
// log line and the metric (the client's exit code: tests/cli/remote_failure_test.cc): each mapping
// on its own, and a real SQLite database that runs out of pages (PRAGMA max_page_count, no root
// needed). The tmpfs end-to-end run is tests/hardening/disk-full.
#include "server/storage_errors.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/errno_status.h"
#include "common/log_throttle.h"
#include "http/metrics.h"
#include "server/http_status.h"
#include "server/instrumented_stores.h"
#include "store/object_store.h"
#include "store/sqlite/sqlite_db.h"
#include "support/temp_dir.h"

namespace xet {
namespace {

using std::chrono::seconds;
using Clock = std::chrono::steady_clock;

bool Contains(const std::string& s, std::string_view part) {
  return s.find(part) != std::string::npos;
}

TEST(StorageErrorsTest, NoSpaceErrnoIsInsufficientStorageOthersAreIoErrors) {
  for (int err : {ENOSPC, EDQUOT}) {
    const Status st = StatusFromErrno("write xorbs/x", err);
    EXPECT_EQ(st.code(), Status::Code::kInsufficientStorage) << st.ToString();
    EXPECT_EQ(st.message(), std::string("write xorbs/x: ") + std::strerror(err));
  }
  for (int err : {EIO, EROFS, EACCES, EBADF}) {
    EXPECT_EQ(StatusFromErrno("fsync", err).code(), Status::Code::kIoError) << err;
  }
  EXPECT_TRUE(IsNoSpaceErrno(ENOSPC));
  EXPECT_FALSE(IsNoSpaceErrno(EIO));
  EXPECT_FALSE(IsNoSpaceErrno(0));
}

TEST(StorageErrorsTest, SqliteCodesMap) {
  EXPECT_EQ(SqliteStatus(SQLITE_FULL, "commit", nullptr).code(),
            Status::Code::kInsufficientStorage);
  EXPECT_EQ(SqliteStatus(SQLITE_IOERR_WRITE, "commit", nullptr).code(), Status::Code::kIoError);
  EXPECT_EQ(SqliteStatus(SQLITE_IOERR_FSYNC, "commit", nullptr).code(), Status::Code::kIoError);
  EXPECT_EQ(SqliteStatus(SQLITE_CONSTRAINT_UNIQUE, "insert", nullptr).code(),
            Status::Code::kInvalidArgument);
  EXPECT_EQ(SqliteStatus(SQLITE_CORRUPT, "read", nullptr).code(), Status::Code::kCorruption);
}

// A database that may not grow: an insert fails with SQLITE_FULL as on a full disk, the
// transaction is rolled back leaving earlier rows whole, and writes succeed once it may.
TEST(StorageErrorsTest, FullSqliteDatabaseIsInsufficientStorageAndRecovers) {
  testing::TempDir dir;
  auto db = SqliteDb::Open(dir.path() + "/full.sqlite", false, 1000);
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  SqliteDb& d = **db;
  ASSERT_TRUE(d.Exec("PRAGMA journal_mode=WAL; CREATE TABLE t(v BLOB)").ok());
  const std::vector<uint8_t> blob(64 << 10, 0xab);
  auto insert = [&]() -> Status {
    XET_ASSIGN_OR_RETURN(auto stmt, d.Prepare("INSERT INTO t(v) VALUES(?1)"));
    XET_RETURN_IF_ERROR(stmt->BindBlob(1, blob));
    return stmt->Run();
  };
  ASSERT_TRUE(insert().ok());
  auto pages = d.QueryText("PRAGMA page_count");
  ASSERT_TRUE(pages.ok());
  ASSERT_TRUE(d.Exec("PRAGMA max_page_count=" + *pages).ok());

  ASSERT_TRUE(d.Exec("BEGIN IMMEDIATE").ok());
  const Status full = insert();
  EXPECT_EQ(full.code(), Status::Code::kInsufficientStorage) << full.ToString();
  if (!d.InAutocommit()) {
    ASSERT_TRUE(d.Exec("ROLLBACK").ok());
  }
  auto rows = d.QueryText("SELECT count(*) || ':' || sum(length(v)) FROM t");
  ASSERT_TRUE(rows.ok());
  EXPECT_EQ(*rows, "1:" + std::to_string(blob.size()));

  ASSERT_TRUE(d.Exec("PRAGMA max_page_count=1000000").ok());
  EXPECT_TRUE(insert().ok());
  rows = d.QueryText("SELECT count(*) FROM t");
  ASSERT_TRUE(rows.ok());
  EXPECT_EQ(*rows, "2");
}

TEST(StorageErrorsTest, HttpAnswers) {
  const Status full = Status::InsufficientStorage("no space left on the data disk (objects)");
  EXPECT_EQ(HttpStatusFor(full), 507);
  const HttpResponse r = ErrorResponse(full);
  EXPECT_EQ(r.status, 507);
  const auto j = nlohmann::json::parse(r.body);
  EXPECT_EQ(j.at("error"), "insufficient storage: no space left on the data disk (objects)");

  const HttpResponse io = ErrorResponse(Status::IoError("fsync /secret/path: Input/output error"));
  EXPECT_EQ(io.status, 500);
  EXPECT_TRUE(Contains(io.body, "storage I/O error")) << io.body;
  EXPECT_FALSE(Contains(io.body, "/secret/path")) << io.body;
}

TEST(StorageErrorsTest, LogThrottleLetsOneLinePerIntervalThroughAndCountsTheRest) {
  Clock::time_point now{};
  LogThrottle throttle(seconds(10), [&] { return now; });
  EXPECT_EQ(throttle.Admit("a"), std::optional<uint64_t>(0));
  EXPECT_EQ(throttle.Admit("a"), std::nullopt);
  EXPECT_EQ(throttle.Admit("b"), std::optional<uint64_t>(0));  // keys are independent
  now += seconds(9);
  EXPECT_EQ(throttle.Admit("a"), std::nullopt);
  now += seconds(1);
  EXPECT_EQ(throttle.Admit("a"), std::optional<uint64_t>(2));
  EXPECT_EQ(throttle.Admit("a"), std::nullopt);
  now += seconds(60);
  EXPECT_EQ(throttle.Admit("a"), std::optional<uint64_t>(1));
}

class StorageErrorReporterTest : public ::testing::Test {
 protected:
  uint64_t MetricValue(const std::string& cause, const std::string& store) {
    return metrics_
        .GetCounter("xetstore_storage_errors_total", "", {{"cause", cause}, {"store", store}})
        .Value();
  }

  Metrics metrics_;
  std::vector<std::string> lines_;
  Clock::time_point now_{};
  StorageErrorReporter reporter_{metrics_, StorageArea::kObjects,
                                 [this](std::string_view l) { lines_.emplace_back(l); },
                                 [this] { return now_; }, seconds(10)};
};

TEST_F(StorageErrorReporterTest, FullDiskIsCountedLoggedOncePerBurstAndNamedWithoutPaths) {
  const Status raw = StatusFromErrno("create directory /data/objects/xorbs/ab", ENOSPC);
  for (int i = 0; i < 5; ++i) {
    const Status passed = reporter_.Report(raw, StorageOp::kWrite);
    EXPECT_EQ(passed.code(), Status::Code::kInsufficientStorage);
    EXPECT_EQ(passed.message(), "no space left on the data disk (objects)");
  }
  EXPECT_EQ(MetricValue("no_space", "objects"), 5u);
  EXPECT_EQ(MetricValue("io_error", "objects"), 0u);
  ASSERT_EQ(lines_.size(), 1u);
  EXPECT_TRUE(Contains(lines_[0], "cause=no_space")) << lines_[0];
  EXPECT_TRUE(Contains(lines_[0], "no space left on the data disk (objects)")) << lines_[0];
  EXPECT_TRUE(Contains(lines_[0], raw.message())) << lines_[0];  // the detail goes to the log

  now_ += seconds(10);
  (void)reporter_.Report(raw, StorageOp::kWrite);
  ASSERT_EQ(lines_.size(), 2u);
  EXPECT_TRUE(Contains(lines_[1], "4 more like it")) << lines_[1];
  EXPECT_TRUE(Contains(metrics_.Expose(),
                       "xetstore_storage_errors_total{cause=\"no_space\",store=\"objects\"} 6"))
      << metrics_.Expose();
}

TEST_F(StorageErrorReporterTest, ReadIoErrorsAreCountedApartAndPassedOnUnchanged) {
  const Status raw = StatusFromErrno("read xorbs/ab/cd", EIO);
  const Status passed = reporter_.Report(raw, StorageOp::kRead);
  EXPECT_EQ(passed.code(), Status::Code::kIoError);
  EXPECT_EQ(passed.message(), raw.message());
  (void)reporter_.Report(Status::InsufficientStorage("x"), StorageOp::kWrite);  // its own key
  EXPECT_EQ(MetricValue("io_error", "objects"), 1u);
  EXPECT_EQ(MetricValue("no_space", "objects"), 1u);
  ASSERT_EQ(lines_.size(), 2u);
  EXPECT_TRUE(Contains(lines_[0], "cause=io_error")) << lines_[0];
}

// A write the disk failed (EIO on fsync) could not store the data: 507 naming the cause,
// counted and logged as an I/O error, the detail (paths) only in the log.
TEST_F(StorageErrorReporterTest, WriteIoErrorsArePassedOnAsInsufficientStorage) {
  const Status raw = StatusFromErrno("fsync /data/objects/xorbs/ab/cd", EIO);
  const Status passed = reporter_.Report(raw, StorageOp::kWrite);
  EXPECT_EQ(passed.code(), Status::Code::kInsufficientStorage);
  EXPECT_EQ(passed.message(), "I/O error on the data disk (objects)");
  EXPECT_EQ(MetricValue("io_error", "objects"), 1u);
  EXPECT_EQ(MetricValue("no_space", "objects"), 0u);
  ASSERT_EQ(lines_.size(), 1u);
  EXPECT_TRUE(Contains(lines_[0], "cause=io_error")) << lines_[0];
  EXPECT_TRUE(Contains(lines_[0], raw.message())) << lines_[0];
  const HttpResponse r = ErrorResponse(passed);
  EXPECT_EQ(r.status, 507);
  EXPECT_EQ(nlohmann::json::parse(r.body).at("error"),
            "insufficient storage: I/O error on the data disk (objects)");
}

TEST_F(StorageErrorReporterTest, OtherFailuresAreNotTheDisks) {
  for (const Status& st : {Status::NotFound("x"), Status::InvalidArgument("y"),
                           Status::Corruption("z"), Status::Ok()}) {
    const Status passed = reporter_.Report(st, StorageOp::kWrite);
    EXPECT_EQ(passed.code(), st.code());
    EXPECT_EQ(passed.message(), st.message());
  }
  EXPECT_TRUE(lines_.empty());
  EXPECT_EQ(MetricValue("no_space", "objects") + MetricValue("io_error", "objects"), 0u);
}

// An object store whose disk is full: every write fails as LocalObjectStore's would.
class FullDiskObjectStore final : public ObjectStore {
 public:
  Result<bool> Put(std::string_view key, std::span<const uint8_t>) override {
    return StatusFromErrno("write " + std::string(key), ENOSPC);
  }
  Result<uint64_t> Size(std::string_view) override { return Status::NotFound("absent"); }
  Status ReadRange(std::string_view, uint64_t, std::span<uint8_t>) override {
    return StatusFromErrno("read", EIO);
  }
  Result<std::vector<uint8_t>> Get(std::string_view) override { return Status::NotFound("absent"); }
  Status Delete(std::string_view) override { return Status::Ok(); }
  Status List(std::string_view, const std::function<Status(std::string_view, uint64_t)>&) override {
    return Status::Ok();
  }
};

// The server's decorator: a full disk reaches the handler as a path-free 507 and is
// counted; an absent object is an answer, not a storage error.
TEST(StorageErrorsTest, InstrumentedObjectStoreTurnsAFullDiskInto507) {
  FullDiskObjectStore inner;
  Metrics metrics;
  auto store = InstrumentObjectStore(inner, metrics);
  const std::vector<uint8_t> bytes(10, 1);
  const auto put = store->Put("xorbs/ab/cd", bytes);
  ASSERT_FALSE(put.ok());
  const HttpResponse r = ErrorResponse(put.status().WithContext("upload xorb cd"));
  EXPECT_EQ(r.status, 507);
  EXPECT_EQ(nlohmann::json::parse(r.body).at("error"),
            "insufficient storage: upload xorb cd: no space left on the data disk (objects)");
  EXPECT_EQ(store->Size("xorbs/ab/cd").status().code(), Status::Code::kNotFound);
  std::vector<uint8_t> out(4);
  EXPECT_EQ(store->ReadRange("xorbs/ab/cd", 0, out).code(), Status::Code::kIoError);
  const std::string text = metrics.Expose();
  EXPECT_TRUE(
      Contains(text, "xetstore_storage_errors_total{cause=\"no_space\",store=\"objects\"} 1"))
      << text;
  EXPECT_TRUE(
      Contains(text, "xetstore_storage_errors_total{cause=\"io_error\",store=\"objects\"} 1"))
      << text;
}

}  // namespace
}  // namespace xet
