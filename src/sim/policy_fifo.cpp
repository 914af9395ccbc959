// fifo: first come, first served, without preemption or backfilling: the
// oldest waiting job starts when its requested GPUs are free, and no later
// job may pass it. On a cluster of several GPU types the simulator places
// the decisions, blind to types: a head whose GPUs are free in all but in no
// one group waits there, and a later job that fits a group passes it.
#include "sim/policy.h"

namespace trainplan::sim {
namespace {

class Fifo : public Policy {
 public:
  std::string name() const override { return "fifo"; }
  std::vector<Decision> schedule(const SchedInput& in) override {
    std::vector<Decision> out;
    int free = in.total_gpus;
    for (const JobState* j : *in.jobs)
      if (j->gpus > 0) {
        out.push_back({j->id, j->gpus, j->batch});
        free -= j->gpus;
      }
    for (const JobState* j : *in.jobs) {
      if (j->gpus > 0) continue;
      if (j->spec->gpus > free) break;  // head of line blocks
      out.push_back({j->id, j->spec->gpus, j->spec->batch});
      free -= j->spec->gpus;
    }
    return out;
  }
};

PolicyRegistrar reg("fifo", "first come first served, no preemption, no backfill; requested GPUs and batch",
                    [](const PolicyOptions&) { return std::make_unique<Fifo>(); });

}  // namespace
}  // namespace trainplan::sim
