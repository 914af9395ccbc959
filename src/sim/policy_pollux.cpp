// pollux: Pollux's scheduling objective (Qiao et al., OSDI 2021; AdaptDL's
// scheduler, sched/adaptdl_sched/policy/pollux.py and speedup.py), to compare
// our coconfig with the policy it competes with inside one simulator.
//  * A job's speedup on g GPUs is its best goodput there (throughput x
//    statistical efficiency at the goodput-optimal batch) over its best goodput
//    on one GPU.
//  * A running job whose GPU count changes gives up `pollux_restart_penalty`
//    (AdaptDL's 0.1) of its speedup, so that re-allocation must pay for itself.
//  * The allocation maximises the power mean of the speedups with exponent
//    `pollux_p` (-1: the paper's default, which favours the slowest jobs).
// Where Pollux differs: it searches node-level placements with a genetic
// algorithm (NSGA-II, 100 x 100) and keeps distributed jobs off each other's
// nodes; here an allocation is a GPU count per job, placed by the simulator,
// and the optimum over GPU counts is found exactly (dynamic programming over
// jobs and GPUs: the objective is a sum over jobs). When the jobs outnumber
// the GPUs a power mean with p <= 0 is zero whoever waits, so which jobs run
// is decided first: running jobs, then the others in arrival order (Pollux's
// job order), each while its least GPU count fits, and the optimum is over
// those; with p > 0 any job may wait.
#include <algorithm>
#include <cmath>
#include <limits>

#include "sim/goodput_batch.h"
#include "sim/policy.h"

namespace trainplan::sim {
namespace {

constexpr double kNone = -std::numeric_limits<double>::infinity();

class Pollux : public Policy {
 public:
  explicit Pollux(const PolicyOptions& o) : p_(o.pollux_p), penalty_(o.pollux_restart_penalty) {}
  std::string name() const override { return "pollux"; }
  bool uses_estimates() const override { return true; }

  // The term a job with speedup s adds to the objective: the power mean's
  // order, without its outer power (the number of terms is fixed).
  double utility(double s) const {
    if (p_ == 0) return std::log(s);
    return p_ < 0 ? -std::pow(s, p_) : std::pow(s, p_);
  }

  std::vector<Decision> schedule(const SchedInput& in) override {
    const auto& jobs = *in.jobs;
    const int total = in.total_gpus;
    auto rate = [&](size_t i, int g) { return goodput_.at(in, *jobs[i], g).rate; };
    std::vector<int> cap(jobs.size()), least(jobs.size(), 0);  // least: fewest GPUs the job runs on; 0: none
    for (size_t i = 0; i < jobs.size(); ++i) {
      cap[i] = most_gpus(*jobs[i], total);
      for (int g = jobs[i]->rigid() ? cap[i] : 1; g <= cap[i] && !least[i]; ++g)
        if (rate(i, g) > 0) least[i] = g;
    }
    // Which jobs the programme must place. With p <= 0 a job left waiting makes the mean zero
    // however the rest run, so the running jobs come first, then the others by arrival, each
    // while its least count fits (a job that does not fit is passed over for a later one that
    // does). With p > 0 a waiting job adds nothing, and the programme may leave any job out.
    std::vector<size_t> admitted;
    int left = total;
    for (bool running : {true, false})
      for (size_t i = 0; i < jobs.size(); ++i)
        if ((jobs[i]->gpus > 0) == running && least[i] > 0 && (p_ > 0 || least[i] <= left)) {
          admitted.push_back(i);
          left -= least[i];
        }
    // The most GPUs the admitted jobs can hold together: the programme's width, so that a
    // cluster far larger than its jobs costs no more memory or time than they do.
    long can_hold = 0;
    for (size_t i : admitted) can_hold += cap[i];
    const int width = int(std::min<long>(total, can_hold));
    // value[k]: the best objective of the jobs so far on k GPUs in all; pick[a][k]: job a's count there.
    std::vector<double> value(size_t(width) + 1, kNone), next;
    value[0] = 0;
    std::vector<std::vector<int>> pick(admitted.size(), std::vector<int>(size_t(width) + 1, 0));
    int reach = 0;  // the most GPUs the jobs so far can hold: no total above it has a value
    for (size_t a = 0; a < admitted.size(); ++a) {
      const size_t i = admitted[a];
      const JobState& j = *jobs[i];
      const double base = rate(i, least[i]) / least[i];  // one GPU's goodput (its least count's share where it needs more)
      // With p > 0, waiting (0 GPUs, utility 0) is one of the job's options.
      if (p_ > 0) next = value;
      else next.assign(value.size(), kNone);
      for (int g = least[i]; g <= cap[i]; ++g) {
        const double r = rate(i, g);
        if (r <= 0) continue;
        double s = r / base;
        if (j.gpus > 0 && g != j.gpus) s *= 1 - penalty_;
        const double u = utility(s);
        if (!std::isfinite(u)) continue;
        for (int k = 0; k <= reach && k + g <= width; ++k) {
          if (value[k] == kNone || value[k] + u <= next[k + g]) continue;
          next[k + g] = value[k] + u;
          pick[a][k + g] = g;
        }
      }
      // A job none of whose counts fits (every option priced out) waits, and the others go on.
      if (std::all_of(next.begin(), next.end(), [](double v) { return v == kNone; })) continue;
      value.swap(next);
      reach = std::min(width, reach + cap[i]);
      // (a job's row of `pick` holds 0 wherever its waiting was the better option)
    }
    std::vector<int> alloc(jobs.size(), 0);
    int k = int(std::max_element(value.begin(), value.end()) - value.begin());
    if (admitted.empty() || value[k] == kNone) return {};
    for (size_t a = admitted.size(); a-- > 0;) {
      alloc[admitted[a]] = pick[a][k];  // 0 for a job that waits: its row was never written
      k -= pick[a][k];
    }
    // Larger allocations placed first, so that they find whole nodes.
    std::vector<size_t> order;
    for (size_t i : admitted)
      if (alloc[i] > 0) order.push_back(i);
    std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) { return alloc[x] > alloc[y]; });
    std::vector<Decision> out;
    for (size_t i : order)
      out.push_back({jobs[i]->id, alloc[i], goodput_.batch_to_run(in, *jobs[i], alloc[i])});
    return out;
  }

 private:
  double p_, penalty_;
  GoodputTable goodput_;
};

PolicyRegistrar reg("pollux",
                    "Pollux's objective: the power mean (p = -1 by default) of each job's goodput speedup over one "
                    "GPU, a 10% penalty on re-allocation, optimised exactly over GPU counts",
                    [](const PolicyOptions& o) { return std::make_unique<Pollux>(o); });

}  // namespace
}  // namespace trainplan::sim
