// PlanCache: the whole-file plans (FilePlan) of the files being read, so that one
// reconstruction request serves every read of a file while its signed URLs are valid.
//
// Contract:
//   - Single flight: concurrent Get()s of a file that has no valid plan share one fetch;
//     the others wait for it and get its result (its error too). A failed fetch is not
//     cached: the next Get asks again.
//   - A plan expires `ttl` after its fetch started (choose ttl below the life of the signed
//     URLs it holds); an expired plan is fetched again on its next Get.
//   - Bounded: at most `max_entries` plans are kept, the least recently used dropped first
//     (a plan still being fetched is never dropped; one a reader holds lives on with it).
//   - Forget() drops a file's plan; Refused() drops it only if it is still the given plan
//     (so that the readers who all saw one URL refused cause a single new fetch).
// Thread-safe. The fetch runs on the caller's thread without the lock held.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <unordered_map>

#include "client/cas/cas_client.h"
#include "client/download/file_plan.h"
#include "common/mutex.h"
#include "common/result.h"
#include "format/hash.h"

namespace xet {

class PlanCache {
 public:
  using Clock = std::function<std::chrono::steady_clock::time_point()>;
  // The whole file's reconstruction (with chunk detail when the server has it).
  using Fetch = std::function<Result<Reconstruction>(const Hash& file)>;

  // `clock` defaults to std::chrono::steady_clock::now. max_entries 0 is treated as 1.
  PlanCache(Fetch fetch, size_t max_entries, std::chrono::steady_clock::duration ttl,
            Clock clock = {});

  // The plan of `file` (`size` bytes, from the listing): the cached one while it is valid,
  // else fetched and built (FilePlan::Build's errors; InvalidArgument when a cached plan has
  // another size).
  Result<std::shared_ptr<const FilePlan>> Get(const Hash& file, uint64_t size);
  // Whether a valid plan of `file` is cached or being fetched.
  bool Has(const Hash& file);
  void Forget(const Hash& file);
  void Refused(const Hash& file, const std::shared_ptr<const FilePlan>& plan);

  uint64_t requests() const;  // fetches started
  size_t size() const;        // plans kept (and fetches in flight)

 private:
  // Guarded by mu_ (the analysis cannot name the cache's lock on another struct's members).
  struct Slot {
    bool ready = false;
    Status error;
    std::shared_ptr<const FilePlan> plan;
    std::chrono::steady_clock::time_point started;
    std::list<Hash>::iterator lru;
  };
  bool Valid(const Slot& s) const;
  void Drop(const Hash& file) REQUIRES(mu_);
  void Evict() REQUIRES(mu_);

  const Fetch fetch_;
  const size_t max_entries_;
  const std::chrono::steady_clock::duration ttl_;
  const Clock clock_;
  mutable Mutex mu_;
  CondVar cv_;  // a fetch finished
  std::unordered_map<Hash, std::shared_ptr<Slot>, HashHasher> slots_ GUARDED_BY(mu_);
  std::list<Hash> lru_ GUARDED_BY(mu_);  // most recently used first
  uint64_t requests_ GUARDED_BY(mu_) = 0;
};

}  // namespace xet
