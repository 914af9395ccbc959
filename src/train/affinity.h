// Which CPUs a rank's threads may run on.
//
// `trainplan profile` pins the ranks of a local trial to disjoint CPUs when
// they fit. A thread takes the CPU mask of the thread that creates it, so a
// pinned rank would also pin its communication helpers (Gloo's device loop
// and worker threads, the TCP store's server) to its one CPU, and every
// collective would wait for the scheduler to switch between the compute
// thread and a helper there: on two cores, a tensor-parallel all-reduce of
// 32 kB then costs about 3 ms instead of 0.5 ms (docs/lab/LLM-CPU.md).
// The profiler therefore tells each pinned rank, in kHelperCpusVariable, the
// CPUs it shares among all its ranks, and the helpers may run on those. A
// rank pinned by anyone else (taskset, numactl, srun --cpu-bind) is left as
// it was pinned.
#pragma once
#include <sched.h>

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace trainplan::train {

// Set by the launcher of a pinned rank: the CPUs its helpers may use, as a
// list of numbers and ranges ("0,1", "0-3,8").
inline constexpr const char* kHelperCpusVariable = "TRAINPLAN_HELPER_CPUS";
// "pinned" keeps the helpers on the rank's own CPUs even so (for comparison).
inline constexpr const char* kHelperPlacementVariable = "TRAINPLAN_GLOO_HELPERS";

// The CPUs of a list such as "0,2-3"; nullopt when the text is not such a
// list (empty, a bad number, a reversed range, a CPU past CPU_SETSIZE).
std::optional<std::vector<int>> parse_cpu_list(const std::string& text);

// For its lifetime, the calling thread may run on its own CPUs and those of
// kHelperCpusVariable, so that threads created meanwhile may too; the
// destructor gives the thread its own mask back. Nothing changes when the
// variable is absent or not a CPU list, when kHelperPlacementVariable is
// "pinned", or when the OS refuses (a cpuset narrower than the list is
// trimmed by the kernel).
class HelpersOnSharedCpus {
 public:
  HelpersOnSharedCpus();
  ~HelpersOnSharedCpus();
  HelpersOnSharedCpus(const HelpersOnSharedCpus&) = delete;
  HelpersOnSharedCpus& operator=(const HelpersOnSharedCpus&) = delete;

 private:
  cpu_set_t saved_{};
  bool widened_ = false;
};

// For a timing event: "compute_thread_cpus", the calling thread's CPUs, and
// "helper_thread_cpus", the distinct CPU lists of the process's other threads
// (communication helpers, and any BLAS or OpenMP pool), as the kernel writes
// them ("0", "0-1"); empty where /proc has none.
nlohmann::json thread_cpu_fields();

}  // namespace trainplan::train
