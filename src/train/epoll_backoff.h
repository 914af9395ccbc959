// trainplan-train's own epoll_wait, with SpinBackoff (train/spin_backoff.h)
// in front of the C library's.
//
// The trainer's executable exports `epoll_wait` (CMakeLists.txt links it
// with --export-dynamic-symbol), so the dynamic linker binds Gloo's calls,
// made from libgloo, to the definition in epoll_backoff.cpp, which sleeps
// before a wait when the calling thread spins and otherwise calls
// epoll_pwait(2) with no signal mask, which is epoll_wait(2). Nothing else in
// the trainer waits on epoll. Setting TRAINPLAN_EPOLL_BACKOFF=off in the
// environment keeps every wait as the C library's (for comparison).
#pragma once
#include <cstdint>

#include <nlohmann/json.hpp>

namespace trainplan::train {

inline constexpr const char* kEpollBackoffVariable = "TRAINPLAN_EPOLL_BACKOFF";

struct EpollBackoffCounts {
  bool enabled = true;  // false when kEpollBackoffVariable is "off"
  int64_t waits = 0;    // epoll_wait calls in this process, every thread
  int64_t pauses = 0;   // of which preceded by a pause
};

// Since the process started; 0 waits when the interposition is not in effect.
EpollBackoffCounts epoll_backoff_counts();

// For a timing event: "epoll_backoff" ("on" or "off"), "epoll_waits",
// "epoll_pauses".
nlohmann::json epoll_backoff_fields();

}  // namespace trainplan::train
