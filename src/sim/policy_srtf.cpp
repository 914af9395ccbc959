// srtf: shortest remaining time first with the simulator's own ground truth
// (an oracle no real scheduler has): a lower-bound reference. Preemptive;
// each job runs at its requested GPUs and batch; jobs that do not fit are
// skipped so that smaller ones behind them can run.
#include <algorithm>

#include "sim/policy.h"

namespace trainplan::sim {
namespace {

class Srtf : public Policy {
 public:
  std::string name() const override { return "srtf"; }
  std::vector<Decision> schedule(const SchedInput& in) override {
    std::vector<std::pair<double, const JobState*>> order;
    for (const JobState* j : *in.jobs) {
      double t = in.truth->remaining_time(*j, j->spec->gpus, j->spec->batch);
      // A running job also owes what is left of its restart delay; a waiting one all of it.
      double delay = j->gpus > 0 ? std::max(0.0, j->run_from - in.now) : in.restart_delay;
      order.push_back({t + delay, j});
    }
    std::stable_sort(order.begin(), order.end(), [](auto& a, auto& b) { return a.first < b.first; });
    std::vector<Decision> out;
    int free = in.total_gpus;
    for (auto& [t, j] : order) {
      if (j->spec->gpus > free) continue;
      out.push_back({j->id, j->spec->gpus, j->spec->batch});
      free -= j->spec->gpus;
    }
    return out;
  }
};

PolicyRegistrar reg("srtf", "shortest remaining time first with oracle remaining times (lower-bound reference), preemptive",
                    [](const PolicyOptions&) { return std::make_unique<Srtf>(); });

}  // namespace
}  // namespace trainplan::sim
