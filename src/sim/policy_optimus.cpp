// optimus (Peng et al., EuroSys'18; docs/SIMULATOR.md) adapted to all-reduce GPU
// jobs: every job keeps its requested global batch; each waiting job first
// gets the fewest GPUs it runs on (one, unless its batch cannot be timed on
// one), in arrival order, then GPUs go one at a time to the job whose
// estimated remaining time drops the most, until GPUs run out or no drop is
// positive; on a cluster of several GPU types, only counts some node group
// runs the job on. Remaining times come from the simulator's estimator
// (fitted models unless --oracle). Re-planned at every scheduling point,
// with no hysteresis, as in the paper: every change costs a restart.
#include <algorithm>
#include <cmath>

#include "sim/app_model.h"
#include "sim/marginal_gain.h"
#include "sim/policy.h"
#include "sim/rate_table.h"

namespace trainplan::sim {
namespace {

class Optimus : public Policy {
 public:
  std::string name() const override { return "optimus"; }
  bool uses_estimates() const override { return true; }

  // The most GPUs `j` can use: its batch's limit, within the largest group.
  static int cap_of(const SchedInput& in, const JobState& j) {
    return std::min(j.spec->app_on(j.group)->max_gpus(j.spec->batch), most_gpus_per_job(in));
  }

  double remaining(const SchedInput& in, const JobState& j, int g) {
    double r = g > 0 ? table_.rate(*in.est, j, g, j.spec->batch) : 0;
    return r > 0 ? j.remaining() / r : std::numeric_limits<double>::infinity();
  }

  // Whether some node group of at least `g` GPUs runs `j` on `g` of them:
  // blind to GPU types, the policy gives counts and the simulator the group,
  // so a count no group can run would leave the job placed nowhere.
  bool runs_somewhere(const SchedInput& in, const JobState& j, int g) {
    if (in.groups.size() <= 1) return g <= in.total_gpus;
    for (size_t k = 0; k < in.groups.size(); ++k)
      if (in.groups[k].total_gpus >= g && table_.rate_on(*in.est, j, int(k), g, j.spec->batch) > 0) return true;
    return false;
  }

  std::vector<Decision> schedule(const SchedInput& in) override {
    table_.forget_all_but(*in.jobs);
    const auto& jobs = *in.jobs;
    std::vector<int> alloc(jobs.size(), 0);
    int free = in.total_gpus;
    for (size_t i = 0; i < jobs.size() && free > 0; ++i) {
      const JobState& j = *jobs[i];
      // The fewest GPUs the job runs on: one, unless its batch cannot be
      // timed on fewer (a trace without one-GPU placements).
      const int least = j.rigid() ? j.spec->gpus : 1, most = j.rigid() ? j.spec->gpus : cap_of(in, j);
      for (int g = least; g <= std::min(most, free); ++g)
        if (std::isfinite(remaining(in, j, g)) && (j.rigid() || runs_somewhere(in, j, g))) {
          alloc[i] = g;
          free -= g;
          break;
        }
    }
    // Marginal gain: the drop in remaining time from one more GPU.
    give_gpus_by_marginal_gain(alloc, free, [&](size_t i) {
      const JobState& j = *jobs[i];
      if (j.rigid() || alloc[i] == 0) return 0.0;
      if (alloc[i] >= cap_of(in, j) || !runs_somewhere(in, j, alloc[i] + 1)) return 0.0;
      return remaining(in, j, alloc[i]) - remaining(in, j, alloc[i] + 1);
    });
    std::vector<Decision> out;
    for (size_t i = 0; i < jobs.size(); ++i)
      if (alloc[i] > 0) out.push_back({jobs[i]->id, alloc[i], jobs[i]->spec->batch});
    return out;
  }

 private:
  RateTable table_;
};

PolicyRegistrar reg("optimus",
                    "greedy marginal gain in estimated remaining time, one GPU at a time; requested batch; fitted "
                    "models unless --oracle",
                    [](const PolicyOptions&) { return std::make_unique<Optimus>(); });

}  // namespace
}  // namespace trainplan::sim
