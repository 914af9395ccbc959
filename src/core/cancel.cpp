#include "core/cancel.h"

namespace trainplan {

namespace {
thread_local const CancelScope* current_scope = nullptr;
}  // namespace

CancelScope::CancelScope(Clock::time_point deadline, const std::atomic<bool>* stop)
    : deadline_(deadline), stop_(stop), outer_(current_scope) {
  current_scope = this;
}

CancelScope::~CancelScope() { current_scope = outer_; }

const CancelScope* CancelScope::current() { return current_scope; }

void CancelScope::check() const {
  if (stop_ && stop_->load(std::memory_order_relaxed)) throw Cancelled{Cancelled::Why::kStop};
  if (Clock::now() >= deadline_) throw Cancelled{Cancelled::Why::kDeadline};
}

void check_cancelled() {
  if (const CancelScope* s = current_scope) s->check();
}

}  // namespace trainplan
