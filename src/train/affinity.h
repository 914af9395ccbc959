// Which CPUs a rank's threads may run on.
//
// `trainplan profile` pins the ranks of a local trial to disjoint CPUs when
// they fit. A thread takes the CPU mask of the thread that creates it, so a
// pinned rank would also pin its communication helpers (Gloo's device loop
// and worker threads, the TCP store's server) to its one CPU, and every
// collective would wait for the scheduler to switch between the compute
// thread and a helper there: on two cores, a tensor-parallel all-reduce of
// 32 kB then costs about 3 ms instead of 0.5 ms (docs/lab/LLM-CPU.md).
#pragma once
#include <sched.h>

#include <string>
#include <vector>

namespace trainplan::train {

// For its lifetime, the calling thread may run on every online CPU, so that
// threads created meanwhile may too; the destructor gives the thread its
// own mask back. Nothing changes when the thread already has every CPU, when
// the OS refuses, or when TRAINPLAN_GLOO_HELPERS=pinned (helpers share the
// rank's CPUs, as before: kept for comparison).
class HelpersOnEveryCpu {
 public:
  HelpersOnEveryCpu();
  ~HelpersOnEveryCpu();
  HelpersOnEveryCpu(const HelpersOnEveryCpu&) = delete;
  HelpersOnEveryCpu& operator=(const HelpersOnEveryCpu&) = delete;

 private:
  cpu_set_t saved_{};
  bool widened_ = false;
};

// The calling thread's CPUs and the distinct CPU lists of the process's other
// threads, as the kernel writes them ("0", "0-1"); empty where /proc has none.
struct ThreadCpus {
  std::string this_thread;
  std::vector<std::string> other_threads;
};
ThreadCpus thread_cpus();

}  // namespace trainplan::train
