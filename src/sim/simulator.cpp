#include "sim/simulator.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <queue>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>

#include "core/cancel.h"
#include "core/error.h"
#include "sim/app_model.h"

namespace trainplan::sim {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

struct Event {
  double time;
  int job;
  long version;
  bool operator>(const Event& o) const { return time > o.time || (time == o.time && job > o.job); }
};

class Engine {
 public:
  Engine(const std::vector<JobSpec>& specs, Policy& policy, const Estimator& est, const Estimator& truth,
         const SimOptions& opts)
      : policy_(policy), est_(est), truth_(truth), opts_(opts) {
    groups_ = opts.groups.empty() ? std::vector<NodeGroup>{{"", opts.nodes, opts.gpus_per_node}} : opts.groups;
    for (const NodeGroup& g : groups_) {
      clusters_.emplace_back(g.nodes, g.gpus_per_node, opts.placement);
      total_gpus_ += clusters_.back().total_gpus();
      largest_group_ = std::max(largest_group_, clusters_.back().total_gpus());
    }
    gpu_seconds_by_group_.assign(groups_.size(), 0.0);
    for (const Cluster& c : clusters_) group_views_.push_back({c.total_gpus(), c.gpus_per_node()});
    order_.resize(specs.size());
    std::iota(order_.begin(), order_.end(), 0);
    std::stable_sort(order_.begin(), order_.end(), [&](int a, int b) { return specs[a].arrival < specs[b].arrival; });
    jobs_.resize(specs.size());
    for (size_t i = 0; i < specs.size(); ++i) {
      const JobSpec& s = specs[i];
      JobState& j = jobs_[i];
      j.id = static_cast<int>(i);
      j.spec = &s;
      if (s.gpus > largest_group_)
        throw InputError("", 0, "", "job '" + s.name + "' needs " + std::to_string(s.gpus) + " GPUs but " +
                                        (groups_.size() > 1 ? "the cluster's largest node group" : "the cluster") +
                                        " has " + std::to_string(largest_group_));
      j.work = s.app ? s.app->total_work() : s.duration;
      j.batch = s.batch;
    }
  }

  SimResult run() {
    SimResult res;
    res.policy = policy_.name();
    res.total_gpus = total_gpus_;
    res.groups = groups_;
    size_t next_arrival = 0, done = 0, n = jobs_.size();
    unsigned long loops = 0;
    double now = n ? jobs_[order_[0]].spec->arrival : 0;
    bool tick_mode = opts_.interval > 0;
    if (tick_mode) {
      // Every tick a job runs is a scheduling round: a rigid job of 1e13 s
      // at a 60 s interval is 1.7e11 of them, hours of work for a schedule
      // no round changes. Refused, where --interval 0 runs in milliseconds.
      constexpr double kMostRounds = 1e9;
      double longest = 0;
      for (const JobState& j : jobs_)
        if (!j.spec->app) longest = std::max(longest, j.work);
      if (longest / opts_.interval > kMostRounds)
        throw InputError("", 0, "--interval",
                         fmt::format("a job of {:g} s needs at least {:.3g} scheduling rounds at an interval of {:g} "
                                     "s, past the {:g} a simulation takes: give --interval 0 (the policy runs at "
                                     "each arrival, completion and wake-up) or a longer interval",
                                     longest, longest / opts_.interval, opts_.interval, kMostRounds));
    }
    double next_tick = tick_mode ? std::ceil(now / opts_.interval) * opts_.interval : kInf;
    double wakeup = kInf;
    while (done < n) {
      double t_event = kInf;
      while (!heap_.empty() && heap_.top().version != jobs_[heap_.top().job].version) heap_.pop();
      if (!heap_.empty()) t_event = heap_.top().time;
      double t_arrival = next_arrival < n ? jobs_[order_[next_arrival]].spec->arrival : kInf;
      compact();
      if (tick_mode && active_.empty() && next_tick < t_arrival)  // idle: skip empty ticks
        next_tick = std::ceil(t_arrival / opts_.interval) * opts_.interval;
      double t = std::min({t_event, t_arrival, next_tick, wakeup});
      if (t == kInf) throw std::logic_error("policy '" + policy_.name() + "' leaves jobs waiting forever");
      now = std::max(now, t);
      bool changed = false;
      // 1. Job events at `now`: epoch boundaries and completions.
      while (!heap_.empty() && heap_.top().time <= now) {
        if ((++loops & 1023) == 0) check_cancelled();
        Event e = heap_.top();
        heap_.pop();
        JobState& j = jobs_[e.job];
        if (e.version != j.version) continue;
        ++res.events;
        if (on_job_event(j, now)) {
          ++done;
          changed = true;
          if (opts_.on_progress) opts_.on_progress(done, n);
        }
      }
      // 2. Arrivals at `now`.
      while (next_arrival < n && jobs_[order_[next_arrival]].spec->arrival <= now) {
        JobState& j = jobs_[order_[next_arrival++]];
        j.last = now;
        ++res.events;
        if (j.work <= 0) {
          j.start = j.finish = j.spec->arrival;
          ++done;
          continue;
        }
        active_.push_back(&j);
        changed = true;
      }
      // 3. Scheduling.
      bool run_policy = tick_mode ? now >= next_tick : (changed || now >= wakeup);
      if (tick_mode && now >= next_tick) next_tick = (std::floor(now / opts_.interval) + 1) * opts_.interval;
      compact();
      if (run_policy && !active_.empty()) {
        ++res.schedules;
        check_cancelled();  // a scheduling step may take long on a large cluster (pollux's knapsack)
        double w = schedule(now);
        wakeup = tick_mode ? kInf : w;  // with ticks the policy runs on ticks only
        // Every GPU free, no job running, none to come, the policy placed
        // none and asks for no wake-up: each later tick asks it the same
        // question (without ticks the loop's t == kInf says so).
        if (tick_mode && running_.empty() && next_arrival == n && std::isinf(w))
          throw std::logic_error("policy '" + policy_.name() + "' leaves jobs waiting forever");
      } else if (active_.empty()) {
        wakeup = kInf;
      }
      if (opts_.record_use) {
        int used = 0;
        for (const Cluster& c : clusters_) used += c.total_gpus() - c.free_gpus();
        if (res.gpus_in_use.empty() || res.gpus_in_use.back().second != used) res.gpus_in_use.push_back({now, used});
      }
      if ((++loops & 1023) == 0) check_cancelled();
    }
    res.jobs.reserve(n);
    for (size_t i = 0; i < n; ++i) {
      const JobState& j = jobs_[i];
      JobResult r;
      r.name = j.spec->name;
      r.app = j.spec->app ? j.spec->app->name() : "";
      r.arrival = j.spec->arrival;
      r.start = j.start;
      r.finish = j.finish;
      r.jct = j.finish - j.spec->arrival;
      r.gpu_seconds = j.attained;
      r.restarts = j.restarts;
      r.gpus = j.gpus_at_finish;
      r.group = j.group;
      r.batch = j.batch;
      if (j.spec->deadline) r.met_deadline = r.jct <= *j.spec->deadline;
      res.jobs.push_back(std::move(r));
    }
    res.gpu_seconds_by_group = gpu_seconds_by_group_;
    return res;
  }

 private:
  // Brings progress and attained service of `j` up to time `t`.
  static void sync(JobState& j, double t) {
    if (j.gpus > 0 && t > j.last) {
      double from = std::max(j.last, j.run_from);
      if (t > from) j.progress += j.rate * (t - from);
      j.attained += j.gpus * (t - j.last);
    }
    j.last = std::max(j.last, t);
  }

  double target(const JobState& j) const {
    if (j.rigid()) return j.work;
    return j.spec->app->boundary(std::min(j.epoch + 1, j.spec->app->epochs()));
  }

  void push_event(JobState& j, double now) {
    ++j.version;
    if (j.gpus == 0 || j.rate <= 0) return;
    double from = std::max(now, j.run_from);
    double left = std::max(0.0, target(j) - j.progress);
    heap_.push({from + left / j.rate, j.id, j.version});
  }

  double true_rate(const JobState& j) const {
    if (j.rigid()) return j.gpus == j.spec->gpus ? 1.0 : 0.0;
    return j.spec->app_on(j.group)->rate(j.gpus, j.nodes, j.batch, j.epoch);
  }

  // Releases `j`'s GPUs at `now` (after sync), counting what it held on its group since placed.
  void release(JobState& j, double now) {
    clusters_[size_t(j.group)].release(j.placement);
    gpu_seconds_by_group_[size_t(j.group)] += j.gpus * (now - j.placed_at);
    j.placement.clear();
  }

  // Returns true when the job completed.
  bool on_job_event(JobState& j, double now) {
    sync(j, now);
    double tgt = target(j);
    // Reached, or so near that the time left is under the clock's resolution
    // at `now` (late in a long simulation, now + left == now): waiting for it
    // would put the same event at the same time forever.
    const bool running = j.gpus > 0 && j.rate > 0 && now >= j.run_from;
    if (j.progress >= tgt - 1e-9 * std::max(1.0, tgt) || (running && now + (tgt - j.progress) / j.rate <= now)) {
      j.progress = std::max(j.progress, tgt);
      if (!j.rigid()) ++j.epoch;
      if (j.rigid() || j.epoch >= j.spec->app->epochs()) {
        j.finish = now;
        j.progress = j.work;
        release(j, now);
        j.gpus_at_finish = j.gpus;
        j.gpus = 0;
        ++j.version;
        ++finished_in_active_;  // removed from active_ in one pass before the next schedule
        running_.erase(&j);
        return true;
      }
      j.rate = true_rate(j);
    }
    push_event(j, now);
    return false;
  }

  double schedule(double now) {
    // Only running jobs change between scheduling points.
    for (JobState* j : running_) sync(*j, now);
    SchedInput in;
    in.now = now;
    in.total_gpus = total_gpus_;
    in.gpus_per_node = clusters_.front().gpus_per_node();
    in.largest_group_gpus = largest_group_;
    in.groups = group_views_;
    in.restart_delay = opts_.restart_delay;
    in.jobs = &active_;
    in.est = &est_;
    in.truth = &truth_;
    std::vector<Decision> dec = policy_.schedule(in);
    want_.clear();
    int total = 0, named = 0, unnamed = 0;
    std::vector<int>& by_group = decided_by_group_;
    by_group.assign(clusters_.size(), 0);
    for (const Decision& d : dec) {
      if (d.gpus <= 0) continue;
      if (want_.count(d.job)) throw std::logic_error("policy '" + policy_.name() + "' decided twice for one job");
      // Named groups are checked against each group's GPUs, which a blind decision's placement could take first.
      if ((d.group >= 0 ? ++named : ++unnamed) && named && unnamed)
        throw std::logic_error("policy '" + policy_.name() + "' named node groups for some jobs and not for others");
      if (d.group < -1 || d.group >= int(clusters_.size()))
        throw std::logic_error("policy '" + policy_.name() + "' named node group " + std::to_string(d.group));
      want_[d.job] = d;
      total += d.gpus;
      if (d.group >= 0 && (by_group[size_t(d.group)] += d.gpus) > clusters_[size_t(d.group)].total_gpus())
        throw std::logic_error("policy '" + policy_.name() + "' allocated more GPUs than node group " +
                               std::to_string(d.group) + " has");
    }
    if (total > total_gpus_)
      throw std::logic_error("policy '" + policy_.name() + "' allocated " + std::to_string(total) + " GPUs of " +
                             std::to_string(total_gpus_));
    // Release every running job whose allocation changes (waiting jobs hold nothing).
    std::vector<JobState*> was_running(running_.begin(), running_.end());
    for (JobState* j : was_running) {
      auto it = want_.find(j->id);
      int g = it == want_.end() ? 0 : it->second.gpus;
      int b = it == want_.end() || j->rigid() ? j->batch : it->second.batch;
      const bool moves = it != want_.end() && it->second.group >= 0 && it->second.group != j->group;
      if (j->gpus > 0 && (g != j->gpus || b != j->batch || moves)) {
        release(*j, now);
        j->gpus = 0;
        j->rate = 0;
        ++j->version;
        running_.erase(j);
      }
    }
    // Place the new allocations in the policy's order.
    const JobState* nowhere = nullptr;  // a blind decision no group could place
    for (const Decision& d : dec) {
      if (d.gpus <= 0) continue;
      JobState& j = jobs_[d.job];
      if (j.gpus > 0) continue;  // unchanged
      const int batch = j.rigid() ? j.batch : d.batch > 0 ? d.batch : j.spec->batch;
      const int group = d.group >= 0 ? d.group : blind_group(j, d.gpus, batch);
      if (group < 0) {  // a blind decision with no room in any group that runs the job: it waits
        if (!nowhere) nowhere = &j;
        continue;
      }
      j.placement = clusters_[size_t(group)].place(d.gpus);
      if (j.placement.empty()) throw std::logic_error("placement failed");
      j.group = group;
      j.placed_at = now;
      j.gpus = d.gpus;
      j.nodes = Cluster::node_count(j.placement);
      j.batch = batch;
      if (j.start < 0) j.start = now;
      else ++j.restarts;
      j.run_from = now + opts_.restart_delay;
      j.last = now;
      j.rate = true_rate(j);
      running_.insert(&j);
      if (j.rate <= 0)
        throw std::logic_error("job '" + j.spec->name + "' cannot run on " + std::to_string(j.gpus) + " GPUs over " +
                               std::to_string(j.nodes) + " nodes at batch " + std::to_string(j.batch));
      push_event(j, now);
    }
    // With every GPU free, a blind decision placed nowhere never will be: the same decision would
    // come round again at every scheduling point.
    if (nowhere && running_.empty()) {
      const Decision& d = want_.at(nowhere->id);
      throw std::logic_error(fmt::format("policy '{}' gave job '{}' {} GPUs at batch {}, which no node group runs "
                                         "with all its GPUs free",
                                         policy_.name(), nowhere->spec->name, d.gpus, d.batch));
    }
    return policy_.next_wakeup(in);
  }

  // The group a blind decision of `gpus` GPUs at `batch` goes to: the job's
  // own if the GPUs are free there, else the first in the cluster's order
  // with room for them where the job runs at all; -1 for none. One group:
  // always it (a placement that fails there is the policy's error).
  int blind_group(const JobState& j, int gpus, int batch) const {
    if (clusters_.size() == 1) return 0;
    auto runs = [&](int k) {
      if (clusters_[size_t(k)].free_gpus() < gpus) return false;
      if (j.rigid()) return true;
      return j.spec->app_on(k)->rate(gpus, 0, batch, j.epoch) > 0;
    };
    if (runs(j.group)) return j.group;
    for (int k = 0; k < int(clusters_.size()); ++k)
      if (runs(k)) return k;
    return -1;
  }

  Policy& policy_;
  const Estimator& est_;
  const Estimator& truth_;
  SimOptions opts_;
  std::vector<NodeGroup> groups_;
  std::vector<Cluster> clusters_;  // one per group
  int total_gpus_ = 0, largest_group_ = 0;
  std::vector<GroupView> group_views_;      // the groups as policies see them
  std::vector<int> decided_by_group_;        // schedule()'s count of the GPUs decided on each group
  std::vector<double> gpu_seconds_by_group_;  // GPU-seconds held on each group by released jobs
  std::vector<JobState> jobs_;
  std::vector<int> order_;
  // Drops finished jobs from active_, keeping arrival order.
  void compact() {
    if (!finished_in_active_) return;
    active_.erase(std::remove_if(active_.begin(), active_.end(), [](const JobState* j) { return j->finish >= 0; }),
                  active_.end());
    finished_in_active_ = 0;
  }

  std::vector<JobState*> active_;
  std::unordered_set<JobState*> running_;
  size_t finished_in_active_ = 0;
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> heap_;
  std::unordered_map<int, Decision> want_;
};

}  // namespace

void check_schedule_times(double restart_delay, double interval) {
  // Bounded so that event times keep whole seconds apart: at 1e300 s adding
  // an epoch's duration changes nothing, and the clock would never move.
  if (!(restart_delay >= 0 && restart_delay <= kLongestSeconds))
    throw InputError("", 0, "--restart-delay", fmt::format("must be from 0 to {:g} seconds", kLongestSeconds));
  if (!(interval == 0 || (interval >= 1 && interval <= kLongestSeconds)))
    throw InputError("", 0, "--interval", fmt::format("must be 0 (at every event) or from 1 to {:g} seconds", kLongestSeconds));
}

SimResult simulate(const std::vector<JobSpec>& jobs, Policy& policy, const Estimator& est, const Estimator& truth,
                   const SimOptions& opts) {
  if (opts.groups.empty()) check_cluster(opts.nodes, opts.gpus_per_node);
  else check_groups(opts.groups);
  check_schedule_times(opts.restart_delay, opts.interval);
  Engine e(jobs, policy, est, truth, opts);
  return e.run();
}

void check_groups(const std::vector<NodeGroup>& groups) {
  if (groups.empty()) throw InputError("", 0, "--cluster", "no node group given");
  if (groups.size() > size_t(kMostNodeGroups))
    throw InputError("", 0, "--cluster", fmt::format("{} node groups: at most {}", groups.size(), kMostNodeGroups));
  int64_t total = 0;
  for (const NodeGroup& g : groups) {
    if (g.nodes < 1 || g.gpus_per_node < 1)
      throw InputError("", 0, "--cluster", fmt::format("{}: needs at least one node of at least one GPU", g.gpu));
    total += int64_t(g.nodes) * g.gpus_per_node;
    if (total > kMaxClusterGpus)
      throw InputError("", 0, "--cluster", fmt::format("more than the simulator's {} GPUs in all", kMaxClusterGpus));
  }
}

void check_cluster(int nodes, int gpus_per_node) {
  if (nodes < 1) throw InputError("", 0, "--nodes", "must be >= 1");
  if (gpus_per_node < 1) throw InputError("", 0, "--gpus-per-node", "must be >= 1");
  if (int64_t(nodes) * gpus_per_node > kMaxClusterGpus)
    throw InputError("", 0, "--nodes",
                     fmt::format("{} nodes of {} GPUs is more than the simulator's {} GPUs", nodes, gpus_per_node,
                                 kMaxClusterGpus));
}

}  // namespace trainplan::sim

