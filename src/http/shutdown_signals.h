// SIGINT / SIGTERM handling for a server's main thread:
//
//   int main() {
//     ShutdownSignals signals;  // first, before any thread starts
//     auto server = HttpServer::Start(...);
//     signals.Wait();           // blocks until SIGINT or SIGTERM
//     (*server)->Stop();
//   }
#pragma once

#include <signal.h>

#include <chrono>
#include <optional>

namespace xet {

class ShutdownSignals {
 public:
  // Blocks SIGINT and SIGTERM in the calling thread. Threads created afterwards inherit
  // the mask, so construct this before starting any thread: a signal then stays pending
  // until Wait() takes it instead of killing the process.
  ShutdownSignals();
  // Restores the calling thread's previous signal mask.
  ~ShutdownSignals();
  ShutdownSignals(const ShutdownSignals&) = delete;
  ShutdownSignals& operator=(const ShutdownSignals&) = delete;

  // Waits for SIGINT or SIGTERM and returns its number.
  int Wait();
  // Like Wait() with a time limit; nullopt when none arrived in time.
  std::optional<int> WaitFor(std::chrono::milliseconds timeout);

 private:
  sigset_t signals_;
  sigset_t previous_;
};

}  // namespace xet
