#include "client/cache/local_shard_cache.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <system_error>
#include <vector>

#include "common/atomic_file.h"
#include "format/shard_parser.h"

namespace xet {
namespace fs = std::filesystem;

namespace {

Result<std::vector<uint8_t>> ReadWhole(const fs::path& path, uint64_t size) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::IoError("cannot open " + path.string());
  std::vector<uint8_t> bytes(size);
  in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(size));
  if (static_cast<uint64_t>(in.gcount()) != size) return Status::IoError("short read");
  return bytes;
}

}  // namespace

Result<ShardCacheLoad> LocalShardCache::Load(DedupIndex& index, uint64_t now) {
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec) return Status::IoError("shard cache " + dir_ + ": " + ec.message());
  struct Entry {
    fs::path path;
    uint64_t size;
    fs::file_time_type mtime;
  };
  std::vector<Entry> entries;
  for (fs::directory_iterator it(dir_, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->path().extension() != ".shard") continue;
    std::error_code e1, e2;
    const uint64_t size = it->file_size(e1);
    const auto mtime = it->last_write_time(e2);
    if (!e1 && !e2) entries.push_back({it->path(), size, mtime});
  }
  if (ec) return Status::IoError("shard cache " + dir_ + ": " + ec.message());
  std::sort(entries.begin(), entries.end(),
            [](const Entry& a, const Entry& b) { return a.mtime > b.mtime; });

  ShardCacheLoad load;
  uint64_t total = 0;
  for (const Entry& e : entries) {
    bool keep = total + e.size <= max_bytes_;
    if (keep) {
      auto bytes = ReadWhole(e.path, e.size);
      auto shard = bytes.ok() ? ParseShard(*bytes) : Result<Shard>(bytes.status());
      const bool expired =
          shard.ok() && shard->footer && !shard->footer->chunk_hash_hmac_key.IsZero() &&
          shard->footer->shard_key_expiry != 0 && shard->footer->shard_key_expiry <= now;
      keep = shard.ok() && !expired;
      if (keep) {
        total += e.size;
        ++load.shards_loaded;
        load.chunks_indexed += index.AddShard(*shard, now, XorbTrust::kUnconfirmed);
      }
    }
    if (!keep) {
      std::error_code rm;
      if (fs::remove(e.path, rm)) ++load.files_removed;
    }
  }
  return load;
}

Status LocalShardCache::Add(const std::string& name, std::span<const uint8_t> shard_bytes) {
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec) return Status::IoError("shard cache " + dir_ + ": " + ec.message());
  return WriteFileAtomically((fs::path(dir_) / (name + ".shard")).string(),
                             std::string(shard_bytes.begin(), shard_bytes.end()), 0644);
}

}  // namespace xet
