#include "common/worker_group.h"

namespace xet {

WorkerGroup::WorkerGroup(size_t count, const std::function<void()>& work) {
  threads_.reserve(count);
  for (size_t i = 0; i < count; ++i) threads_.emplace_back(work);
}

void WorkerGroup::Join() {
  for (std::thread& t : threads_) t.join();
  threads_.clear();
}

}  // namespace xet
