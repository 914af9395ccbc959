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
// On a cluster of several GPU types (`pollux_types`, the default) a job's
// options are a GPU count on each node group, as in Sia (Jayaram Subramanya et
// al., SOSP 2023): its speedup there is its goodput on that group's GPUs over
// its best one-GPU goodput on any group, moving to another group costs the
// re-allocation penalty too, and the optimum is over every group's count
// jointly (the same programme over the product of the groups' GPU counts, up
// to kMostJointStates of them; beyond, the policy decides as if blind). Sia
// solves an integer programme over node-level configurations; here, as
// above, a count per job and group, placed by the simulator. With
// `pollux_types` false it decides GPU counts alone, blind to GPU types, and
// the simulator chooses the group (Decision::group).
#include <algorithm>
#include <cmath>
#include <limits>

#include "core/cancel.h"
#include "sim/goodput_batch.h"
#include "sim/policy.h"

namespace trainplan::sim {
namespace {

constexpr double kNone = -std::numeric_limits<double>::infinity();
// The most joint states (products of the groups' GPU counts plus one) the
// type-aware programme holds per job: 64 k, e.g. 255 x 255 GPUs in two groups.
constexpr long kMostJointStates = 1L << 16;

class Pollux : public Policy {
 public:
  explicit Pollux(const PolicyOptions& o)
      : p_(o.pollux_p), penalty_(o.pollux_restart_penalty), types_(o.pollux_types) {}
  std::string name() const override { return "pollux"; }
  bool uses_estimates() const override { return true; }

  // The term a job with speedup s adds to the objective: the power mean's
  // order, without its outer power (the number of terms is fixed).
  double utility(double s) const {
    if (p_ == 0) return std::log(s);
    return p_ < 0 ? -std::pow(s, p_) : std::pow(s, p_);
  }

  std::vector<Decision> schedule(const SchedInput& in) override {
    goodput_.forget_all_but(*in.jobs);
    if (types_ && in.groups.size() > 1) {
      long states = 1;
      for (const GroupView& g : in.groups) states = std::min(kMostJointStates + 1, states * (g.total_gpus + 1L));
      if (states <= kMostJointStates) return schedule_on_groups(in);
    }
    const auto& jobs = *in.jobs;
    const int total = in.total_gpus;
    auto rate = [&](size_t i, int g) { return goodput_.at(in, *jobs[i], g).rate; };
    std::vector<int> cap(jobs.size()), least(jobs.size(), 0);  // least: fewest GPUs the job runs on; 0: none
    for (size_t i = 0; i < jobs.size(); ++i) {
      cap[i] = most_gpus(*jobs[i], most_gpus_per_job(in));
      for (int g = jobs[i]->rigid() ? cap[i] : 1; g <= cap[i] && !least[i]; ++g)
        if (rate(i, g) > 0) least[i] = g;
    }
    const std::vector<size_t> admitted = admit(jobs, least, total);
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
      check_cancelled();  // a job's row costs its GPU counts times the cluster's: on 4,096 x 64 GPUs, seconds
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

  // The same programme with a GPU count per job on each node group: states
  // are the GPUs used on every group (mixed radix), and a job's options are
  // (group, count) pairs.
  std::vector<Decision> schedule_on_groups(const SchedInput& in) {
    const auto& jobs = *in.jobs;
    const size_t groups = in.groups.size();
    struct Option {
      int group, gpus;
      double rate;
    };
    std::vector<std::vector<Option>> options(jobs.size());
    std::vector<double> base(jobs.size(), 0);  // the best one-GPU goodput over the groups
    std::vector<int> least(jobs.size(), 0);    // the fewest GPUs the job runs on in any group; 0: none
    for (size_t i = 0; i < jobs.size(); ++i) {
      const JobState& j = *jobs[i];
      for (int k = 0; k < int(groups); ++k) {
        const int cap = most_gpus_on(j, k, in.groups[size_t(k)].total_gpus);
        bool first = true;
        for (int g = j.rigid() ? cap : 1; g <= cap; ++g) {
          const double r = goodput_.at_on(in, j, k, g).rate;
          if (r <= 0) continue;
          if (first) {
            base[i] = std::max(base[i], r / g);
            least[i] = least[i] ? std::min(least[i], g) : g;
            first = false;
          }
          options[i].push_back({k, g, r});
        }
      }
    }
    // Against the GPUs of all groups: a job's least count is the fewest it runs on in any group.
    const std::vector<size_t> admitted = admit(jobs, least, in.total_gpus);
    // Each group's width: its GPUs, or what the admitted jobs can hold there if less.
    std::vector<int> width(groups, 0);
    std::vector<long> can_hold(groups, 0), stride(groups, 1);
    for (size_t i : admitted) {
      std::vector<int> most(groups, 0);
      for (const Option& o : options[i]) most[size_t(o.group)] = std::max(most[size_t(o.group)], o.gpus);
      for (size_t k = 0; k < groups; ++k) can_hold[k] += most[k];
    }
    long states = 1;
    for (size_t k = 0; k < groups; ++k) {
      width[k] = int(std::min<long>(in.groups[k].total_gpus, can_hold[k]));
      stride[k] = states;
      states *= width[k] + 1L;
    }
    auto used = [&](long state, size_t k) { return int(state / stride[k] % (width[k] + 1L)); };
    std::vector<double> value(size_t(states), kNone), next;
    value[0] = 0;
    // pick[a][state]: 1 + the index of job a's option that reaches it; 0: the job waits.
    std::vector<std::vector<int>> pick(admitted.size(), std::vector<int>(size_t(states), 0));
    for (size_t a = 0; a < admitted.size(); ++a) {
      check_cancelled();
      const size_t i = admitted[a];
      const JobState& j = *jobs[i];
      if (p_ > 0) next = value;
      else next.assign(value.size(), kNone);
      for (size_t o = 0; o < options[i].size(); ++o) {
        const Option& opt = options[i][o];
        const size_t k = size_t(opt.group);
        if (opt.gpus > width[k]) continue;
        double sp = opt.rate / base[i];
        if (j.gpus > 0 && (opt.gpus != j.gpus || opt.group != j.group)) sp *= 1 - penalty_;
        const double u = utility(sp);
        if (!std::isfinite(u)) continue;
        for (long st = 0; st < states; ++st) {
          if (value[size_t(st)] == kNone || used(st, k) + opt.gpus > width[k]) continue;
          const long to = st + opt.gpus * stride[k];
          if (value[size_t(st)] + u <= next[size_t(to)]) continue;
          next[size_t(to)] = value[size_t(st)] + u;
          pick[a][size_t(to)] = int(o) + 1;
        }
      }
      if (std::all_of(next.begin(), next.end(), [](double v) { return v == kNone; })) continue;
      value.swap(next);
    }
    long st = long(std::max_element(value.begin(), value.end()) - value.begin());
    if (admitted.empty() || value[size_t(st)] == kNone) return {};
    std::vector<const Option*> chosen(jobs.size(), nullptr);
    for (size_t a = admitted.size(); a-- > 0;) {
      const int o = pick[a][size_t(st)];
      if (o == 0) continue;  // waits (or, with p <= 0, was priced out and skipped)
      const Option& opt = options[admitted[a]][size_t(o - 1)];
      chosen[admitted[a]] = &opt;
      st -= opt.gpus * stride[size_t(opt.group)];
    }
    std::vector<size_t> order;
    for (size_t i : admitted)
      if (chosen[i]) order.push_back(i);
    std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) { return chosen[x]->gpus > chosen[y]->gpus; });
    std::vector<Decision> out;
    for (size_t i : order) {
      const Option& o = *chosen[i];
      out.push_back({jobs[i]->id, o.gpus, goodput_.batch_to_run_on(in, *jobs[i], o.group, o.gpus), o.group});
    }
    return out;
  }

 private:
  // Which jobs the programme must place, by index into `jobs`; least[i] is the
  // fewest GPUs job i runs on (0: none). With p <= 0 a job left waiting makes
  // the mean zero however the rest run, so the running jobs come first, then
  // the others by arrival, each while its least count fits in `total` (a job
  // that does not fit is passed over for a later one that does). With p > 0 a
  // waiting job adds nothing, and the programme may leave any job out.
  std::vector<size_t> admit(const std::vector<JobState*>& jobs, const std::vector<int>& least, int total) const {
    std::vector<size_t> admitted;
    int left = total;
    for (bool running : {true, false})
      for (size_t i = 0; i < jobs.size(); ++i)
        if ((jobs[i]->gpus > 0) == running && least[i] > 0 && (p_ > 0 || least[i] <= left)) {
          admitted.push_back(i);
          left -= least[i];
        }
    return admitted;
  }

  double p_, penalty_;
  bool types_;
  GoodputTable goodput_;
};

PolicyRegistrar reg("pollux",
                    "Pollux's objective: the power mean (p = -1 by default) of each job's goodput speedup over one "
                    "GPU, a 10% penalty on re-allocation, optimised exactly over GPU counts",
                    [](const PolicyOptions& o) { return std::make_unique<Pollux>(o); });

}  // namespace
}  // namespace trainplan::sim
