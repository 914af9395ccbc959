#include "core/cancel.h"

namespace trainplan {

namespace {
thread_local const CancelScope* current_scope = nullptr;
}  // namespace

CancelScope::CancelScope(Clock::time_point deadline, const std::atomic<bool>* stop, bool (*abandoned)())
    : deadline_(deadline), stop_(stop), abandoned_(abandoned), outer_(current_scope) {
  current_scope = this;
}

CancelScope::~CancelScope() { current_scope = outer_; }

const CancelScope* CancelScope::current() { return current_scope; }

void CancelScope::check() const {
  if (stop_ && stop_->load(std::memory_order_relaxed)) throw Cancelled{Cancelled::Why::kStop};
  const auto now = Clock::now();
  if (now >= deadline_) throw Cancelled{Cancelled::Why::kDeadline};
  if (abandoned_ && now >= next_probe_) {
    next_probe_ = now + kProbeInterval;
    if (abandoned_()) throw Cancelled{Cancelled::Why::kAbandoned};
  }
}

void check_cancelled() {
  if (const CancelScope* s = current_scope) s->check();
}

}  // namespace trainplan
