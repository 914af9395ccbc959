#include "train/epoll_backoff.h"

#include <sys/epoll.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "train/spin_backoff.h"

namespace trainplan::train {
namespace {

std::atomic<int64_t> g_waits{0};
std::atomic<int64_t> g_pauses{0};

bool backoff_enabled() {
  static const bool enabled = [] {
    const char* v = std::getenv(kEpollBackoffVariable);
    return !(v && std::strcmp(v, "off") == 0);
  }();
  return enabled;
}

int64_t monotonic_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

EpollBackoffCounts epoll_backoff_counts() {
  return {backoff_enabled(), g_waits.load(std::memory_order_relaxed), g_pauses.load(std::memory_order_relaxed)};
}

nlohmann::json epoll_backoff_fields() {
  const EpollBackoffCounts c = epoll_backoff_counts();
  return {{"epoll_backoff", c.enabled ? "on" : "off"}, {"epoll_waits", c.waits}, {"epoll_pauses", c.pauses}};
}

}  // namespace trainplan::train

// Replaces the C library's epoll_wait for the whole process (see the header).
extern "C" int epoll_wait(int epfd, struct epoll_event* events, int maxevents, int timeout) {
  using namespace trainplan::train;
  g_waits.fetch_add(1, std::memory_order_relaxed);
  if (!backoff_enabled()) return epoll_pwait(epfd, events, maxevents, timeout, nullptr);
  thread_local SpinBackoff backoff;
  if (backoff.before_wait(monotonic_ns())) {
    g_pauses.fetch_add(1, std::memory_order_relaxed);
    std::this_thread::sleep_for(std::chrono::nanoseconds(backoff.options().pause_ns));
  }
  const int rv = epoll_pwait(epfd, events, maxevents, timeout, nullptr);
  const int saved = errno;
  backoff.after_wait(rv, monotonic_ns());
  errno = saved;
  return rv;
}
