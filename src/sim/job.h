// A job in the cluster simulator: what was submitted (JobSpec) and where it
// stands (JobState). Two kinds of jobs:
//  * trace jobs (app != nullptr): elastic data-parallel training whose work
//    is statistical progress (sim/app_model.h); any GPU count and batch;
//  * rigid jobs (app == nullptr, e.g. Philly): they run only on exactly
//    their GPU count and need `duration` seconds of it.
#pragma once
#include <optional>
#include <string>
#include <vector>

namespace trainplan::sim {

class AppModel;

// The most node groups (GPU types) one simulated cluster holds.
inline constexpr int kMostNodeGroups = 64;

struct JobSpec {
  std::string name;
  double arrival = 0;              // seconds
  const AppModel* app = nullptr;   // null: rigid job
  int gpus = 1;                    // requested (tuned) GPU count
  int batch = 0;                   // requested global batch (trace jobs)
  double duration = 0;             // rigid jobs: seconds at `gpus`
  std::optional<double> deadline;  // seconds after arrival
  // On a cluster of several node groups (SimOptions::groups): the
  // application timed on each group's GPUs, its learning curve the same as
  // app's; empty: app on every group.
  std::vector<const AppModel*> app_by_group;
  // The application as timed on node group `group`.
  const AppModel* app_on(int group) const {
    return group >= 0 && size_t(group) < app_by_group.size() ? app_by_group[size_t(group)] : app;
  }
};

struct JobState {
  int id = 0;
  const JobSpec* spec = nullptr;
  double work = 0;      // progress units to finish (seconds for rigid jobs)
  double progress = 0;  // done so far
  int epoch = 0;        // completed epochs (trace jobs)
  int gpus = 0, nodes = 0, batch = 0;  // current allocation; gpus = 0: waiting
  int group = 0;                       // node group of the current allocation, or of the last one
  double placed_at = 0;                // when the current allocation was placed
  int gpus_at_finish = 0;              // the allocation it finished on (gpus is 0 from then)
  std::vector<int> placement;          // node index of every GPU held
  double rate = 0;      // progress per second once the restart delay is over
  double run_from = 0;  // end of the current restart delay
  double last = 0;      // time `progress` and `attained` were brought up to
  double attained = 0;  // GPU-seconds held so far
  double start = -1, finish = -1;
  int restarts = 0;     // reallocations after the first start
  long version = 0;     // invalidates queued events after a change
  double remaining() const { return work > progress ? work - progress : 0.0; }
  bool rigid() const { return spec->app == nullptr; }
};

}  // namespace trainplan::sim
