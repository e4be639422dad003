// LocalObjectStore: key grammar, Put/Get/Size/ReadRange/Delete, no-overwrite idempotency,
// temporary-file hygiene across reopen, and concurrent Puts of one key.
#include "store/local/local_object_store.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "support/temp_dir.h"

namespace xet {
namespace {

using testing::TempDir;

namespace fs = std::filesystem;
using Code = Status::Code;

std::vector<uint8_t> Bytes(size_t n, uint8_t seed) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(seed + i * 7);
  return v;
}

std::unique_ptr<ObjectStore> OpenStore(const std::string& root) {
  auto store = OpenLocalObjectStore(root);
  EXPECT_TRUE(store.ok()) << store.status().ToString();
  return std::move(store).value();
}

TEST(ObjectStoreKeys, XorbAndShardKeys) {
  Hash h = *Hash::FromHex("0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef");
  EXPECT_EQ(XorbKey(h), "xorbs/01/" + h.ToHex());
  EXPECT_EQ(ShardKey(h), "shards/" + h.ToHex());
  EXPECT_TRUE(ValidateObjectKey(XorbKey(h)).ok());
  EXPECT_TRUE(ValidateObjectKey(ShardKey(h)).ok());
}

TEST(ObjectStoreKeys, RejectsBadKeys) {
  for (const char* bad : {"", "/abs", "a//b", "a/", "..", "a/../b", "../x", ".", "a/./b", ".tmp-x",
                          "a/.tmp-x", "UPPER", "sp ace", "a\\b", "a\nb", "x?y"}) {
    EXPECT_EQ(ValidateObjectKey(bad).code(), Code::kInvalidArgument) << bad;
  }
  for (const char* good : {"a", "a/b", "xorbs/ab/cd", "a-b_c.d", "0/1/2/3"}) {
    EXPECT_TRUE(ValidateObjectKey(good).ok()) << good;
  }
}

TEST(LocalObjectStore, RejectsBadKeysInEveryMethod) {
  TempDir dir;
  auto store = OpenStore(dir.path());
  std::vector<uint8_t> buf(1);
  EXPECT_EQ(store->Put("../escape", Bytes(3, 1)).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(store->Put("/etc/x", Bytes(3, 1)).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(store->Get("a/../b").status().code(), Code::kInvalidArgument);
  EXPECT_EQ(store->Size("a//b").status().code(), Code::kInvalidArgument);
  EXPECT_EQ(store->ReadRange("Bad", 0, buf).code(), Code::kInvalidArgument);
  EXPECT_EQ(store->Delete("..").code(), Code::kInvalidArgument);
  EXPECT_EQ(store->OpenFile("../escape").status().code(), Code::kInvalidArgument);
  EXPECT_FALSE(fs::exists(fs::path(dir.path()).parent_path() / "escape"));
}

TEST(LocalObjectStore, PutGetSizeReadRangeDelete) {
  TempDir dir;
  auto store = OpenStore(dir.path());
  const auto data = Bytes(10000, 3);
  auto put = store->Put("xorbs/ab/abcdef", data);
  ASSERT_TRUE(put.ok()) << put.status().ToString();
  EXPECT_TRUE(*put);

  auto size = store->Size("xorbs/ab/abcdef");
  ASSERT_TRUE(size.ok());
  EXPECT_EQ(*size, data.size());

  auto got = store->Get("xorbs/ab/abcdef");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(*got, data);

  std::vector<uint8_t> part(100);
  ASSERT_TRUE(store->ReadRange("xorbs/ab/abcdef", 500, part).ok());
  EXPECT_TRUE(std::equal(part.begin(), part.end(), data.begin() + 500));
  // The last byte, an empty read at the end, and the whole object are inside.
  std::vector<uint8_t> one(1);
  ASSERT_TRUE(store->ReadRange("xorbs/ab/abcdef", 9999, one).ok());
  EXPECT_EQ(one[0], data[9999]);
  EXPECT_TRUE(store->ReadRange("xorbs/ab/abcdef", 10000, {}).ok());
  std::vector<uint8_t> all(10000);
  EXPECT_TRUE(store->ReadRange("xorbs/ab/abcdef", 0, all).ok());
  EXPECT_EQ(all, data);

  ASSERT_TRUE(store->Delete("xorbs/ab/abcdef").ok());
  EXPECT_EQ(store->Get("xorbs/ab/abcdef").status().code(), Code::kNotFound);
  EXPECT_EQ(store->Size("xorbs/ab/abcdef").status().code(), Code::kNotFound);
  EXPECT_TRUE(store->Delete("xorbs/ab/abcdef").ok());  // already absent is OK
  // After a delete the key can be written again.
  auto again = store->Put("xorbs/ab/abcdef", data);
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(*again);
}

TEST(LocalObjectStore, PutPartsStoresTheConcatenation) {
  TempDir dir;
  auto store = OpenStore(dir.path());
  const auto a = Bytes(1000, 1), b = Bytes(37, 2);
  const std::span<const uint8_t> parts[] = {a, {}, b};
  auto put = store->PutParts("xorbs/ab/parts", parts);
  ASSERT_TRUE(put.ok()) << put.status().ToString();
  EXPECT_TRUE(*put);
  std::vector<uint8_t> joined = a;
  joined.insert(joined.end(), b.begin(), b.end());
  EXPECT_EQ(*store->Get("xorbs/ab/parts"), joined);
  auto again = store->PutParts("xorbs/ab/parts", parts);
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(*again);  // never rewritten
}

// Objects of 1 MiB or more are written with O_DIRECT through a 4 MiB bounce buffer, the
// unaligned tail buffered: every size around those boundaries must come back intact, in
// the test's temporary directory and on tmpfs (which may refuse direct I/O: then buffered).
TEST(LocalObjectStore, LargeObjectsOfAnySizeAndSplit) {
  std::vector<std::string> roots;
  TempDir dir;
  roots.push_back(dir.path());
  std::error_code ec;
  std::string shm_root;
  if (fs::is_directory("/dev/shm", ec)) {
    std::string tmpl = "/dev/shm/xet-objstore-XXXXXX";
    if (::mkdtemp(tmpl.data()) != nullptr) shm_root = tmpl;
  }
  if (!shm_root.empty()) roots.push_back(shm_root);
  const size_t sizes[] = {(1u << 20) - 1,    1u << 20,          (1u << 20) + 1,
                          (4u << 20) - 4096, (4u << 20) + 4095, (9u << 20) + 13};
  for (const std::string& root : roots) {
    auto store = OpenStore(root + "/objects");
    for (size_t size : sizes) {
      const auto data = Bytes(size, static_cast<uint8_t>(size));
      const std::string key = "xorbs/ab/" + std::to_string(size);
      // Three uneven pieces (the middle one crossing the bounce buffer's boundary).
      const size_t cut1 = size / 7, cut2 = size - 13;
      const std::span<const uint8_t> whole(data);
      const std::span<const uint8_t> parts[] = {
          whole.subspan(0, cut1), whole.subspan(cut1, cut2 - cut1), whole.subspan(cut2)};
      auto put = store->PutParts(key, parts);
      ASSERT_TRUE(put.ok()) << root << " " << size << ": " << put.status().ToString();
      EXPECT_EQ(*store->Size(key), size);
      EXPECT_TRUE(*store->Get(key) == data) << root << " " << size;
      const std::string single = key + "-single";
      ASSERT_TRUE(store->Put(single, data).ok());
      EXPECT_TRUE(*store->Get(single) == data) << root << " " << size;
    }
  }
  if (!shm_root.empty()) fs::remove_all(shm_root, ec);
}

TEST(LocalObjectStore, EmptyObject) {
  TempDir dir;
  auto store = OpenStore(dir.path());
  ASSERT_TRUE(store->Put("empty", {}).ok());
  EXPECT_EQ(*store->Size("empty"), 0u);
  EXPECT_TRUE(store->Get("empty")->empty());
  EXPECT_TRUE(store->ReadRange("empty", 0, {}).ok());
  std::vector<uint8_t> one(1);
  EXPECT_EQ(store->ReadRange("empty", 0, one).code(), Code::kOutOfRange);
}

TEST(LocalObjectStore, ReadRangeBounds) {
  TempDir dir;
  auto store = OpenStore(dir.path());
  ASSERT_TRUE(store->Put("shards/s", Bytes(100, 9)).ok());
  std::vector<uint8_t> buf(10);
  EXPECT_EQ(store->ReadRange("shards/s", 91, buf).code(), Code::kOutOfRange);
  EXPECT_EQ(store->ReadRange("shards/s", 101, {}).code(), Code::kOutOfRange);
  EXPECT_EQ(store->ReadRange("shards/s", UINT64_MAX, buf).code(), Code::kOutOfRange);
  EXPECT_EQ(store->ReadRange("shards/s", UINT64_MAX - 5, buf).code(), Code::kOutOfRange);
  EXPECT_TRUE(store->ReadRange("shards/s", 90, buf).ok());
  EXPECT_EQ(store->ReadRange("shards/missing", 0, buf).code(), Code::kNotFound);
  EXPECT_EQ(store->Get("missing").status().code(), Code::kNotFound);
  EXPECT_EQ(store->Size("shards").status().code(), Code::kNotFound);  // a directory
}

TEST(LocalObjectStore, OpenFileReadsTheObjectEvenAfterItIsDeleted) {
  TempDir dir;
  auto store = OpenStore(dir.path());
  const auto data = Bytes(5000, 4);
  ASSERT_TRUE(store->Put("xorbs/cd/cdef", data).ok());
  auto file = store->OpenFile("xorbs/cd/cdef");
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  ASSERT_TRUE(store->Delete("xorbs/cd/cdef").ok());
  std::vector<uint8_t> read(data.size() + 10);
  EXPECT_EQ(::pread(file->get(), read.data(), read.size(), 0), static_cast<ssize_t>(data.size()));
  read.resize(data.size());
  EXPECT_EQ(read, data);
  EXPECT_EQ(store->OpenFile("xorbs/cd/cdef").status().code(), Code::kNotFound);
  EXPECT_EQ(store->OpenFile("xorbs").status().code(), Code::kNotFound);  // a directory
}

TEST(LocalObjectStore, SecondPutDoesNotRewrite) {
  TempDir dir;
  auto store = OpenStore(dir.path());
  const auto data = Bytes(4096, 1);
  ASSERT_TRUE(*store->Put("xorbs/00/x", data));
  const std::string path = dir.path() + "/xorbs/00/x";
  struct stat before {};
  ASSERT_EQ(::stat(path.c_str(), &before), 0);
  ::usleep(20000);
  auto second = store->Put("xorbs/00/x", Bytes(4096, 2));  // different bytes: still untouched
  ASSERT_TRUE(second.ok());
  EXPECT_FALSE(*second);
  struct stat after {};
  ASSERT_EQ(::stat(path.c_str(), &after), 0);
  EXPECT_EQ(before.st_ino, after.st_ino);
  EXPECT_EQ(before.st_mtim.tv_sec, after.st_mtim.tv_sec);
  EXPECT_EQ(before.st_mtim.tv_nsec, after.st_mtim.tv_nsec);
  EXPECT_EQ(*store->Get("xorbs/00/x"), data);
  // No temporary file is left next to it.
  for (const auto& e : fs::directory_iterator(dir.path() + "/xorbs/00")) {
    EXPECT_EQ(e.path().filename(), "x");
  }
}

TEST(LocalObjectStore, PutOnADirectoryKeyIsRejected) {
  TempDir dir;
  auto store = OpenStore(dir.path());
  ASSERT_TRUE(*store->Put("a/b", Bytes(1, 1)));
  EXPECT_EQ(store->Put("a", Bytes(1, 1)).status().code(), Code::kInvalidArgument);
}

TEST(LocalObjectStore, LeftoverTempFilesRemovedOnReopen) {
  TempDir dir;
  {
    auto store = OpenStore(dir.path());
    ASSERT_TRUE(*store->Put("xorbs/ab/real", Bytes(10, 1)));
  }
  // Simulate a crash mid-Put: temp files at several levels.
  const std::vector<std::string> temps = {dir.path() + "/.tmp-top-1",
                                          dir.path() + "/xorbs/ab/.tmp-real-2",
                                          dir.path() + "/xorbs/.tmp-x-3"};
  for (const auto& t : temps) std::ofstream(t) << "partial";
  {
    auto store = OpenStore(dir.path());
    for (const auto& t : temps) EXPECT_FALSE(fs::exists(t)) << t;
    EXPECT_EQ(*store->Get("xorbs/ab/real"), Bytes(10, 1));
    // Temp names are never addressable as objects.
    EXPECT_EQ(store->Get("xorbs/ab/.tmp-real-2").status().code(), Code::kInvalidArgument);
  }
}

TEST(LocalObjectStore, ConcurrentPutsOfOneKeyCreateOnce) {
  TempDir dir;
  auto store = OpenStore(dir.path());
  for (int round = 0; round < 10; ++round) {
    const std::string key = "xorbs/cc/k" + std::to_string(round);
    std::atomic<int> created{0}, failed{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 8; ++t) {
      threads.emplace_back([&] {
        auto r = store->Put(key, Bytes(50000, static_cast<uint8_t>(round)));
        if (!r.ok()) {
          failed++;
        } else if (*r) {
          created++;
        }
      });
    }
    for (auto& t : threads) t.join();
    EXPECT_EQ(failed.load(), 0);
    EXPECT_EQ(created.load(), 1) << key;
    EXPECT_EQ(*store->Get(key), Bytes(50000, static_cast<uint8_t>(round)));
  }
  for (const auto& e : fs::recursive_directory_iterator(dir.path())) {
    EXPECT_FALSE(e.path().filename().string().starts_with(".tmp-")) << e.path();
  }
}

TEST(LocalObjectStore, ConcurrentPutsOfManyKeys) {
  TempDir dir;
  auto store = OpenStore(dir.path());
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 20; ++i) {
        const std::string key =
            "xorbs/" + std::to_string(i % 4) + "/t" + std::to_string(t) + "-" + std::to_string(i);
        auto r = store->Put(key, Bytes(100, static_cast<uint8_t>(t + i)));
        EXPECT_TRUE(r.ok() && *r) << key;
      }
    });
  }
  for (auto& t : threads) t.join();
  for (int t = 0; t < 8; ++t) {
    for (int i = 0; i < 20; ++i) {
      const std::string key =
          "xorbs/" + std::to_string(i % 4) + "/t" + std::to_string(t) + "-" + std::to_string(i);
      EXPECT_EQ(*store->Get(key), Bytes(100, static_cast<uint8_t>(t + i)));
    }
  }
}

}  // namespace
}  // namespace xet
