// Reader for scheduling workloads in the Pollux artifact's format:
//   name,time,application,num_replicas,batch_size[,deadline]
// `time` is the arrival in seconds; `num_replicas` and `batch_size` (GLOBAL
// batch) are the job's fixed, tuned configuration; the optional `deadline`
// is a completion deadline in seconds after arrival.
#pragma once
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace trainplan::io {

struct WorkloadJob {
  std::string name;
  double arrival_s = 0;
  std::string application;
  int replicas = 0;
  int batch = 0;                    // global batch size
  std::optional<double> deadline_s;  // relative to arrival
  long line = 0;                     // line in the file, for later messages
};

// Reads and validates a workload. Throws InputError naming file, line and
// column for: missing columns, non-numbers, negative arrivals, replicas or
// batches that are not integers >= 1, duplicate job names, and (when
// `known_apps` is not empty) an application not in `known_apps`.
std::vector<WorkloadJob> read_workload_csv(const std::string& path, const std::set<std::string>& known_apps = {});

}  // namespace trainplan::io
