#include "mount/staged_content.h"

namespace xet {

Status StagedContent::Prepare(uint64_t start, uint64_t end) {
  return file_.Fetch(start, end, remote_);
}

Result<std::unique_ptr<ByteSource>> StagedContent::Open(uint64_t start, uint64_t end) {
  if (start > end || end > file_.size()) {
    return Status::InvalidArgument("staged content: range past the end of the file");
  }
  return OpenFileRangeSource(file_.path(), start, end - start);
}

FileEdit EditOf(const StagedFile& file, const Hash& base_hash, uint64_t base_size) {
  FileEdit edit;
  edit.base_hash = base_hash;
  edit.base_size = base_size;
  edit.base_kept = std::min({file.base_kept(), base_size, file.size()});
  edit.new_size = file.size();
  edit.changed = file.changed();
  return edit;
}

}  // namespace xet
