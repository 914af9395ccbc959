// tiresias (NSDI'19): discretised two-dimensional least-attained-service.
// A job's queue is the number of thresholds its attained GPU-time (GPUs x
// seconds held) has passed; lower queues go first; within a queue, jobs run
// in the order they entered it (2D-LAS), or by Gittins index when a job-size
// distribution is given. Jobs that do not fit are skipped (later, smaller
// ones may run); preemption happens when a job's queue changes priority
// relative to waiting jobs, i.e. at queue boundaries. Jobs run at their
// requested GPUs and batch.
#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <tuple>
#include <unordered_map>

#include "sim/policy.h"

namespace trainplan::sim {
namespace {

// Gittins index over an empirical distribution of job sizes (GPU-s).
class Gittins {
 public:
  explicit Gittins(std::vector<double> sizes) : s_(std::move(sizes)) {
    std::sort(s_.begin(), s_.end());
    prefix_.assign(s_.size() + 1, 0);
    for (size_t i = 0; i < s_.size(); ++i) prefix_[i + 1] = prefix_[i] + s_[i];
  }
  bool empty() const { return s_.empty(); }
  // P(S <= a + d | S > a) / E[min(S, a + d) - a | S > a], d = quantum.
  double index(double a, double d) const {
    size_t i = std::upper_bound(s_.begin(), s_.end(), a) - s_.begin();      // S > a from i
    size_t k = std::upper_bound(s_.begin(), s_.end(), a + d) - s_.begin();  // S <= a + d before k
    double alive = static_cast<double>(s_.size() - i);
    if (alive <= 0) return std::numeric_limits<double>::infinity();  // beyond every known size
    double done = static_cast<double>(k - i);
    double spent = (prefix_[k] - prefix_[i]) - a * done + static_cast<double>(s_.size() - k) * d;
    return spent > 0 ? done / spent : 0;
  }

 private:
  std::vector<double> s_, prefix_;
};

class Tiresias : public Policy {
 public:
  explicit Tiresias(const PolicyOptions& o) : thresholds_(o.tiresias_thresholds), gittins_(o.gittins_sizes) {
    std::sort(thresholds_.begin(), thresholds_.end());
  }
  std::string name() const override { return gittins_.empty() ? "tiresias" : "tiresias-gittins"; }

  int queue_of(double attained) const {
    // The tolerance keeps a job whose crossing time was rounded just short of
    // a threshold from waking the scheduler at the same instant forever.
    return static_cast<int>(std::upper_bound(thresholds_.begin(), thresholds_.end(), attained + 1e-6) - thresholds_.begin());
  }

  std::vector<Decision> schedule(const SchedInput& in) override {
    return gittins_.empty() ? schedule_las(in) : schedule_sorted(in);
  }

  // 2D-LAS kept incrementally: only new and running jobs can change queue,
  // so a call costs O((new + running) log n) plus the walk down the order
  // until the GPUs are gone (the whole Philly trace needs this).
  std::vector<Decision> schedule_las(const SchedInput& in) {
    const auto& jobs = *in.jobs;
    auto enter = [&](JobState* j, int q) {
      auto& st = state_[j->id];
      if (st.seen) order_.erase({st.queue, st.seq, j});
      st.seen = true;
      st.queue = q;
      st.entered = in.now;
      st.seq = seq_++;
      order_.insert({st.queue, st.seq, j});
    };
    // New jobs are a suffix of the arrival-ordered list.
    size_t k = jobs.size();
    while (k > 0 && !state_[jobs[k - 1]->id].seen) --k;
    for (size_t i = k; i < jobs.size(); ++i) enter(jobs[i], queue_of(jobs[i]->attained));
    for (JobState* j : running_) {
      if (j->finish >= 0) continue;
      int q = queue_of(j->attained);
      if (q != state_[j->id].queue) enter(j, q);
    }
    running_.clear();
    std::vector<Decision> out;
    int free = in.total_gpus;
    for (auto it = order_.begin(); it != order_.end() && free > 0;) {
      JobState* j = std::get<2>(*it);
      if (j->finish >= 0) {
        state_.erase(j->id);
        it = order_.erase(it);
        continue;
      }
      if (j->spec->gpus <= free) {
        out.push_back({j->id, j->spec->gpus, j->spec->batch});
        free -= j->spec->gpus;
        running_.push_back(j);
      }
      ++it;
    }
    return out;
  }

  std::vector<Decision> schedule_sorted(const SchedInput& in) {
    struct Item {
      int queue;
      double key;  // entry time (LAS) or minus the Gittins index
      long seq;
      const JobState* j;
    };
    std::vector<Item> items;
    items.reserve(in.jobs->size());
    for (const JobState* j : *in.jobs) {
      int q = queue_of(j->attained);
      auto& st = state_[j->id];
      if (!st.seen || st.queue != q) {  // entered a (new) queue now
        st.seen = true;
        st.queue = q;
        st.entered = in.now;
        st.seq = seq_++;
      }
      double key = static_cast<double>(st.seq);
      if (!gittins_.empty()) {
        double quantum = q < static_cast<int>(thresholds_.size()) ? thresholds_[q] - j->attained
                                                                 : std::max(thresholds_.empty() ? 3600.0 : thresholds_.back(), 1.0);
        key = -gittins_.index(j->attained, std::max(quantum, 1.0));
      }
      items.push_back({q, key, st.seq, j});
    }
    std::sort(items.begin(), items.end(), [](const Item& a, const Item& b) {
      if (a.queue != b.queue) return a.queue < b.queue;
      if (a.key != b.key) return a.key < b.key;
      return a.seq < b.seq;
    });
    std::vector<Decision> out;
    int free = in.total_gpus;
    for (const Item& it : items) {
      if (it.j->spec->gpus > free) continue;
      out.push_back({it.j->id, it.j->spec->gpus, it.j->spec->batch});
      free -= it.j->spec->gpus;
    }
    return out;
  }

  // The next time a running job crosses a threshold.
  double next_wakeup(const SchedInput& in) override {
    double t = std::numeric_limits<double>::infinity();
    std::vector<JobState*> all;
    if (!gittins_.empty()) all.assign(in.jobs->begin(), in.jobs->end());
    for (const JobState* j : gittins_.empty() ? running_ : all) {
      if (j->gpus <= 0) continue;
      int q = queue_of(j->attained);
      if (q < static_cast<int>(thresholds_.size())) t = std::min(t, in.now + std::max((thresholds_[q] - j->attained) / j->gpus, 1e-3));
    }
    return t;
  }

 private:
  struct JobQueueState {
    bool seen = false;
    int queue = 0;
    double entered = 0;
    long seq = 0;
  };
  std::vector<double> thresholds_;
  Gittins gittins_;
  std::unordered_map<int, JobQueueState> state_;
  long seq_ = 0;
  std::set<std::tuple<int, long, JobState*>> order_;  // (queue, entry sequence, job)
  std::vector<JobState*> running_;                      // chosen at the last call
};

PolicyRegistrar reg("tiresias",
                    "discretised 2D-LAS on attained GPU-time (queues at --tiresias-thresholds); Gittins index with "
                    "--gittins; requested GPUs and batch",
                    [](const PolicyOptions& o) { return std::make_unique<Tiresias>(o); });

}  // namespace
}  // namespace trainplan::sim
