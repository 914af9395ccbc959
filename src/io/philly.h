// Reader for the Philly job trace as published by the Pollux artifact:
//   timestamp,duration,num_gpus,gpu_time,cluster
// `timestamp` is "YYYY-MM-DD HH:MM:SS" (UTC) or seconds; rows need not be
// sorted. Arrivals are returned relative to the earliest job, sorted.
#pragma once
#include <string>
#include <vector>

namespace trainplan::io {

struct PhillyJob {
  double arrival_s = 0;   // seconds after the trace's first arrival
  double duration_s = 0;  // measured run time at num_gpus
  int gpus = 0;
  std::string cluster;
  long line = 0;
};

// Throws InputError (file, line, column) for malformed timestamps,
// non-numbers, durations < 0 or GPU counts that are not integers >= 1.
// `limit` > 0 keeps only the first `limit` jobs by arrival.
std::vector<PhillyJob> read_philly_csv(const std::string& path, long limit = 0);

}  // namespace trainplan::io
