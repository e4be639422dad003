// Live counters of a transfer, updated by the pipelines from any thread and read by the
// CLI's progress display. Every field is monotonic.
#pragma once

#include <atomic>
#include <cstdint>

namespace xet {

struct TransferStats {
  std::atomic<uint64_t> files_total{0};
  std::atomic<uint64_t> files_done{0};
  std::atomic<uint64_t> bytes_total{0};       // logical bytes of the files to transfer
  std::atomic<uint64_t> bytes_done{0};        // logical bytes processed (read or written)
  std::atomic<uint64_t> bytes_deduped{0};     // upload: logical bytes found already stored
  std::atomic<uint64_t> bytes_sent{0};        // upload: xorb + shard bytes sent on the wire
  std::atomic<uint64_t> bytes_predicted{0};   // upload: bytes in chunks the dedup index
                                              // predicted (checked, not scanned)
  std::atomic<uint64_t> bytes_received{0};    // download: bytes received on the wire
  std::atomic<uint64_t> bytes_from_cache{0};  // download: bytes served by the chunk cache
  std::atomic<uint64_t> retries{0};
};

}  // namespace xet
