// AnswerCache: a bounded, thread-safe LRU cache of whole reconstruction answers (the JSON
// body, kept as the pieces it was streamed in), for files many clients fetch at once — a
// popular checkpoint downloaded by a fleet asks for the same 100,000-term answer again and
// again, and building it costs more CPU than sending it.
//
// Safe to share between clients because an answer depends only on its key: file records
// and xorbs are content-addressed and never change once registered, and the signed URLs in
// an answer authorize themselves (they name no client). Access checks stay with the caller,
// before the lookup. The one thing that ages is the URLs' expiry: an entry is served only
// while its URLs have at least `min_url_lifetime_s` left, so a client gets a URL that is
// valid for at least that long, as if the answer were built fresh with a shorter TTL.
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/mutex.h"

namespace xet {

struct CachedAnswer {
  std::vector<std::string> pieces;  // the body, in order
  uint64_t bytes = 0;               // total size of the pieces
  int64_t urls_expire_at = 0;       // unix seconds: when the answer's URLs stop working
};

class AnswerCache {
 public:
  // Holds at most `capacity_bytes` of answers (0 disables the cache: Get always misses and
  // Put keeps nothing). An answer larger than a quarter of the capacity is not kept.
  AnswerCache(size_t capacity_bytes, int64_t min_url_lifetime_s);

  // The answer under `key` if present and its URLs live at least min_url_lifetime_s past
  // `now` (unix seconds); nullptr otherwise (an aged entry is dropped).
  std::shared_ptr<const CachedAnswer> Get(const std::string& key, int64_t now);

  // Stores `answer` under `key`, replacing any entry, evicting least recently used ones.
  void Put(const std::string& key, std::shared_ptr<const CachedAnswer> answer);

  // Drops every entry (e.g. when the base of the URLs changes).
  void Clear();

  size_t bytes() const;

 private:
  struct Entry {
    std::shared_ptr<const CachedAnswer> answer;
    std::list<std::string>::iterator lru_pos;
  };
  void EraseLocked(std::unordered_map<std::string, Entry>::iterator it) REQUIRES(mu_);

  const size_t capacity_bytes_;
  const int64_t min_url_lifetime_s_;
  mutable Mutex mu_;
  std::list<std::string> lru_ GUARDED_BY(mu_);  // front = most recently used
  std::unordered_map<std::string, Entry> entries_ GUARDED_BY(mu_);
  size_t bytes_ GUARDED_BY(mu_) = 0;
};

}  // namespace xet
