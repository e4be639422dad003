#include "client/sha256_worker.h"

#include <utility>

namespace xet {

Sha256Worker::Sha256Worker() : thread_([this] { Run(); }) {}

Sha256Worker::~Sha256Worker() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void Sha256Worker::Update(std::span<const uint8_t> block) {
  {
    std::lock_guard lock(mu_);
    pending_ = block;
  }
  cv_.notify_all();
}

void Sha256Worker::Wait() {
  std::unique_lock lock(mu_);
  cv_.wait(lock, [&] { return !pending_.has_value(); });
}

Sha256Digest Sha256Worker::Finish() {
  Wait();
  Sha256Digest digest = sha_.Finish();
  sha_ = Sha256();
  return digest;
}

void Sha256Worker::Run() {
  std::unique_lock lock(mu_);
  while (true) {
    cv_.wait(lock, [&] { return stop_ || pending_.has_value(); });
    if (stop_) return;
    const std::span<const uint8_t> block = *pending_;
    lock.unlock();
    sha_.Update(block);
    lock.lock();
    pending_.reset();
    cv_.notify_all();
  }
}

}  // namespace xet
