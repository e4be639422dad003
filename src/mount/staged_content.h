// A staged file as the new content of a partial upload (client/upload/partial_edit.h): the
// ranges the upload reads are made local first (bytes still only the remote version's are
// fetched through the staged file's remote read, chunk-exact through the range reader),
// then read from the staging file.
#pragma once

#include <cstdint>
#include <memory>

#include "client/upload/partial_edit.h"
#include "mount/staged_file.h"

namespace xet {

class StagedContent final : public EditedContent {
 public:
  // `file` and `remote` must outlive the object; `file` must not change meanwhile.
  StagedContent(StagedFile& file, const StagedFile::RemoteRead& remote)
      : file_(file), remote_(remote) {}

  Status Prepare(uint64_t start, uint64_t end) override;
  Result<std::unique_ptr<ByteSource>> Open(uint64_t start, uint64_t end) override;

 private:
  StagedFile& file_;
  const StagedFile::RemoteRead& remote_;
};

// The edit a staged file makes to the remote version (hash, size) it started from.
FileEdit EditOf(const StagedFile& file, const Hash& base_hash, uint64_t base_size);

}  // namespace xet
