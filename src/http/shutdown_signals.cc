#include "http/shutdown_signals.h"

#include <pthread.h>

#include <cerrno>

namespace xet {

ShutdownSignals::ShutdownSignals() {
  sigemptyset(&signals_);
  sigaddset(&signals_, SIGINT);
  sigaddset(&signals_, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals_, &previous_);
}

ShutdownSignals::~ShutdownSignals() { pthread_sigmask(SIG_SETMASK, &previous_, nullptr); }

int ShutdownSignals::Wait() {
  while (true) {
    int signal = 0;
    if (sigwait(&signals_, &signal) == 0) return signal;
  }
}

std::optional<int> ShutdownSignals::WaitFor(std::chrono::milliseconds timeout) {
  auto seconds = std::chrono::duration_cast<std::chrono::seconds>(timeout);
  timespec ts{};
  ts.tv_sec = static_cast<time_t>(seconds.count());
  ts.tv_nsec = static_cast<long>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(timeout - seconds).count());
  while (true) {
    int signal = sigtimedwait(&signals_, nullptr, &ts);
    if (signal > 0) return signal;
    if (errno != EINTR) return std::nullopt;
  }
}

}  // namespace xet
