// FileRecordCache: the cache of decoded file records (a file's terms) read from the Index
// (see index_record_cache.h). A 100,000-term file is a 4.4 MB blob: without the cache every
// reconstruction request, ranged ones included, reads and decodes it again.
#pragma once

#include <cstddef>

#include "server/cache/index_record_cache.h"
#include "store/index.h"

namespace xet {

struct FileRecordTraits {
  using Record = FileRecord;
  static Result<std::optional<FileRecord>> Load(Index& index, const Hash& hash) {
    return index.GetFile(hash);
  }
  static const Hash& Key(const FileRecord& record) { return record.file_hash; }
  static size_t Bytes(const FileRecord& record) {
    return sizeof(FileRecord) + record.terms.size() * sizeof(FileTerm);
  }
};

using FileRecordCache = IndexRecordCache<FileRecordTraits>;

}  // namespace xet
