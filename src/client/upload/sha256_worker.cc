#include "client/upload/sha256_worker.h"

namespace xet {

void Sha256Worker::Update(std::span<const uint8_t> block) {
  if (!thread_) thread_.emplace();
  thread_->Start([this, block] { sha_.Update(block); });
}

Sha256Digest Sha256Worker::Finish() {
  Wait();
  Sha256Digest digest = sha_.Finish();
  sha_ = Sha256();
  return digest;
}

}  // namespace xet
