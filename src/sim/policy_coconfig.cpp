// coconfig (ours): at every scheduling point, choose each job's GPUs AND
// global batch with trainplan's models, to minimise average JCT at a low
// GPU cost.
//  1. For each GPU count g, the batch with the highest estimated goodput
//     (throughput x statistical efficiency) among candidate batches that
//     the application's measured range allows.
//  2. Each job's efficient size g*: GPUs are added while one more GPU (or a
//     few, to step over a placement dip) adds at least `min_gain` of the
//     job's current goodput per GPU: beyond that the cost grows faster
//     than the job speeds up.
//  3. Least remaining work first, in GPU-seconds at g* (a job that finishes
//     soon only by holding many GPUs is not short): each job gets g* while
//     GPUs last, then spare GPUs go where a step of any size cuts remaining
//     time by the largest share per GPU.
//  4. A running job keeps its GPU count where a larger one would not save it
//     the restart delay, or where free GPUs let it keep what a smaller one
//     would take; it keeps its batch unless a change saves the restart delay.
//     Every change stops the job for a restart, so re-planning must not thrash.
// On a cluster of several GPU types each job's efficient size is found on
// every group, the order is by its least remaining work over them, and each
// job in turn goes to the group where it would finish soonest on the GPUs
// still free there (plus a restart to leave the group it runs on); spare
// GPUs stay within their group.
#include <algorithm>
#include <cmath>
#include <limits>

#include "sim/goodput_batch.h"
#include "sim/policy.h"

namespace trainplan::sim {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

class Coconfig : public Policy {
 public:
  explicit Coconfig(const PolicyOptions& o) : min_gain_(o.coconfig_min_gain) {}
  std::string name() const override { return "coconfig"; }
  bool uses_estimates() const override { return true; }

  std::vector<Decision> schedule(const SchedInput& in) override {
    goodput_.forget_all_but(*in.jobs);
    const auto& jobs = *in.jobs;
    const size_t n = jobs.size();
    // One group unless the cluster mixes GPU types (a SchedInput without groups is one of all GPUs).
    const GroupView whole{in.total_gpus, in.gpus_per_node};
    const std::span<const GroupView> groups = in.groups.empty() ? std::span<const GroupView>(&whole, 1) : in.groups;
    const size_t kinds = groups.size();
    auto best_at = [&](size_t i, size_t k, int g) { return goodput_.at_on(in, *jobs[i], int(k), g); };
    auto cap = [&](size_t i, size_t k) { return most_gpus_on(*jobs[i], int(k), groups[k].total_gpus); };
    // 2. Efficient sizes, on each group.
    std::vector<std::vector<int>> want(n, std::vector<int>(kinds, 0));
    std::vector<std::vector<double>> t_want(n, std::vector<double>(kinds, kInf));
    std::vector<double> work(n, kInf);  // the least GPU-seconds at g* over the groups
    for (size_t i = 0; i < n; ++i) {
      const JobState& j = *jobs[i];
      for (size_t k = 0; k < kinds; ++k) {
        int g = j.rigid() ? j.spec->gpus : 1;
        if (!j.rigid()) {
          while (true) {
            double r = best_at(i, k, g).rate;
            int next = 0;
            for (int h = g + 1; h <= std::min(cap(i, k), g + 4); ++h)
              if (best_at(i, k, h).rate - r >= min_gain_ * (h - g) * r / g) {
                next = h;
                break;
              }
            if (!next) break;
            g = next;
          }
        }
        double r = best_at(i, k, g).rate;
        want[i][k] = g;
        t_want[i][k] = r > 0 ? j.remaining() / r : kInf;
        work[i] = std::min(work[i], t_want[i][k] * g);
      }
    }
    // 3. Least remaining work (GPU-seconds at g*) first; each job to the group where it would
    // finish soonest on what is free there (moving from the group it runs on costs a restart).
    std::vector<size_t> order(n);
    for (size_t i = 0; i < n; ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return work[a] < work[b]; });
    std::vector<int> alloc(n, 0), free(kinds);
    std::vector<size_t> on(n, 0);
    for (size_t k = 0; k < kinds; ++k) free[k] = groups[k].total_gpus;
    for (size_t i : order) {
      if (std::all_of(free.begin(), free.end(), [](int f) { return f <= 0; })) break;
      double soonest = kInf;
      for (size_t k = 0; k < kinds; ++k) {
        if (free[k] <= 0 || !std::isfinite(t_want[i][k])) continue;
        int g = std::min(want[i][k], free[k]);
        if (jobs[i]->rigid() && g < want[i][k]) continue;
        while (g > 0 && best_at(i, k, g).rate <= 0) --g;
        if (g <= 0) continue;
        const bool moves = jobs[i]->gpus > 0 && int(k) != jobs[i]->group;
        const double finish = jobs[i]->remaining() / best_at(i, k, g).rate + (moves ? in.restart_delay : 0);
        if (finish < soonest) soonest = finish, alloc[i] = g, on[i] = k;
      }
      if (alloc[i] > 0) free[on[i]] -= alloc[i];
    }
    // A running job keeps its GPU count where the planned one would not save
    // it a restart's time (grown), or where free GPUs let it keep what it has
    // (shrunk): each change stops the job for the restart delay.
    auto seconds_left = [&](size_t i, int g) {
      const double r = best_at(i, on[i], g).rate;
      return r > 0 ? jobs[i]->remaining() / r : kInf;
    };
    for (size_t i : order) {
      const int now_on = jobs[i]->gpus;
      if (now_on <= 0 || jobs[i]->rigid() || alloc[i] == 0 || alloc[i] == now_on || int(on[i]) != jobs[i]->group ||
          now_on > cap(i, on[i]))
        continue;
      int& spare = free[on[i]];
      if (alloc[i] > now_on && seconds_left(i, now_on) - seconds_left(i, alloc[i]) <= in.restart_delay) {
        spare += alloc[i] - now_on;
        alloc[i] = now_on;
      } else if (alloc[i] < now_on && now_on - alloc[i] <= spare && seconds_left(i, now_on) < seconds_left(i, alloc[i])) {
        spare -= now_on - alloc[i];
        alloc[i] = now_on;
      }
    }
    // Spare GPUs of each group, a step at a time to the job there whose remaining time a step
    // cuts by the largest share per GPU. Steps of any size: the next GPU alone may
    // be slower (onto a second node, or a batch that divides badly) where a few
    // more are faster. A share, not seconds: a plan holds until the next
    // scheduling point, over which a job's completion moves by that share of
    // the interval whatever work it has left, so seconds would hand the spare
    // GPUs to the longest job, which loses them as soon as others arrive.
    for (size_t k = 0; k < kinds; ++k)
      while (free[k] > 0) {
        double best_gain = 0;
        size_t to = 0;
        int step = 0;
        for (size_t i = 0; i < n; ++i) {
          if (alloc[i] == 0 || on[i] != k || jobs[i]->rigid()) continue;
          const double r0 = best_at(i, k, alloc[i]).rate;
          if (r0 <= 0) continue;
          const int now_on = int(k) == jobs[i]->group ? jobs[i]->gpus : 0;
          for (int h = 1; h <= std::min(free[k], cap(i, k) - alloc[i]); ++h) {
            const double r1 = best_at(i, k, alloc[i] + h).rate;
            if (r1 <= r0) continue;
            // Leaving the GPU count a job runs on costs it a restart; returning to it saves one.
            const double restart = now_on <= 0 ? 0.0
                                   : alloc[i] == now_on ? in.restart_delay
                                   : alloc[i] + h == now_on ? -in.restart_delay : 0.0;
            const double t0 = jobs[i]->remaining() / r0;
            const double gain = (t0 - jobs[i]->remaining() / r1 - restart) / t0 / h;  // the restart as a share of t0 too
            if (gain > best_gain) best_gain = gain, to = i, step = h;
          }
        }
        if (step == 0) break;
        alloc[to] += step;
        free[k] -= step;
      }
    // 4. Decisions; keep a running job's configuration unless changing it pays for the restart.
    std::vector<Decision> out;
    for (size_t i : order) {
      if (alloc[i] == 0) continue;
      const JobState& j = *jobs[i];
      const int g = alloc[i];
      out.push_back({j.id, g, goodput_.batch_to_run_on(in, j, int(on[i]), g), kinds > 1 ? int(on[i]) : -1});
    }
    return out;
  }

 private:
  double min_gain_;
  GoodputTable goodput_;
};

PolicyRegistrar reg("coconfig",
                    "ours: re-plan GPUs and batch of every job with the models (goodput-optimal batch, efficient GPU "
                    "count, least remaining GPU-seconds first)",
                    [](const PolicyOptions& o) { return std::make_unique<Coconfig>(o); });

}  // namespace
}  // namespace trainplan::sim
