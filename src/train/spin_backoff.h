// When an event loop that polls in a tight loop should give its CPU away.
//
// Gloo's TCP device loop waits with a level-triggered epoll_wait(2). When it
// is woken for a socket it does not then read (its Pair::handleEvents returns
// at once when another thread holds the pair's lock, for instance while that
// thread writes to the pair), the same event wakes it again at once, and the
// loop spins. Measured on two ranks of trainplan-train on a 2-core machine:
// about 115,000 epoll_wait calls a second, nearly all returning a readable
// socket within 20 us of the previous return, in runs of up to 5 ms. On a
// machine with a CPU a rank, the spin holds a CPU that the thread it waits
// for needs, until the scheduler preempts it: all-reduces of 0.5 ms took
// 3.7 or 7.5 ms, whole scheduler slices, in a share of steps that varied
// from run to run (docs/lab/PROFILING-NOISE.md).
//
// SpinBackoff recognises the spin from the outside: a wait that begins
// within `quick` of the previous one's return, which had reported events, is
// a repeat; after `repeats_before_pause` repeats in a row each further wait is
// preceded by a sleep of `pause`, so that the spinning thread leaves the CPU
// to the others. A wait that begins later, or follows one that reported
// nothing, ends the run. Not thread-safe: one instance per thread.
#pragma once
#include <cstdint>

namespace trainplan::train {

struct SpinBackoffOptions {
  // Repeats tolerated before pausing: a loop that handles a few ready
  // sockets in a row is not spinning.
  int repeats_before_pause = 4;
  // A wait that begins within this long of the previous return is a repeat.
  int64_t quick_ns = 20'000;
  // The sleep before each wait once the loop is spinning: long enough for a
  // preempted lock holder to run, short against a 0.5 ms all-reduce.
  int64_t pause_ns = 50'000;
};

class SpinBackoff {
 public:
  explicit SpinBackoff(SpinBackoffOptions options = {}) : options_(options) {}

  // Called before a wait that begins at `now_ns` (a monotonic clock): true
  // when the caller should sleep options().pause_ns first.
  bool before_wait(int64_t now_ns) {
    const bool repeat = last_events_ > 0 && now_ns - last_return_ns_ < options_.quick_ns;
    repeats_ = repeat ? repeats_ + 1 : 0;
    return repeats_ > options_.repeats_before_pause;
  }

  // Called when the wait returns at `now_ns` with `events` ready (the
  // result of epoll_wait: 0 on a timeout, -1 on an error).
  void after_wait(int events, int64_t now_ns) {
    last_events_ = events;
    last_return_ns_ = now_ns;
  }

  const SpinBackoffOptions& options() const { return options_; }
  int repeats() const { return repeats_; }

 private:
  SpinBackoffOptions options_;
  int last_events_ = 0;
  int64_t last_return_ns_ = 0;
  int repeats_ = 0;
};

}  // namespace trainplan::train
