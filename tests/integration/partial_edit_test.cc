// UploadEdited (client/upload/partial_edit.h) against a real `xetstore serve`: for random
// edits of many shapes (overwrites in the middle, at the start and at the end, appends,
// truncations, several ranges, edits on chunk boundaries), chained so that each round edits
// the previous round's result, the composed file hash must equal the hash of chunking the
// new bytes whole (computed here with ChunkHashStream + FileHash, not with the code under
// test), the server must accept the composed shard, and reading the new file back must give
// the new bytes. Also: only window bytes are read, only new chunks are uploaded, and the
// cases where the partial path must not run.
#include "client/upload/partial_edit.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>

#include "client/cas/cas_client.h"
#include "client/download/range_reader.h"
#include "client/transfer_stats.h"
#include "client/transport/http_client.h"
#include "client/upload/file_hasher.h"
#include "format/merkle.h"
#include "support/server_process.h"
#include "support/test_support.h"

namespace xet {
namespace {

using testing::ServerProcess;
using Span = std::pair<uint64_t, uint64_t>;

// The new content in memory; counts the bytes the upload asked to make readable.
class MemoryContent final : public EditedContent {
 public:
  explicit MemoryContent(std::vector<uint8_t> data) : data_(std::move(data)) {}
  Status Prepare(uint64_t start, uint64_t end) override {
    EXPECT_LE(start, end);
    EXPECT_LE(end, data_.size());
    prepared_ += end - start;
    return Status::Ok();
  }
  Result<std::unique_ptr<ByteSource>> Open(uint64_t start, uint64_t end) override {
    if (start > end || end > data_.size()) return Status::InvalidArgument("range");
    return std::unique_ptr<ByteSource>(
        new MemorySource(std::span<const uint8_t>(data_).subspan(start, end - start)));
  }
  uint64_t prepared() const { return prepared_; }

 private:
  std::vector<uint8_t> data_;
  uint64_t prepared_ = 0;
};

std::vector<ChunkInfo> ChunksOf(std::span<const uint8_t> data) {
  ChunkHashStream s;
  s.Consume(data);
  return s.Finish();
}

// One edit applied to bytes in memory, and the FileEdit that describes it.
struct Edited {
  std::vector<uint8_t> data;
  FileEdit edit;
};

class PartialEditServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = std::make_unique<ServerProcess>(testing::MakeTempDir("partial-edit"));
    token_ = server_->CreateToken("write", "team/a");
    ASSERT_FALSE(token_.empty());
    tokens_ = MakeStaticTokenSource(XetToken{token_, server_->url() + "/", 0});
    cas_ = std::make_unique<CasClient>(http_, *tokens_);
    options_.min_base_size = 0;
    options_.upload.global_dedup = false;
    // The local shard cache lets one upload deduplicate against the previous ones.
    options_.upload.shard_cache_dir = testing::MakeTempDir("partial-edit-shards");
  }

  UploadedFile UploadWhole(const std::vector<uint8_t>& data) {
    Uploader up(*cas_, options_.upload);
    UploadItem item;
    item.name = "whole";
    item.size_hint = data.size();
    item.open = [&data]() -> Result<std::unique_ptr<ByteSource>> {
      return std::unique_ptr<ByteSource>(new MemorySource(data));
    };
    auto r = up.Upload(std::span<const UploadItem>(&item, 1));
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? (*r)[0] : UploadedFile{};
  }

  std::vector<uint8_t> Download(const Hash& file, uint64_t size) {
    RangeReader reader(*cas_, RangeReaderOptions{});
    auto s = reader.Open(file, size);
    std::vector<uint8_t> out(size);
    uint64_t done = 0;
    while (done < size) {
      auto n = s->Read(done, std::span<uint8_t>(out).subspan(done));
      EXPECT_TRUE(n.ok()) << n.status().ToString();
      if (!n.ok() || *n == 0) break;
      done += *n;
    }
    out.resize(done);
    return out;
  }

  // Uploads `e` as an edit of `base` and checks the result against a full hash of the new
  // bytes and a download. Returns the new file's hash.
  Hash Check(const Hash& base, uint64_t base_size, Edited& e, PartialEditStats* stats = nullptr) {
    e.edit.base_hash = base;
    e.edit.base_size = base_size;
    MemoryContent content(e.data);
    auto r = UploadEdited(*cas_, e.edit, content, options_, stats);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    if (!r.ok()) return Hash{};
    EXPECT_TRUE(r->has_value());
    if (!r->has_value()) return Hash{};
    const Hash want = FileHash(ChunksOf(e.data));
    EXPECT_EQ((*r)->file_hash, want);
    EXPECT_EQ((*r)->size, e.data.size());
    EXPECT_TRUE(Download((*r)->file_hash, e.data.size()) == e.data);
    last_prepared_ = content.prepared();
    return (*r)->file_hash;
  }

  HttpClient http_;
  std::unique_ptr<ServerProcess> server_;
  std::string token_;
  std::unique_ptr<CasTokenSource> tokens_;
  std::unique_ptr<CasClient> cas_;
  PartialEditOptions options_;
  uint64_t last_prepared_ = 0;
};

// Overwrites [off, off + n) of `data` with fresh random bytes.
Edited Overwrite(const std::vector<uint8_t>& data, std::vector<Span> ranges, uint64_t seed) {
  Edited e{data, {}};
  for (const auto& [off, end] : ranges) {
    const auto fresh = testing::RandomBytes(end - off, seed++);
    std::copy(fresh.begin(), fresh.end(), e.data.begin() + static_cast<ptrdiff_t>(off));
    e.edit.changed.push_back({off, end});
  }
  std::sort(e.edit.changed.begin(), e.edit.changed.end());
  e.edit.base_kept = data.size();
  e.edit.new_size = data.size();
  return e;
}

TEST_F(PartialEditServerTest, RandomEditsGiveTheFullUploadsHashAndBytes) {
  // A base of several terms: its middle, uploaded earlier as a file of its own, is
  // deduplicated into a term of another xorb.
  std::vector<uint8_t> data = testing::RandomBytes(3'000'000, 1);
  UploadWhole(std::vector<uint8_t>(data.begin() + 800'000, data.begin() + 2'200'000));
  UploadedFile base = UploadWhole(data);
  {
    auto recon = cas_->GetReconstruction(base.file_hash, std::nullopt, true);
    ASSERT_TRUE(recon.ok());
    ASSERT_GE(recon->terms.size(), 2u) << "the base should have several terms";
  }
  Hash current = base.file_hash;
  std::mt19937_64 rng(42);
  for (int round = 0; round < 40; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    const uint64_t size = data.size();
    const auto chunks = ChunksOf(data);
    std::vector<uint64_t> bounds{0};
    for (const ChunkInfo& c : chunks) bounds.push_back(bounds.back() + c.size);
    Edited e;
    switch (round % 8) {
      case 0: {  // middle
        const uint64_t off = size / 4 + rng() % (size / 2);
        e = Overwrite(data, {{off, off + 1 + rng() % 50'000}}, rng());
        break;
      }
      case 1:  // start
        e = Overwrite(data, {{0, 1 + rng() % 20'000}}, rng());
        break;
      case 2:  // end
        e = Overwrite(data, {{size - 1 - rng() % 20'000, size}}, rng());
        break;
      case 3: {  // several ranges, one on each side of a chunk boundary
        const uint64_t b = bounds[1 + rng() % (bounds.size() - 2)];
        const uint64_t far = rng() % (size - 10);
        std::vector<Span> r{{b - 1, b}, {b, b + 1}, {far, far + 10}};
        std::sort(r.begin(), r.end());
        if (r[2].first < r[1].second) r.pop_back();
        e = Overwrite(data, r, rng());
        break;
      }
      case 4: {  // append
        e = Overwrite(data, {}, rng());
        const auto more = testing::RandomBytes(1 + rng() % 300'000, rng());
        e.data.insert(e.data.end(), more.begin(), more.end());
        e.edit.new_size = e.data.size();
        e.edit.changed.push_back({size, e.data.size()});
        break;
      }
      case 5: {  // truncate
        const uint64_t keep = size - 1 - rng() % 200'000;
        e = Overwrite(data, {}, rng());
        e.data.resize(keep);
        e.edit.base_kept = keep;
        e.edit.new_size = keep;
        break;
      }
      case 6: {  // truncate, then grow with zeros and a write past the old end
        const uint64_t keep = size / 2 + rng() % (size / 4);
        e = Overwrite(data, {}, rng());
        e.data.resize(keep);
        e.data.resize(size + 5000, 0);
        const auto tail = testing::RandomBytes(100, rng());
        std::copy(tail.begin(), tail.end(), e.data.end() - 100);
        e.edit.base_kept = keep;
        e.edit.new_size = e.data.size();
        e.edit.changed = {{keep, e.data.size()}};
        break;
      }
      default: {  // one byte exactly on a chunk boundary, and the file's last byte
        const uint64_t b = bounds[1 + rng() % (bounds.size() - 2)];
        e = Overwrite(data, {{b, b + 1}, {size - 1, size}}, rng());
        break;
      }
    }
    const Hash next = Check(current, size, e);
    if (::testing::Test::HasFailure()) return;
    current = next;
    data = std::move(e.data);
  }
}

TEST_F(PartialEditServerTest, ReadsOnlyWindowsAndUploadsOnlyNewChunks) {
  const auto data = testing::RandomBytes(8'000'000, 7);
  const UploadedFile base = UploadWhole(data);
  // Three scattered 20 KB writes.
  Edited e =
      Overwrite(data, {{1'000'000, 1'020'000}, {4'000'000, 4'020'000}, {7'000'000, 7'020'000}}, 99);
  TransferStats ts;
  options_.upload.stats = &ts;
  PartialEditStats stats;
  Check(base.file_hash, data.size(), e, &stats);
  EXPECT_EQ(stats.windows, 3u);
  // Each window: the chunks the write touches and the few after it until two stable chunks.
  EXPECT_EQ(last_prepared_, stats.window_bytes);
  EXPECT_LT(stats.window_bytes, 3u * 8 * kMaxChunkSize);
  // The chunks of the new bytes that the base lacks, counted independently.
  const auto old_chunks = ChunksOf(data);
  std::set<Hash> old;
  for (const ChunkInfo& c : old_chunks) old.insert(c.hash);
  uint64_t new_bytes = 0;
  for (const ChunkInfo& c : ChunksOf(e.data)) {
    if (!old.count(c.hash)) new_bytes += c.size;
  }
  EXPECT_EQ(stats.fragment_bytes, new_bytes);
  // Without the server's window tails every window is read whole: more bytes, same file.
  PartialEditOptions whole_windows = options_;
  whole_windows.use_window_tails = false;
  MemoryContent again(e.data);
  PartialEditStats whole_stats;
  auto r = UploadEdited(*cas_, e.edit, again, whole_windows, &whole_stats);
  ASSERT_TRUE(r.ok() && r->has_value()) << r.status().ToString();
  EXPECT_EQ((*r)->file_hash, FileHash(ChunksOf(e.data)));
  EXPECT_GT(whole_stats.window_bytes, stats.window_bytes);
  EXPECT_EQ(whole_stats.windows, stats.windows);
  // Sent: the new chunks (random, so stored uncompressed) plus framing, and one shard.
  EXPECT_GE(ts.bytes_sent.load(), new_bytes);
  EXPECT_LT(ts.bytes_sent.load(), new_bytes + new_bytes / 10 + 64 * 1024);
}

TEST_F(PartialEditServerTest, ManyRangesAreMergedBeforeAsking) {
  // 20 scattered writes, at most 4 ranges per request: the nearest ones are merged (their
  // windows then cover the unchanged bytes between them too), and the result is the same.
  const auto data = testing::RandomBytes(4'000'000, 21);
  const UploadedFile base = UploadWhole(data);
  std::vector<Span> ranges;
  for (uint64_t i = 0; i < 20; ++i) {
    const uint64_t off = i * 190'000 + (i % 3) * 5'000 + 1'000;
    ranges.push_back({off, off + 10});
  }
  Edited e = Overwrite(data, ranges, 31);
  options_.max_dirty_ranges = 4;
  PartialEditStats stats;
  Check(base.file_hash, data.size(), e, &stats);
  EXPECT_GE(stats.windows, 1u);
  EXPECT_LE(stats.windows, 4u);
}

TEST_F(PartialEditServerTest, DeclinesWhenThePartialPathDoesNotApply) {
  const auto data = testing::RandomBytes(1'000'000, 3);
  const UploadedFile base = UploadWhole(data);
  Edited e = Overwrite(data, {{10, 20}}, 5);
  e.edit.base_hash = base.file_hash;
  e.edit.base_size = data.size();
  MemoryContent content(e.data);
  PartialEditOptions o = options_;
  o.min_base_size = data.size() + 1;  // too small a base
  auto r = UploadEdited(*cas_, e.edit, content, o);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->has_value());
  o = options_;
  o.max_changed_fraction = 0.000001;  // too much changed
  r = UploadEdited(*cas_, e.edit, content, o);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->has_value());
  // Everything truncated away: nothing of the base is left to reuse.
  Edited gone = Overwrite(data, {}, 1);
  gone.edit.base_hash = base.file_hash;
  gone.edit.base_size = data.size();
  gone.edit.base_kept = 0;
  gone.edit.new_size = 0;
  r = UploadEdited(*cas_, gone.edit, content, options_);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->has_value());
  EXPECT_EQ(content.prepared(), 0u);
  // A base the server does not know: NotFound, nothing read.
  e.edit.base_hash = FileHash(ChunksOf(e.data));
  r = UploadEdited(*cas_, e.edit, content, options_);
  EXPECT_EQ(r.status().code(), Status::Code::kNotFound) << r.status().ToString();
  EXPECT_EQ(content.prepared(), 0u);
  // A FileEdit that contradicts itself.
  e.edit.base_hash = base.file_hash;
  e.edit.base_kept = data.size() + 1;
  EXPECT_EQ(UploadEdited(*cas_, e.edit, content, options_).status().code(),
            Status::Code::kInvalidArgument);
}

TEST_F(PartialEditServerTest, UndeclaredChangeInsideAWindowNeverMakesAMix) {
  // The caller declares one changed range, but a byte a little after it (in the window's
  // unchanged chunks, which are referenced from the base and may not be read at all)
  // differs too. FileEdit promises the bytes outside `changed` are the base's, so the
  // upload may fail (the server refuses chunks whose verification does not match), register
  // the bytes handed over, or register the declared edit; never anything else.
  const auto data = testing::RandomBytes(2'000'000, 11);
  const UploadedFile base = UploadWhole(data);
  const auto chunks = ChunksOf(data);
  uint64_t b = 0;
  for (const ChunkInfo& c : chunks) {
    b += c.size;
    if (b > 500'100) break;
  }
  Edited e = Overwrite(data, {{500'000, 500'100}}, 12);
  const std::vector<uint8_t> declared = e.data;
  e.data[b + 10] ^= 0xff;  // in the chunk after the write's: not declared
  e.edit.base_hash = base.file_hash;
  e.edit.base_size = data.size();
  MemoryContent content(e.data);
  auto r = UploadEdited(*cas_, e.edit, content, options_);
  if (r.ok()) {
    ASSERT_TRUE(r->has_value());
    const Hash got = (*r)->file_hash;
    const Hash handed = FileHash(ChunksOf(e.data));
    const Hash edit = FileHash(ChunksOf(declared));
    ASSERT_TRUE(got == handed || got == edit);
    EXPECT_TRUE(Download(got, e.data.size()) == (got == handed ? e.data : declared));
  }
}

}  // namespace
}  // namespace xet
