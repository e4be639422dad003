// LocalObjectStore beyond the ObjectStore contract (that is
// tests/store/object_store_contract_test.cc): O_DIRECT sizes and tmpfs, the file left
// untouched by a second Put, keys that are directories, and temporary-file hygiene across
// reopen.
#include "store/local/local_object_store.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <span>
#include <string>
#include <vector>

#include "store/object_store_contract.h"
#include "support/temp_dir.h"

namespace xet::testing::object_store_test {
namespace {

namespace fs = std::filesystem;
using Code = Status::Code;

std::unique_ptr<ObjectStore> OpenStore(const std::string& root) {
  auto store = OpenLocalObjectStore(root);
  EXPECT_TRUE(store.ok()) << store.status().ToString();
  return std::move(store).value();
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

// PutFrom asks for ascending pieces of at most 4 MiB and stores exactly what they hold, for
// sizes around the direct-I/O boundaries; a piece reader's error fails the Put and leaves
// no object and no temporary file.
TEST(LocalObjectStore, PutFromCopiesPiecesAndStopsAtTheFirstError) {
  TempDir dir;
  auto opened = LocalObjectStore::Open(dir.path());
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  LocalObjectStore& store = **opened;
  const size_t sizes[] = {0, 1, (1u << 20) - 1, 1u << 20, (4u << 20) + 4095, (9u << 20) + 13};
  for (size_t size : sizes) {
    const auto data = Bytes(size, static_cast<uint8_t>(size + 3));
    const std::string key = "xorbs/cd/" + std::to_string(size);
    uint64_t next = 0;
    size_t pieces = 0;
    auto put = store.PutFrom(key, size, [&](uint64_t offset, std::span<uint8_t> out) {
      EXPECT_LE(out.size(), 4u << 20);
      EXPECT_LE(offset + out.size(), size);
      if (offset == 0) next = 0;  // a restart after direct I/O was refused
      EXPECT_EQ(offset, next);
      next = offset + out.size();
      ++pieces;
      std::copy(data.begin() + static_cast<ptrdiff_t>(offset),
                data.begin() + static_cast<ptrdiff_t>(offset + out.size()), out.begin());
      return Status::Ok();
    });
    ASSERT_TRUE(put.ok()) << size << ": " << put.status().ToString();
    EXPECT_TRUE(*put);
    EXPECT_TRUE(*store.Get(key) == data) << size;
    if (size > 0) {
      EXPECT_GE(pieces, (size + (4u << 20) - 1) / (4u << 20)) << size;
    }
  }
  // A reader failing on its second piece: IoError out, nothing in the directory.
  int calls = 0;
  auto failed = store.PutFrom("xorbs/ef/broken", 9u << 20, [&](uint64_t, std::span<uint8_t> out) {
    if (++calls == 2) return Status::IoError("remote went away");
    std::fill(out.begin(), out.end(), 7);
    return Status::Ok();
  });
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.status().code(), Code::kIoError);
  EXPECT_EQ(store.Size("xorbs/ef/broken").status().code(), Code::kNotFound);
  for (const auto& e : fs::recursive_directory_iterator(dir.path())) {
    EXPECT_FALSE(e.path().filename().string().starts_with(".tmp-")) << e.path();
  }
}

// ObjectStoreContract.SecondPutDoesNotRewrite checks the answers; here, that the file itself
// is not replaced or touched and nothing is written beside it.
TEST(LocalObjectStore, SecondPutLeavesTheFileUntouched) {
  TempDir dir;
  auto store = OpenStore(dir.path());
  const auto data = Bytes(4096, 1);
  ASSERT_TRUE(*store->Put("xorbs/00/x", data));
  const std::string path = dir.path() + "/xorbs/00/x";
  struct stat before {};
  ASSERT_EQ(::stat(path.c_str(), &before), 0);
  ::usleep(20000);
  ASSERT_TRUE(store->Put("xorbs/00/x", Bytes(4096, 2)).ok());  // different bytes
  struct stat after {};
  ASSERT_EQ(::stat(path.c_str(), &after), 0);
  EXPECT_EQ(before.st_ino, after.st_ino);
  EXPECT_EQ(before.st_mtim.tv_sec, after.st_mtim.tv_sec);
  EXPECT_EQ(before.st_mtim.tv_nsec, after.st_mtim.tv_nsec);
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

}  // namespace
}  // namespace xet::testing::object_store_test
