// WorkerGroup: N threads running the same function, joined when the group is destroyed
// (RAII), so no path out of the owner's scope leaves a thread running or unjoined.
//
// The function decides itself when to return (a closed queue, a failure reported to a
// shared FirstError, ...); Join() and the destructor only wait for that. Not thread-safe:
// one owner starts, joins and destroys the group.
#pragma once

#include <cstddef>
#include <functional>
#include <thread>
#include <vector>

namespace xet {

class WorkerGroup {
 public:
  // An empty group: no threads.
  WorkerGroup() = default;
  // Starts `count` threads, each running `work` once.
  WorkerGroup(size_t count, const std::function<void()>& work);
  // Joins every thread still running.
  ~WorkerGroup() { Join(); }
  WorkerGroup(const WorkerGroup&) = delete;
  WorkerGroup& operator=(const WorkerGroup&) = delete;

  // Waits for every thread to return; afterwards the group is empty. Idempotent.
  void Join();

  size_t size() const { return threads_.size(); }

 private:
  std::vector<std::thread> threads_;
};

}  // namespace xet
