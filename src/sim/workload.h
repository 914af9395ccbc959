// Turning workload files into simulator jobs.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "core/error.h"
#include "io/philly.h"
#include "io/workload_csv.h"
#include "sim/app_model.h"
#include "sim/job.h"
#include "sim/step_time_source.h"

namespace trainplan::sim {

// The applications of a data directory, by name, with their step times from
// `src` (default: their own traces).
class AppSet {
 public:
  explicit AppSet(const std::string& dir, const StepTimeSource& src = {});
  // nullptr for an application not loaded (unavailable() says why, if it is one of --data's).
  const AppModel* find(const std::string& name) const;
  // The applications of --data, those without step times included.
  std::set<std::string> names() const;
  std::vector<const AppModel*> all() const;
  // Why `name`, one of --data's applications, has no step times here (its
  // folder of step times lacks it); nullptr when it has them.
  const InputError* unavailable(const std::string& name) const;

 private:
  LoadedApps loaded_;
};

// The latest arrival (after load_scale) and the longest Philly duration the
// simulator takes, in seconds (about three million years): event times then
// stay apart to a sixtieth of a second or better, where at 1e16 s adding a
// scheduling interval would no longer move the clock. Times in
// microseconds or nanoseconds since 1970 land beyond it and are refused
// rather than simulated as seconds.
inline constexpr double kLatestSeconds = 1e14;

// Pollux workload jobs. Arrivals are divided by `load_scale` (2 = twice the
// load). Throws InputError (file, line) for an unknown application, a
// requested configuration the trace cannot run (too small a batch for the
// replicas, or more GPUs than `max_gpus`), or an arrival past kLatestSeconds;
// with `skipped`, a job whose configuration cannot run is left out instead,
// and the reason appended there.
std::vector<JobSpec> jobs_from_workload(const std::string& path, const AppSet& apps, double load_scale, int max_gpus,
                                        std::vector<InputError>* skipped = nullptr);

// The same on a cluster of several node groups: `apps` holds the same
// applications timed on each group's GPUs and `group_gpus` each group's GPUs.
// Each job's app is the first group's (its learning curve), app_by_group
// every group's; a job runs when its requested configuration runs on at
// least one group, and is refused (or skipped) with the first group's reason
// otherwise. One group: jobs_from_workload.
std::vector<JobSpec> jobs_from_workload_on_groups(const std::string& path, const std::vector<const AppSet*>& apps,
                                                  double load_scale, const std::vector<int>& group_gpus,
                                                  std::vector<InputError>* skipped = nullptr);

// Philly jobs as rigid jobs: each keeps its GPU count and needs its measured
// duration at that size. Throws InputError (file, line) for jobs larger than
// `max_gpus`, and arrivals or durations past kLatestSeconds.
std::vector<JobSpec> jobs_from_philly(const std::string& path, const std::vector<io::PhillyJob>& rows,
                                      double load_scale, int max_gpus);

// Job sizes in GPU-seconds at their requested configuration (packed), under
// the simulator's ground truth: the known distribution Gittins needs.
std::vector<double> job_sizes(const std::vector<JobSpec>& jobs);

}  // namespace trainplan::sim
