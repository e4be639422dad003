// The ObjectStore contract (object_store.h): key checks in every method,
// Put/PutParts/Get/Size/ReadRange/OpenFile/Delete, range bounds, no-overwrite idempotency,
// and concurrent Puts. Every ObjectStore backend runs it (see object_store_contract.h).
#include "store/object_store_contract.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "store/object_store.h"

namespace xet::testing::object_store_test {
namespace {

namespace fs = std::filesystem;
using Code = Status::Code;

TEST_P(ObjectStoreContract, RejectsBadKeysInEveryMethod) {
  std::vector<uint8_t> buf(1);
  EXPECT_EQ(store_->Put("../escape", Bytes(3, 1)).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(store_->Put("/etc/x", Bytes(3, 1)).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(store_->Get("a/../b").status().code(), Code::kInvalidArgument);
  EXPECT_EQ(store_->Size("a//b").status().code(), Code::kInvalidArgument);
  EXPECT_EQ(store_->ReadRange("Bad", 0, buf).code(), Code::kInvalidArgument);
  EXPECT_EQ(store_->Delete("..").code(), Code::kInvalidArgument);
  EXPECT_EQ(store_->OpenFile("../escape").status().code(), Code::kInvalidArgument);
  EXPECT_FALSE(fs::exists(fs::path(scratch_.path()).parent_path() / "escape"));
}

TEST_P(ObjectStoreContract, PutGetSizeReadRangeDelete) {
  const auto data = Bytes(10000, 3);
  auto put = store_->Put("xorbs/ab/abcdef", data);
  ASSERT_TRUE(put.ok()) << put.status().ToString();
  EXPECT_TRUE(*put);

  auto size = store_->Size("xorbs/ab/abcdef");
  ASSERT_TRUE(size.ok());
  EXPECT_EQ(*size, data.size());

  auto got = store_->Get("xorbs/ab/abcdef");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(*got, data);

  std::vector<uint8_t> part(100);
  ASSERT_TRUE(store_->ReadRange("xorbs/ab/abcdef", 500, part).ok());
  EXPECT_TRUE(std::equal(part.begin(), part.end(), data.begin() + 500));
  // The last byte, an empty read at the end, and the whole object are inside.
  std::vector<uint8_t> one(1);
  ASSERT_TRUE(store_->ReadRange("xorbs/ab/abcdef", 9999, one).ok());
  EXPECT_EQ(one[0], data[9999]);
  EXPECT_TRUE(store_->ReadRange("xorbs/ab/abcdef", 10000, {}).ok());
  std::vector<uint8_t> all(10000);
  EXPECT_TRUE(store_->ReadRange("xorbs/ab/abcdef", 0, all).ok());
  EXPECT_EQ(all, data);

  ASSERT_TRUE(store_->Delete("xorbs/ab/abcdef").ok());
  EXPECT_EQ(store_->Get("xorbs/ab/abcdef").status().code(), Code::kNotFound);
  EXPECT_EQ(store_->Size("xorbs/ab/abcdef").status().code(), Code::kNotFound);
  EXPECT_TRUE(store_->Delete("xorbs/ab/abcdef").ok());  // already absent is OK
  // After a delete the key can be written again.
  auto again = store_->Put("xorbs/ab/abcdef", data);
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(*again);
}

TEST_P(ObjectStoreContract, PutPartsStoresTheConcatenation) {
  const auto a = Bytes(1000, 1), b = Bytes(37, 2);
  const std::span<const uint8_t> parts[] = {a, {}, b};
  auto put = store_->PutParts("xorbs/ab/parts", parts);
  ASSERT_TRUE(put.ok()) << put.status().ToString();
  EXPECT_TRUE(*put);
  std::vector<uint8_t> joined = a;
  joined.insert(joined.end(), b.begin(), b.end());
  EXPECT_EQ(*store_->Get("xorbs/ab/parts"), joined);
  auto again = store_->PutParts("xorbs/ab/parts", parts);
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(*again);  // never rewritten
}

TEST_P(ObjectStoreContract, ListVisitsEveryObjectUnderAPrefixOnce) {
  ASSERT_TRUE(*store_->Put("xorbs/aa/one", Bytes(10, 1)));
  ASSERT_TRUE(*store_->Put("xorbs/ab/two", Bytes(20, 2)));
  ASSERT_TRUE(*store_->Put("shards/three", Bytes(30, 3)));
  ASSERT_TRUE(*store_->Put("xorbs/aa/gone", Bytes(5, 4)));
  ASSERT_TRUE(store_->Delete("xorbs/aa/gone").ok());
  const auto list = [&](std::string_view prefix) {
    std::vector<std::pair<std::string, uint64_t>> seen;
    const Status st = store_->List(prefix, [&](std::string_view key, uint64_t size) {
      seen.emplace_back(std::string(key), size);
      return Status::Ok();
    });
    EXPECT_TRUE(st.ok()) << st.ToString();
    std::sort(seen.begin(), seen.end());
    return seen;
  };
  using Seen = std::vector<std::pair<std::string, uint64_t>>;
  EXPECT_EQ(list(""), (Seen{{"shards/three", 30}, {"xorbs/aa/one", 10}, {"xorbs/ab/two", 20}}));
  EXPECT_EQ(list("xorbs/"), (Seen{{"xorbs/aa/one", 10}, {"xorbs/ab/two", 20}}));
  EXPECT_EQ(list("xorbs/aa"), (Seen{{"xorbs/aa/one", 10}}));
  EXPECT_EQ(list("nothing/"), Seen{});
  // The visitor's error stops the listing and is returned.
  int calls = 0;
  const Status stopped = store_->List("", [&](std::string_view, uint64_t) {
    ++calls;
    return Status::Cancelled("enough");
  });
  EXPECT_EQ(stopped.code(), Code::kCancelled);
  EXPECT_EQ(calls, 1);
}

TEST_P(ObjectStoreContract, EmptyObject) {
  ASSERT_TRUE(store_->Put("empty", {}).ok());
  EXPECT_EQ(*store_->Size("empty"), 0u);
  EXPECT_TRUE(store_->Get("empty")->empty());
  EXPECT_TRUE(store_->ReadRange("empty", 0, {}).ok());
  std::vector<uint8_t> one(1);
  EXPECT_EQ(store_->ReadRange("empty", 0, one).code(), Code::kOutOfRange);
}

TEST_P(ObjectStoreContract, ReadRangeBounds) {
  ASSERT_TRUE(store_->Put("shards/s", Bytes(100, 9)).ok());
  std::vector<uint8_t> buf(10);
  EXPECT_EQ(store_->ReadRange("shards/s", 91, buf).code(), Code::kOutOfRange);
  EXPECT_EQ(store_->ReadRange("shards/s", 101, {}).code(), Code::kOutOfRange);
  EXPECT_EQ(store_->ReadRange("shards/s", UINT64_MAX, buf).code(), Code::kOutOfRange);
  EXPECT_EQ(store_->ReadRange("shards/s", UINT64_MAX - 5, buf).code(), Code::kOutOfRange);
  EXPECT_TRUE(store_->ReadRange("shards/s", 90, buf).ok());
  EXPECT_EQ(store_->ReadRange("shards/missing", 0, buf).code(), Code::kNotFound);
  EXPECT_EQ(store_->Get("missing").status().code(), Code::kNotFound);
  EXPECT_EQ(store_->Size("shards").status().code(), Code::kNotFound);  // a directory
}

TEST_P(ObjectStoreContract, OpenFileReadsTheObjectEvenAfterItIsDeleted) {
  const auto data = Bytes(5000, 4);
  ASSERT_TRUE(store_->Put("xorbs/cd/cdef", data).ok());
  if (!GetParam().opens_files) {  // a store without files: the default
    EXPECT_EQ(store_->OpenFile("xorbs/cd/cdef").status().code(), Code::kUnimplemented);
    return;
  }
  auto file = store_->OpenFile("xorbs/cd/cdef");
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  ASSERT_TRUE(store_->Delete("xorbs/cd/cdef").ok());
  std::vector<uint8_t> read(data.size() + 10);
  EXPECT_EQ(::pread(file->get(), read.data(), read.size(), 0), static_cast<ssize_t>(data.size()));
  read.resize(data.size());
  EXPECT_EQ(read, data);
  EXPECT_EQ(store_->OpenFile("xorbs/cd/cdef").status().code(), Code::kNotFound);
  EXPECT_EQ(store_->OpenFile("xorbs").status().code(), Code::kNotFound);  // a directory
}

TEST_P(ObjectStoreContract, SecondPutDoesNotRewrite) {
  const auto data = Bytes(4096, 1);
  ASSERT_TRUE(*store_->Put("xorbs/00/x", data));
  auto second = store_->Put("xorbs/00/x", Bytes(4096, 2));  // different bytes: still untouched
  ASSERT_TRUE(second.ok());
  EXPECT_FALSE(*second);
  EXPECT_EQ(*store_->Get("xorbs/00/x"), data);
  EXPECT_EQ(Leftovers(), std::vector<std::string>{});
}

TEST_P(ObjectStoreContract, ConcurrentPutsOfOneKeyCreateOnce) {
  for (int round = 0; round < 10; ++round) {
    const std::string key = "xorbs/cc/k" + std::to_string(round);
    std::atomic<int> created{0}, failed{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 8; ++t) {
      threads.emplace_back([&] {
        auto r = store_->Put(key, Bytes(50000, static_cast<uint8_t>(round)));
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
    EXPECT_EQ(*store_->Get(key), Bytes(50000, static_cast<uint8_t>(round)));
  }
  EXPECT_EQ(Leftovers(), std::vector<std::string>{});
}

TEST_P(ObjectStoreContract, ConcurrentPutsOfManyKeys) {
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 20; ++i) {
        const std::string key =
            "xorbs/" + std::to_string(i % 4) + "/t" + std::to_string(t) + "-" + std::to_string(i);
        auto r = store_->Put(key, Bytes(100, static_cast<uint8_t>(t + i)));
        EXPECT_TRUE(r.ok() && *r) << key;
      }
    });
  }
  for (auto& t : threads) t.join();
  for (int t = 0; t < 8; ++t) {
    for (int i = 0; i < 20; ++i) {
      const std::string key =
          "xorbs/" + std::to_string(i % 4) + "/t" + std::to_string(t) + "-" + std::to_string(i);
      EXPECT_EQ(*store_->Get(key), Bytes(100, static_cast<uint8_t>(t + i)));
    }
  }
}

}  // namespace
}  // namespace xet::testing::object_store_test
