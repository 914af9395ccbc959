// Cooperative cancellation of long computations. A thread that may have to
// abandon what it computes (the server, at a request's time limit or when it
// stops) runs the computation inside a CancelScope; the library's long loops
// (model fits, cross-validation folds, plan searches) call check_cancelled(),
// which throws Cancelled once the innermost scope's deadline has passed or its
// stop flag is set. With no scope on the thread (the CLI) it never throws.
//
// Cancelled does not derive from std::exception on purpose: the library's
// handlers that catch std::exception to note a model that failed and go on
// (cross-validation, the server's conformal warm-up) must let it through, so
// that a cancelled computation unwinds to the scope's owner.
#pragma once
#include <atomic>
#include <chrono>

namespace trainplan {

struct Cancelled {
  // kAbandoned: the scope's `abandoned` probe said no one waits for the result (a client hung up).
  enum class Why { kDeadline, kStop, kAbandoned };
  Why why;
};

class CancelScope {
 public:
  using Clock = std::chrono::steady_clock;
  // Cancels at `deadline`, or as soon as `*stop` (may be null) reads true,
  // or once `abandoned` (may be null; asked on this scope's thread, at most
  // every kProbeInterval) returns true.
  CancelScope(Clock::time_point deadline, const std::atomic<bool>* stop, bool (*abandoned)() = nullptr);
  static constexpr auto kProbeInterval = std::chrono::milliseconds(50);
  ~CancelScope();
  CancelScope(const CancelScope&) = delete;
  CancelScope& operator=(const CancelScope&) = delete;

  Clock::time_point deadline() const { return deadline_; }
  const std::atomic<bool>* stop() const { return stop_; }
  bool (*abandoned() const)() { return abandoned_; }
  // The calling thread's innermost scope, or null. A computation that hands
  // work to other threads opens a scope with the same deadline and stop flag
  // on each of them, so that check_cancelled() there sees the request's limit
  // (and the same probe, which may answer on the scope's own thread only).
  static const CancelScope* current();
  // Throws Cancelled when this scope is cancelled.
  void check() const;

 private:
  Clock::time_point deadline_;
  const std::atomic<bool>* stop_;
  bool (*abandoned_)();
  mutable Clock::time_point next_probe_{};
  const CancelScope* outer_;
};

// Throws Cancelled when the calling thread's innermost CancelScope is
// cancelled; a no-op without one. Costs a clock read inside a scope: call it
// once per unit of work that takes microseconds or more, not per flop.
void check_cancelled();

}  // namespace trainplan
