#include "client/cache/chunk_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "format/byte_io.h"

namespace xet {
namespace {

namespace fs = std::filesystem;

// File layout: magic (8) | chunk count u32 | reserved u32 | records length u64 |
// count x (hash 32 | size u64) | records.
constexpr char kMagic[8] = {'X', 'E', 'T', 'C', 'C', '0', '0', '1'};
constexpr size_t kHeaderSize = 24;
constexpr size_t kChunkEntrySize = 40;

uint64_t NowNs() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::system_clock::now().time_since_epoch())
                                   .count());
}

void PutU32(uint8_t* p, uint32_t v) { std::memcpy(p, &v, 4); }
void PutU64(uint8_t* p, uint64_t v) { std::memcpy(p, &v, 8); }
uint32_t GetU32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
uint64_t GetU64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

bool WriteAll(int fd, const uint8_t* p, size_t n) {
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    p += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

// Parses "<xorb hex>-<start>-<end>".
bool ParseName(const std::string& name, Hash* xorb, uint32_t* start, uint32_t* end) {
  if (name.size() < 68 || name[64] != '-') return false;
  auto h = Hash::FromHex(std::string_view(name).substr(0, 64));
  if (!h) return false;
  const size_t dash = name.find('-', 65);
  if (dash == std::string::npos) return false;
  try {
    size_t used = 0;
    const unsigned long s = std::stoul(name.substr(65, dash - 65), &used);
    if (used != dash - 65) return false;
    const unsigned long e = std::stoul(name.substr(dash + 1), &used);
    if (used != name.size() - dash - 1 || s >= e || e > UINT32_MAX) return false;
    *xorb = *h;
    *start = static_cast<uint32_t>(s);
    *end = static_cast<uint32_t>(e);
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

}  // namespace

Result<std::unique_ptr<ChunkCache>> ChunkCache::Open(const std::string& dir, uint64_t max_bytes) {
  std::error_code ec;
  fs::create_directories(fs::path(dir) / "tmp", ec);
  if (ec) return Status::IoError("chunk cache " + dir + ": " + ec.message());
  std::unique_ptr<ChunkCache> cache(new ChunkCache(dir, max_bytes));
  MutexLock lock(cache->mu_);  // uncontended: the cache is not shared yet
  // Leftover temporaries of an interrupted writer.
  for (const auto& e : fs::directory_iterator(fs::path(dir) / "tmp", ec)) {
    std::error_code ignored;
    fs::remove(e.path(), ignored);
  }
  for (const auto& sub : fs::directory_iterator(dir, ec)) {
    if (!sub.is_directory() || sub.path().filename() == "tmp") continue;
    std::error_code ec2;
    for (const auto& e : fs::directory_iterator(sub.path(), ec2)) {
      Hash x;
      uint32_t s = 0, en = 0;
      struct stat st {};
      if (!ParseName(e.path().filename().string(), &x, &s, &en) ||
          ::stat(e.path().c_str(), &st) != 0) {
        std::error_code ignored;
        fs::remove(e.path(), ignored);
        continue;
      }
      const uint64_t t = static_cast<uint64_t>(st.st_mtim.tv_sec) * 1000000000ull +
                         static_cast<uint64_t>(st.st_mtim.tv_nsec);
      const Key key{x, s, en};
      Slot& slot = cache->slots_[key];
      slot.bytes = static_cast<uint64_t>(st.st_size);
      cache->TouchLocked(key, slot, t);
      cache->total_ += static_cast<uint64_t>(st.st_size);
    }
  }
  cache->EvictLocked();
  return cache;
}

std::string ChunkCache::PathOf(const Key& k) const {
  const std::string hex = std::get<0>(k).ToHex();
  return dir_ + "/" + hex.substr(0, 2) + "/" + hex + "-" + std::to_string(std::get<1>(k)) + "-" +
         std::to_string(std::get<2>(k));
}

std::optional<ChunkCache::Entry> ChunkCache::Get(const Hash& xorb, uint32_t chunk_start,
                                                 uint32_t chunk_end) {
  Entry e;
  if (!GetInto(xorb, chunk_start, chunk_end, e)) return std::nullopt;
  return e;
}

namespace {

// Reads exactly `out.size()` bytes at `offset`.
bool ReadFully(int fd, std::span<uint8_t> out, uint64_t offset) {
  size_t done = 0;
  while (done < out.size()) {
    const ssize_t n =
        ::pread(fd, out.data() + done, out.size() - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

std::unique_ptr<ChunkCache::Reader> ChunkCache::OpenEntry(const Hash& xorb, uint32_t chunk_start,
                                                          uint32_t chunk_end) {
  const Key key{xorb, chunk_start, chunk_end};
  {
    MutexLock lock(mu_);
    auto it = slots_.find(key);
    if (it == slots_.end()) return nullptr;
    TouchLocked(key, it->second, NowNs());
  }
  const std::string path = PathOf(key);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    Erase(xorb, chunk_start, chunk_end);
    return nullptr;
  }
  struct stat st {};
  uint8_t header[kHeaderSize];
  bool ok = ::fstat(fd, &st) == 0 && st.st_size >= static_cast<off_t>(kHeaderSize) &&
            ReadFully(fd, header, 0) && std::memcmp(header, kMagic, 8) == 0;
  const uint32_t count = ok ? GetU32(header + 8) : 0;
  const uint64_t rec_len = ok ? GetU64(header + 16) : 0;
  const uint64_t table = uint64_t{count} * kChunkEntrySize;
  ok = ok && count == chunk_end - chunk_start &&
       static_cast<uint64_t>(st.st_size) == kHeaderSize + table + rec_len;
  std::vector<ChunkInfo> chunks;
  if (ok) {
    std::vector<uint8_t> entries(table);
    ok = ReadFully(fd, entries, kHeaderSize);
    chunks.resize(count);
    for (uint32_t i = 0; ok && i < count; ++i) {
      const uint8_t* p = entries.data() + size_t{i} * kChunkEntrySize;
      chunks[i] = {Hash::FromBytes(p), GetU64(p + 32)};
    }
  }
  if (!ok) {
    ::close(fd);
    Erase(xorb, chunk_start, chunk_end);
    return nullptr;
  }
  ::futimens(fd, nullptr);  // access time for LRU across runs (best effort)
  return std::unique_ptr<Reader>(new Reader(fd, std::move(chunks), kHeaderSize + table, rec_len));
}

ChunkCache::Reader::~Reader() { ::close(fd_); }

Status ChunkCache::Reader::ReadRecords(
    std::span<uint8_t> buffer, const std::function<Status(std::span<const uint8_t>)>& on_records) {
  if (buffer.empty()) return Status::InvalidArgument("chunk cache: empty read buffer");
  for (uint64_t done = 0; done < records_bytes_;) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(buffer.size(), records_bytes_ - done));
    if (!ReadFully(fd_, buffer.first(n), offset_ + done)) {
      return Status::IoError("chunk cache: entry ends early");
    }
    XET_RETURN_IF_ERROR(on_records(buffer.first(n)));
    done += n;
  }
  return Status::Ok();
}

bool ChunkCache::GetInto(const Hash& xorb, uint32_t chunk_start, uint32_t chunk_end, Entry& out) {
  std::unique_ptr<Reader> reader = OpenEntry(xorb, chunk_start, chunk_end);
  if (reader == nullptr) return false;
  out.chunks = std::move(reader->chunks_);
  out.records.resize(reader->records_bytes_);
  const bool ok = ReadFully(reader->fd_, out.records, reader->offset_);
  reader.reset();  // closes the file before a failed entry is removed
  if (!ok) Erase(xorb, chunk_start, chunk_end);
  return ok;
}

Status ChunkCache::Put(const Hash& xorb, uint32_t chunk_start, uint32_t chunk_end,
                       std::span<const uint8_t> records, std::span<const ChunkInfo> chunks) {
  if (chunk_end <= chunk_start || chunks.size() != chunk_end - chunk_start) {
    return Status::InvalidArgument("chunk cache: chunk list does not match the range");
  }
  XET_ASSIGN_OR_RETURN(auto writer, StartPut(xorb, chunk_start, chunk_end, records.size()));
  XET_RETURN_IF_ERROR(writer->Append(records));
  return writer->Commit(chunks);
}

Result<std::unique_ptr<ChunkCache::Writer>> ChunkCache::StartPut(const Hash& xorb,
                                                                 uint32_t chunk_start,
                                                                 uint32_t chunk_end,
                                                                 uint64_t records_bytes) {
  if (chunk_end <= chunk_start) return Status::InvalidArgument("chunk cache: empty range");
  Key key{xorb, chunk_start, chunk_end};
  const uint64_t total =
      kHeaderSize + uint64_t{chunk_end - chunk_start} * kChunkEntrySize + records_bytes;
  if (total > max_bytes_) {
    return std::unique_ptr<Writer>(new Writer(nullptr, std::move(key), "", -1, records_bytes));
  }
  std::string tmp;
  {
    MutexLock lock(mu_);
    tmp = dir_ + "/tmp/" + std::to_string(::getpid()) + "-" + std::to_string(++tmp_counter_);
  }
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return Status::IoError("chunk cache: create " + tmp + ": " + std::strerror(errno));
  return std::unique_ptr<Writer>(
      new Writer(this, std::move(key), std::move(tmp), fd, records_bytes));
}

ChunkCache::Writer::~Writer() {
  if (fd_ >= 0) {
    ::close(fd_);
    ::unlink(tmp_.c_str());
  }
}

Status ChunkCache::Writer::Append(std::span<const uint8_t> records) {
  if (cache_ == nullptr) return Status::Ok();
  if (fd_ < 0) return Status::Internal("chunk cache: append after commit");
  if (records.size() > records_bytes_ - written_) {
    return Status::InvalidArgument("chunk cache: more records than announced");
  }
  const uint64_t offset =
      kHeaderSize + uint64_t{std::get<2>(key_) - std::get<1>(key_)} * kChunkEntrySize + written_;
  size_t done = 0;
  while (done < records.size()) {
    const ssize_t n = ::pwrite(fd_, records.data() + done, records.size() - done,
                               static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Status::IoError("chunk cache: write " + tmp_ + ": " + std::strerror(errno));
    done += static_cast<size_t>(n);
  }
  written_ += records.size();
  return Status::Ok();
}

Status ChunkCache::Writer::Commit(std::span<const ChunkInfo> chunks) {
  const auto& [xorb, chunk_start, chunk_end] = key_;
  if (chunks.size() != chunk_end - chunk_start) {
    return Status::InvalidArgument("chunk cache: chunk list does not match the range");
  }
  if (written_ != records_bytes_ && cache_ != nullptr) {
    return Status::InvalidArgument("chunk cache: fewer records than announced");
  }
  if (cache_ == nullptr) return Status::Ok();  // too large to keep
  if (fd_ < 0) return Status::Internal("chunk cache: committed twice");
  std::vector<uint8_t> head(kHeaderSize + chunks.size() * kChunkEntrySize);
  std::memcpy(head.data(), kMagic, 8);
  PutU32(head.data() + 8, static_cast<uint32_t>(chunks.size()));
  PutU32(head.data() + 12, 0);
  PutU64(head.data() + 16, records_bytes_);
  uint8_t* p = head.data() + kHeaderSize;
  for (const ChunkInfo& c : chunks) {
    std::memcpy(p, c.hash.data(), 32);
    PutU64(p + 32, c.size);
    p += kChunkEntrySize;
  }
  const bool ok = WriteAll(fd_, head.data(), head.size());  // at offset 0: nothing read yet
  ::close(fd_);
  fd_ = -1;
  const std::string path = cache_->PathOf(key_);
  std::error_code ec;
  if (ok) fs::create_directories(fs::path(path).parent_path(), ec);
  if (!ok || ec || ::rename(tmp_.c_str(), path.c_str()) != 0) {
    ::unlink(tmp_.c_str());
    return Status::IoError("chunk cache: cannot store " + path);
  }
  const uint64_t total = head.size() + records_bytes_;
  MutexLock lock(cache_->mu_);
  auto [it, inserted] = cache_->slots_.try_emplace(key_);
  if (!inserted) cache_->total_ -= it->second.bytes;
  it->second.bytes = total;
  cache_->TouchLocked(key_, it->second, NowNs());
  cache_->total_ += total;
  cache_->EvictLocked();
  return Status::Ok();
}

void ChunkCache::Erase(const Hash& xorb, uint32_t chunk_start, uint32_t chunk_end) {
  MutexLock lock(mu_);
  EraseLocked({xorb, chunk_start, chunk_end});
}

void ChunkCache::EraseLocked(const Key& k) {
  auto it = slots_.find(k);
  if (it == slots_.end()) return;
  // `k` may be the erased slot's own key (EvictLocked passes it): use it before the erase.
  ::unlink(PathOf(k).c_str());
  total_ -= it->second.bytes;
  by_access_.erase({it->second.last_access, it->first});
  slots_.erase(it);
}

void ChunkCache::TouchLocked(const Key& k, Slot& slot, uint64_t when) {
  by_access_.erase({slot.last_access, k});
  slot.last_access = when;
  by_access_.insert({when, k});
}

void ChunkCache::EvictLocked() {
  while (total_ > max_bytes_ && !by_access_.empty()) {
    const Key oldest = by_access_.begin()->second;  // a copy: EraseLocked drops the entry
    EraseLocked(oldest);
  }
}

std::optional<std::pair<uint32_t, uint32_t>> ChunkCache::FindCovering(const Hash& xorb,
                                                                      uint32_t chunk) {
  constexpr int kMaxLooks = 64;
  MutexLock lock(mu_);
  // Entries of `xorb` starting at or before `chunk`, latest start first.
  auto it = slots_.upper_bound(Key{xorb, chunk, UINT32_MAX});
  for (int looks = 0; looks < kMaxLooks && it != slots_.begin(); ++looks) {
    --it;
    const auto& [x, start, end] = it->first;
    if (x != xorb) break;
    if (start <= chunk && chunk < end) return std::make_pair(start, end);
  }
  return std::nullopt;
}

uint64_t ChunkCache::size_bytes() const {
  MutexLock lock(mu_);
  return total_;
}
size_t ChunkCache::num_entries() const {
  MutexLock lock(mu_);
  return slots_.size();
}

}  // namespace xet
