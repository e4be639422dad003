// Server-side file reading: the bytes of a stored file, reconstructed from its xorbs in the
// object store, for clients that cannot reconstruct (a plain `curl` of a resolve URL).
//
// Reads each term's chunk records with one ranged read per term, decompresses every chunk
// and checks it against the xorb's chunk table (its hash and uncompressed length), so a
// corrupted object is reported, never served. Memory is bounded by one term's bytes.
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>

#include "common/status.h"
#include "server/cache/xorb_record_cache.h"
#include "store/index_records.h"
#include "store/object_store.h"

namespace xet {

// Receives the file's bytes in order; returns false to stop early (client gone).
using ByteSink = std::function<bool(std::string_view)>;

// Writes bytes [first, last] (inclusive; requires first <= last < file.size) of `file` to
// `sink`. Returns OK when every byte was written or the sink stopped; Corruption when a
// xorb or chunk fails its checks (bytes already passed to the sink are then incomplete:
// the caller must end the response abnormally); NotFound / IoError from the store.
Status ReadFileRange(const FileRecord& file, uint64_t first, uint64_t last, XorbRecordCache& xorbs,
                     ObjectStore& objects, const ByteSink& sink);

}  // namespace xet
