// XorbRecordCache: the cache of xorb chunk tables read from the Index (see
// index_record_cache.h). Reconstruction answers touch up to thousands of xorbs per request;
// the cache keeps the hot tables in memory instead of re-reading ~40 KiB blobs from the
// database each time.
#pragma once

#include <cstddef>

#include "server/cache/index_record_cache.h"
#include "store/index.h"

namespace xet {

struct XorbRecordTraits {
  using Record = XorbRecord;
  static Result<std::optional<XorbRecord>> Load(Index& index, const Hash& hash) {
    return index.GetXorb(hash);
  }
  static const Hash& Key(const XorbRecord& record) { return record.hash; }
  static size_t Bytes(const XorbRecord& record) {
    return sizeof(XorbRecord) + record.chunks.size() * sizeof(XorbChunkRow);
  }
};

using XorbRecordCache = IndexRecordCache<XorbRecordTraits>;

}  // namespace xet
