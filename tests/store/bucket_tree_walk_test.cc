// BucketTreeWalk over an in-memory key set, read the two ways the backends read: ranges
// with an exact lower bound and no row limit (SQLite), and ranges from the lower bound
// inclusive with a row limit (PostgreSQL), here with limits down to two rows per read. Every
// listing is compared, page by page through its cursors, with one computed independently
// from the set of paths.
#include "store/bucket_tree_walk.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <iterator>
#include <map>
#include <optional>
#include <ostream>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "store/bucket_keys.h"

namespace xet {
namespace {

struct Item {
  bool is_directory;
  std::string path;
  bool has_entry;  // the item carries the stored entry (files; directories with one)
  friend bool operator==(const Item&, const Item&) = default;
};

std::ostream& operator<<(std::ostream& os, const Item& i) {
  return os << (i.is_directory ? "d:" : "f:") << i.path << (i.has_entry ? "+" : "");
}

// The stored rows: key -> whether the row is an explicit directory entry.
using Rows = std::map<std::string, bool>;

// The listing, from the paths alone: in key order, where a directory item sorts as its
// range's first key (its path + "/").
std::vector<Item> Expected(const std::set<std::string>& files, const std::set<std::string>& dirs,
                           const std::string& prefix, bool recursive) {
  const std::string dir = prefix.empty() ? "" : prefix + "/";
  std::map<std::string, Item> by_key;
  auto add = [&](const std::string& path, bool is_dir) {
    if (!path.starts_with(dir) || path.size() == dir.size() || path == prefix) return;
    const std::string rest = path.substr(dir.size());
    const size_t slash = rest.find('/');
    if (recursive || (slash == std::string::npos && !is_dir)) {
      by_key[is_dir ? path + "/" : path] = Item{is_dir, path, true};
      return;
    }
    const std::string sub = dir + rest.substr(0, slash);
    by_key[sub + "/"] = Item{true, sub, dirs.count(sub) > 0};
  };
  for (const std::string& f : files) add(f, false);
  for (const std::string& d : dirs) add(d, true);
  std::vector<Item> out;
  for (auto& [key, item] : by_key) out.push_back(item);
  return out;
}

// One read of the walk's range. `max_rows` 0: no row limit, the lower bound exact (as
// SQLite reads); otherwise at most that many rows (>= 2) from the lower bound inclusive (as
// PostgreSQL reads).
void Read(const Rows& rows, size_t max_rows, BucketTreeWalk& walk) {
  auto it = rows.lower_bound(walk.lower());
  if (max_rows == 0 && !walk.lower_inclusive() && it != rows.end() && it->first == walk.lower()) {
    ++it;
  }
  size_t n = 0;
  for (; it != rows.end() && (max_rows == 0 || n < max_rows); ++it, ++n) {
    if (walk.upper() && it->first >= *walk.upper()) break;
    const std::string& key = it->first;
    const bool is_dir = it->second;
    auto next = walk.Offer(key, is_dir, 0, [&]() -> Result<BucketEntry> {
      BucketEntry e;
      e.is_directory = is_dir;
      e.path = is_dir ? key.substr(0, key.size() - 1) : key;
      return e;
    });
    EXPECT_TRUE(next.ok());
    if (!next.ok() || *next != BucketTreeWalk::Next::kMore) return;
  }
  if (max_rows != 0 && n == max_rows) {
    walk.ContinueAfter(std::prev(it)->first);  // a full read: more rows may follow
  } else {
    walk.EndOfRange();
  }
}

// Every page of a listing, through its cursors.
std::vector<Item> List(const Rows& rows, const std::string& prefix, bool recursive, size_t limit,
                       size_t max_rows, size_t* pages) {
  std::vector<Item> got;
  std::string cursor;
  *pages = 0;
  while (true) {
    if (*pages > rows.size()) {  // each page but the last holds a row of its own
      ADD_FAILURE() << "the listing does not end";
      return got;
    }
    auto walk = BucketTreeWalk::Begin(prefix, recursive, cursor, limit);
    EXPECT_TRUE(walk.ok()) << walk.status().ToString();
    if (!walk.ok()) return got;
    for (int reads = 0; !walk->done(); ++reads) {
      if (reads > 100000) {
        ADD_FAILURE() << "the walk does not end";
        return got;
      }
      Read(rows, max_rows, *walk);
    }
    BucketTreePage page = walk->TakePage();
    ++*pages;
    EXPECT_LE(page.items.size(), limit);
    for (const BucketTreeItem& i : page.items) {
      if (!i.entry.path.empty()) {
        EXPECT_EQ(i.entry.path, i.path);
      }
      got.push_back({i.is_directory, i.path, !i.entry.path.empty()});
    }
    if (!page.next_cursor) return got;
    EXPECT_EQ(page.items.size(), limit) << "only a full page promises more";
    cursor = *page.next_cursor;
  }
}

TEST(BucketTreeWalkTest, EveryListingMatchesThePathsHoweverTheRangesAreRead) {
  std::mt19937 rng(20261207);
  // Names around the key order's edges: '.' < '/' < '0' (DirUpper's byte) < 'a'.
  const std::vector<std::string> names = {"a", "b", "a.b", "a0", "a-", "0", "ab"};
  std::set<std::string> files, dirs;
  for (int i = 0; i < 400; ++i) {
    std::string p;
    const int depth = 1 + static_cast<int>(rng() % 4);
    for (int d = 0; d < depth; ++d) p += (d ? "/" : "") + names[rng() % names.size()];
    files.insert(p);
  }
  // Explicit directory entries: some of the directories that have files, and empty ones.
  for (const std::string& f : files) {
    for (size_t s = f.find('/'); s != std::string::npos; s = f.find('/', s + 1)) {
      if (rng() % 3 == 0) dirs.insert(f.substr(0, s));
    }
  }
  dirs.insert("empty");
  dirs.insert("a/empty");
  for (const std::string& d : dirs) files.erase(d);  // a path is a file or a directory
  Rows rows;
  for (const std::string& f : files) rows[f] = false;
  for (const std::string& d : dirs) rows[MarkerKey(d)] = true;

  std::set<std::string> prefixes = {"", "a", "a/b", "b", "a0", "empty", "a/empty", "nothing"};
  for (const std::string& d : dirs) {
    if (rng() % 4 == 0) prefixes.insert(d);
  }
  for (const std::string& prefix : prefixes) {
    for (bool recursive : {false, true}) {
      const std::vector<Item> want = Expected(files, dirs, prefix, recursive);
      for (size_t limit : {size_t{1}, size_t{2}, size_t{7}, size_t{1000}}) {
        for (size_t max_rows : {size_t{0}, size_t{2}, size_t{3}, limit + 3}) {
          size_t pages = 0;
          EXPECT_EQ(List(rows, prefix, recursive, limit, max_rows, &pages), want)
              << "prefix '" << prefix << "' recursive " << recursive << " limit " << limit
              << " rows per read " << max_rows;
          EXPECT_EQ(pages, std::max<size_t>(1, (want.size() + limit - 1) / limit));
        }
      }
    }
  }
}

TEST(BucketTreeWalkTest, RefusesWhatCannotStartAListing) {
  const auto code = [](std::string_view prefix, bool recursive, std::string_view cursor,
                       size_t limit) {
    return BucketTreeWalk::Begin(prefix, recursive, cursor, limit).status().code();
  };
  EXPECT_EQ(code("", true, "", 0), Status::Code::kInvalidArgument);
  EXPECT_EQ(code("", true, "zz", 10), Status::Code::kInvalidArgument);
  // A cursor of another listing: outside the prefix, a directory cursor in a recursive one,
  // a nested path in a non-recursive one.
  EXPECT_EQ(code("a", false, EncodeTreeCursor({false, "b/x"}), 10), Status::Code::kInvalidArgument);
  EXPECT_EQ(code("", true, EncodeTreeCursor({true, "a"}), 10), Status::Code::kInvalidArgument);
  EXPECT_EQ(code("a", false, EncodeTreeCursor({false, "a/b/c"}), 10),
            Status::Code::kInvalidArgument);
  EXPECT_EQ(code("a", false, EncodeTreeCursor({true, "a/b"}), 10), Status::Code::kOk);
}

TEST(BucketTreeWalkTest, AFilePrefixListsTheFileOnlyOnTheFirstPage) {
  BucketEntry file;
  file.path = "d/f";
  auto first = BucketTreeWalk::Begin("d/f", false, "", 10);
  ASSERT_TRUE(first.ok());
  const BucketTreePage page = first->FilePage(file);
  ASSERT_EQ(page.items.size(), 1u);
  EXPECT_EQ(page.items[0].path, "d/f");
  EXPECT_FALSE(page.items[0].is_directory);
  EXPECT_FALSE(page.next_cursor);
  auto resumed = BucketTreeWalk::Begin("d/f", false, EncodeTreeCursor({false, "d/f/x"}), 10);
  ASSERT_TRUE(resumed.ok());
  EXPECT_TRUE(resumed->FilePage(file).items.empty());
}

TEST(BucketTreeWalkTest, AReadErrorIsReturned) {
  auto walk = BucketTreeWalk::Begin("", true, "", 10);
  ASSERT_TRUE(walk.ok());
  auto next =
      walk->Offer("x", false, 0, [] { return Result<BucketEntry>(Status::Corruption("bad row")); });
  EXPECT_EQ(next.status().code(), Status::Code::kCorruption);
}

}  // namespace
}  // namespace xet
