// CachedObjectStore beyond the ObjectStore contract: what reaches the remote store, the
// disk bound and its eviction order, reopening, concurrent readers, the copy limit, deletes
// during a copy, and failed copies.
#include "store/cache/cached_object_store.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "common/mutex.h"
#include "store/object_store_contract.h"
#include "support/temp_dir.h"

namespace xet::testing::cached_object_store_test {
namespace {

namespace fs = std::filesystem;
using Code = Status::Code;
using object_store_test::Bytes;
constexpr uint64_t kMiB = 1 << 20;

// The "remote" store: a local directory that counts what reaches it, can fail its next
// reads, and can hold reads until released.
class RemoteProbe final : public ObjectStore {
 public:
  explicit RemoteProbe(std::unique_ptr<ObjectStore> inner) : inner_(std::move(inner)) {}

  Result<bool> Put(std::string_view key, std::span<const uint8_t> data) override {
    return inner_->Put(key, data);
  }
  Result<uint64_t> Size(std::string_view key) override {
    sizes.fetch_add(1);
    return inner_->Size(key);
  }
  Status ReadRange(std::string_view key, uint64_t offset, std::span<uint8_t> out) override {
    {
      MutexLock lock(mu_);
      ++waiting_;
      changed_.NotifyAll();
      while (held_) changed_.Wait(mu_);
      --waiting_;
    }
    reads.fetch_add(1);
    read_bytes.fetch_add(out.size());
    if (fail_reads.load() > 0) {
      fail_reads.fetch_sub(1);
      return Status::IoError("remote read failed (test)");
    }
    return inner_->ReadRange(key, offset, out);
  }
  Result<std::vector<uint8_t>> Get(std::string_view key) override {
    gets.fetch_add(1);
    return inner_->Get(key);
  }
  Status Delete(std::string_view key) override { return inner_->Delete(key); }
  Status List(std::string_view prefix,
              const std::function<Status(std::string_view, uint64_t)>& visit) override {
    return inner_->List(prefix, visit);
  }

  void Hold() {
    MutexLock lock(mu_);
    held_ = true;
  }
  void Release() {
    MutexLock lock(mu_);
    held_ = false;
    changed_.NotifyAll();
  }
  // Waits until `n` reads are held.
  void AwaitHeld(int n) {
    MutexLock lock(mu_);
    while (waiting_ < n) changed_.Wait(mu_);
  }

  std::atomic<int> sizes{0};
  std::atomic<int> reads{0};
  std::atomic<int> gets{0};
  std::atomic<uint64_t> read_bytes{0};
  std::atomic<int> fail_reads{0};

 private:
  std::unique_ptr<ObjectStore> inner_;
  Mutex mu_;
  CondVar changed_;
  bool held_ GUARDED_BY(mu_) = false;
  int waiting_ GUARDED_BY(mu_) = 0;
};

class CachedObjectStoreTest : public ::testing::Test {
 protected:
  // (Re)opens the cache over a fresh probe of the same remote directory.
  void Open(uint64_t capacity, size_t max_fills = 4, uint64_t max_object = 0) {
    store_.reset();
    auto inner = OpenLocalObjectStore(dir_.path() + "/remote");
    ASSERT_TRUE(inner.ok()) << inner.status().ToString();
    auto probe = std::make_unique<RemoteProbe>(std::move(inner).value());
    probe_ = probe.get();
    ObjectCacheOptions options;
    options.dir = CacheDir();
    options.capacity_bytes = capacity;
    options.max_fills = max_fills;
    options.max_object_bytes = max_object;
    auto store = OpenCachedObjectStore(std::move(probe), options);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    store_ = std::move(store).value();
  }
  std::string CacheDir() const { return dir_.path() + "/cache"; }
  ObjectCacheStats Stats() const { return AsObjectCache(*store_)->Stats(); }
  // Bytes of every file under the cache directory.
  uint64_t CacheDiskBytes() const {
    uint64_t total = 0;
    for (const auto& e : fs::recursive_directory_iterator(CacheDir())) {
      if (e.is_regular_file()) total += e.file_size();
    }
    return total;
  }
  bool Cached(const std::string& key) const { return fs::exists(CacheDir() + "/" + key); }
  std::vector<uint8_t> PutObject(const std::string& key, size_t size, uint8_t seed) {
    auto data = Bytes(size, seed);
    EXPECT_TRUE(store_->Put(key, data).ok());
    return data;
  }
  std::vector<uint8_t> Read(const std::string& key, uint64_t offset, size_t n) {
    std::vector<uint8_t> out(n);
    Status s = store_->ReadRange(key, offset, out);
    EXPECT_TRUE(s.ok()) << key << ": " << s.ToString();
    return out;
  }
  std::vector<uint8_t> ReadFile(const std::string& key) {
    auto fd = store_->OpenFile(key);
    EXPECT_TRUE(fd.ok()) << key << ": " << fd.status().ToString();
    if (!fd.ok()) return {};
    struct stat st {};
    EXPECT_EQ(::fstat(fd->get(), &st), 0);
    std::vector<uint8_t> out(static_cast<size_t>(st.st_size));
    EXPECT_EQ(::pread(fd->get(), out.data(), out.size(), 0), static_cast<ssize_t>(out.size()));
    return out;
  }

  TempDir dir_{"xet-objcache"};
  std::unique_ptr<ObjectStore> store_;
  RemoteProbe* probe_ = nullptr;
};

TEST_F(CachedObjectStoreTest, TheFirstReadCopiesInPiecesAndLaterReadsStayLocal) {
  Open(64 * kMiB);
  const auto data = PutObject("xorbs/aa/one", 10 * kMiB + 5, 1);
  EXPECT_FALSE(Cached("xorbs/aa/one"));  // writes go to the remote store only

  const auto head = Read("xorbs/aa/one", 100, 1000);
  EXPECT_TRUE(std::equal(head.begin(), head.end(), data.begin() + 100));
  EXPECT_TRUE(Cached("xorbs/aa/one"));
  EXPECT_EQ(probe_->sizes.load(), 1);
  EXPECT_EQ(probe_->read_bytes.load(), data.size());  // the whole object, once
  EXPECT_GE(probe_->reads.load(), 3);                 // in pieces of at most 4 MiB

  const int reads_after_copy = probe_->reads.load();
  EXPECT_EQ(ReadFile("xorbs/aa/one"), data);
  EXPECT_EQ(*store_->Get("xorbs/aa/one"), data);
  EXPECT_EQ(*store_->Size("xorbs/aa/one"), data.size());
  const auto tail = Read("xorbs/aa/one", data.size() - 7, 7);
  EXPECT_TRUE(std::equal(tail.begin(), tail.end(), data.end() - 7));
  EXPECT_EQ(probe_->reads.load(), reads_after_copy);
  EXPECT_EQ(probe_->sizes.load(), 1);
  EXPECT_EQ(probe_->gets.load(), 0);

  const ObjectCacheStats s = Stats();
  EXPECT_EQ(s.fills, 1u);
  EXPECT_EQ(s.fill_bytes, data.size());
  EXPECT_EQ(s.hits, 4u);
  EXPECT_EQ(s.bypasses, 0u);
  EXPECT_EQ(s.entries, 1u);
  EXPECT_EQ(s.bytes, data.size());
}

TEST_F(CachedObjectStoreTest, ReadsOutsideTheObjectAndMissingObjectsAnswerAsTheStoreDoes) {
  Open(16 * kMiB);
  PutObject("xorbs/aa/small", 100, 2);
  std::vector<uint8_t> out(10);
  EXPECT_EQ(store_->ReadRange("xorbs/aa/small", 95, out).code(), Code::kOutOfRange);
  EXPECT_EQ(store_->ReadRange("xorbs/aa/absent", 0, out).code(), Code::kNotFound);
  EXPECT_EQ(store_->OpenFile("xorbs/aa/absent").status().code(), Code::kNotFound);
  EXPECT_EQ(store_->ReadRange("../escape", 0, out).code(), Code::kInvalidArgument);
  EXPECT_EQ(store_->OpenFile("xorbs/../x").status().code(), Code::kInvalidArgument);
  EXPECT_EQ(Stats().entries, 1u);  // only the object that exists was copied
}

TEST_F(CachedObjectStoreTest, ObjectsAboveTheLimitAreServedFromTheRemoteStore) {
  Open(8 * kMiB);  // largest copied object: 2 MiB
  const auto data = PutObject("xorbs/bb/big", 3 * kMiB, 3);
  EXPECT_EQ(Read("xorbs/bb/big", 0, 3 * kMiB), data);
  EXPECT_EQ(store_->OpenFile("xorbs/bb/big").status().code(), Code::kUnimplemented);
  EXPECT_EQ(Read("xorbs/bb/big", kMiB, 10).size(), 10u);
  EXPECT_FALSE(Cached("xorbs/bb/big"));
  EXPECT_EQ(probe_->sizes.load(), 1);  // remembered as too large
  EXPECT_EQ(Stats().bypasses, 3u);
  EXPECT_EQ(Stats().fills, 0u);
}

TEST_F(CachedObjectStoreTest, EvictsTheLeastRecentlyUsedAndStaysWithinTheCapacity) {
  Open(4 * kMiB, 4, kMiB);
  for (int i = 0; i < 4; ++i) PutObject("xorbs/cc/" + std::to_string(i), kMiB, uint8_t(i));
  for (int i = 0; i < 4; ++i) Read("xorbs/cc/" + std::to_string(i), 0, 1);
  EXPECT_EQ(Stats().entries, 4u);
  Read("xorbs/cc/0", 0, 1);  // 1 is now the least recently used
  PutObject("xorbs/cc/4", kMiB, 4);
  Read("xorbs/cc/4", 0, 1);
  EXPECT_FALSE(Cached("xorbs/cc/1"));
  for (int i : {0, 2, 3, 4}) EXPECT_TRUE(Cached("xorbs/cc/" + std::to_string(i))) << i;
  EXPECT_LE(CacheDiskBytes(), 4 * kMiB);
  EXPECT_EQ(Stats().evictions, 1u);
  EXPECT_EQ(Stats().bytes, 4 * kMiB);
}

TEST_F(CachedObjectStoreTest, ReopeningKeepsTheCopiesAndEvictsDownToANewCapacity) {
  Open(8 * kMiB, 4, kMiB);
  std::vector<std::vector<uint8_t>> data;
  for (int i = 0; i < 3; ++i) {
    data.push_back(PutObject("xorbs/dd/" + std::to_string(i), kMiB, uint8_t(10 + i)));
    Read("xorbs/dd/" + std::to_string(i), 0, 1);
  }
  // A leftover of a copy a crash interrupted.
  { std::ofstream(CacheDir() + "/xorbs/dd/.tmp-2-0000-1") << "partial"; }

  Open(8 * kMiB, 4, kMiB);
  EXPECT_EQ(Stats().entries, 3u);
  EXPECT_FALSE(fs::exists(CacheDir() + "/xorbs/dd/.tmp-2-0000-1"));
  for (int i = 0; i < 3; ++i) EXPECT_EQ(ReadFile("xorbs/dd/" + std::to_string(i)), data[i]);
  EXPECT_EQ(probe_->reads.load(), 0);

  // Access times as the next open sees them: 2 oldest, then 0, then 1.
  store_.reset();
  const int64_t base = 1'700'000'000;
  const int after_base[] = {1, 2, 0};  // seconds, per object
  for (int i = 0; i < 3; ++i) {
    const timespec times[2] = {{base + after_base[i], 0}, {base + after_base[i], 0}};
    const std::string path = CacheDir() + "/xorbs/dd/" + std::to_string(i);
    ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), times, 0), 0);
  }
  Open(2 * kMiB, 4, kMiB);  // room for two: object 2 (the oldest) goes
  EXPECT_EQ(Stats().entries, 2u);
  EXPECT_FALSE(Cached("xorbs/dd/2"));
  EXPECT_TRUE(Cached("xorbs/dd/0"));
  EXPECT_TRUE(Cached("xorbs/dd/1"));
  EXPECT_EQ(Read("xorbs/dd/2", 0, kMiB), data[2]);  // copied again from the remote store
  EXPECT_GT(probe_->reads.load(), 0);
  EXPECT_LE(CacheDiskBytes(), 2 * kMiB);
}

TEST_F(CachedObjectStoreTest, ConcurrentReadersOfOneObjectShareOneCopy) {
  Open(64 * kMiB);
  const auto data = PutObject("xorbs/ee/shared", 6 * kMiB, 5);
  probe_->Hold();
  std::vector<std::thread> readers;
  std::atomic<int> good{0};
  for (int i = 0; i < 6; ++i) {
    readers.emplace_back([&, i] {
      std::vector<uint8_t> out(1000);
      const uint64_t offset = static_cast<uint64_t>(i) * kMiB;
      if (store_->ReadRange("xorbs/ee/shared", offset, out).ok() &&
          std::equal(out.begin(), out.end(), data.begin() + static_cast<ptrdiff_t>(offset))) {
        good.fetch_add(1);
      }
    });
  }
  probe_->AwaitHeld(1);  // the copy's first piece; the other readers wait for the copy
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  probe_->Release();
  for (auto& t : readers) t.join();
  EXPECT_EQ(good.load(), 6);
  EXPECT_EQ(probe_->sizes.load(), 1);
  EXPECT_EQ(probe_->read_bytes.load(), data.size());
  EXPECT_EQ(Stats().fills, 1u);
}

TEST_F(CachedObjectStoreTest, ReadsBeyondTheCopyLimitGoToTheRemoteStore) {
  Open(64 * kMiB, /*max_fills=*/1);
  PutObject("xorbs/ff/first", kMiB, 6);
  const auto second = PutObject("xorbs/ff/second", kMiB, 7);
  probe_->Hold();
  std::thread copier([&] { Read("xorbs/ff/first", 0, 10); });
  probe_->AwaitHeld(1);
  std::thread bypass([&] { EXPECT_EQ(Read("xorbs/ff/second", 0, kMiB), second); });
  probe_->AwaitHeld(2);
  probe_->Release();
  copier.join();
  bypass.join();
  EXPECT_TRUE(Cached("xorbs/ff/first"));
  EXPECT_FALSE(Cached("xorbs/ff/second"));
  EXPECT_EQ(Stats().bypasses, 1u);
  // With the limit free again, the next read copies it.
  Read("xorbs/ff/second", 0, 1);
  EXPECT_TRUE(Cached("xorbs/ff/second"));
}

TEST_F(CachedObjectStoreTest, ADeleteDuringACopyLeavesNoCopy) {
  Open(64 * kMiB);
  PutObject("xorbs/gg/doomed", 2 * kMiB, 8);
  probe_->Hold();
  Status read;
  std::thread reader([&] {
    std::vector<uint8_t> out(10);
    read = store_->ReadRange("xorbs/gg/doomed", 0, out);
  });
  probe_->AwaitHeld(1);
  ASSERT_TRUE(store_->Delete("xorbs/gg/doomed").ok());
  probe_->Release();
  reader.join();
  EXPECT_EQ(read.code(), Code::kNotFound) << read.ToString();
  EXPECT_FALSE(Cached("xorbs/gg/doomed"));
  EXPECT_EQ(Stats().entries, 0u);
  EXPECT_EQ(CacheDiskBytes(), 0u);
  std::vector<uint8_t> out(10);
  EXPECT_EQ(store_->ReadRange("xorbs/gg/doomed", 0, out).code(), Code::kNotFound);
}

TEST_F(CachedObjectStoreTest, DeleteRemovesTheCopyToo) {
  Open(64 * kMiB);
  PutObject("xorbs/gg/gone", kMiB, 9);
  Read("xorbs/gg/gone", 0, 1);
  ASSERT_TRUE(Cached("xorbs/gg/gone"));
  ASSERT_TRUE(store_->Delete("xorbs/gg/gone").ok());
  EXPECT_FALSE(Cached("xorbs/gg/gone"));
  EXPECT_EQ(store_->Size("xorbs/gg/gone").status().code(), Code::kNotFound);
  EXPECT_EQ(Stats().bytes, 0u);
}

TEST_F(CachedObjectStoreTest, AFailedCopyLeavesNothingServesFromRemoteAndPausesCopies) {
  Open(64 * kMiB);
  const auto data = PutObject("xorbs/hh/flaky", 9 * kMiB, 11);
  const auto other = PutObject("xorbs/hh/other", kMiB, 12);
  probe_->fail_reads.store(1);  // the copy's first piece fails; the direct read succeeds
  EXPECT_EQ(Read("xorbs/hh/flaky", 5 * kMiB, 100),
            std::vector<uint8_t>(data.begin() + 5 * kMiB, data.begin() + 5 * kMiB + 100));
  EXPECT_FALSE(Cached("xorbs/hh/flaky"));
  EXPECT_EQ(Stats().fill_errors, 1u);
  EXPECT_EQ(Stats().bypasses, 1u);
  for (const auto& e : fs::recursive_directory_iterator(CacheDir())) {
    EXPECT_FALSE(e.path().filename().string().starts_with(".tmp-")) << e.path();
  }
  // Within the pause no copy is tried: straight to the remote store.
  const int sizes = probe_->sizes.load();
  EXPECT_EQ(Read("xorbs/hh/other", 0, kMiB), other);
  EXPECT_EQ(probe_->sizes.load(), sizes);
  EXPECT_FALSE(Cached("xorbs/hh/other"));
}

TEST_F(CachedObjectStoreTest, ACopyRemovedBehindTheCachesBackIsCopiedAgain) {
  Open(64 * kMiB);
  const auto data = PutObject("xorbs/ii/x", kMiB, 13);
  Read("xorbs/ii/x", 0, 1);
  ASSERT_TRUE(fs::remove(CacheDir() + "/xorbs/ii/x"));
  EXPECT_EQ(Read("xorbs/ii/x", 0, kMiB), data);
  EXPECT_TRUE(Cached("xorbs/ii/x"));
  EXPECT_EQ(ReadFile("xorbs/ii/x"), data);
}

TEST(CachedObjectStoreOptions, BadOptionsAreRefused) {
  TempDir dir;
  auto open = [&](ObjectCacheOptions o) {
    auto remote = OpenLocalObjectStore(dir.path() + "/remote");
    return OpenCachedObjectStore(std::move(remote).value(), o).status().code();
  };
  ObjectCacheOptions good;
  good.dir = dir.path() + "/cache";
  good.capacity_bytes = kMiB;
  EXPECT_EQ(open(good), Code::kOk);
  ObjectCacheOptions o = good;
  o.capacity_bytes = 0;
  EXPECT_EQ(open(o), Code::kInvalidArgument);
  o = good;
  o.dir.clear();
  EXPECT_EQ(open(o), Code::kInvalidArgument);
  o = good;
  o.max_fills = 0;
  EXPECT_EQ(open(o), Code::kInvalidArgument);
  o = good;
  o.dir = dir.path() + "/remote/file-not-dir";
  { std::ofstream(o.dir) << "x"; }
  EXPECT_NE(open(o), Code::kOk);
  EXPECT_EQ(OpenCachedObjectStore(nullptr, good).status().code(), Code::kInvalidArgument);
}

}  // namespace
}  // namespace xet::testing::cached_object_store_test
