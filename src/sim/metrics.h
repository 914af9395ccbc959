// Summary statistics of one simulation run.
#pragma once
#include <string>

#include "sim/simulator.h"

namespace trainplan::sim {

struct Summary {
  size_t jobs = 0;
  double avg_jct = 0, median_jct = 0, p99_jct = 0;
  double makespan = 0;     // last completion minus first arrival, seconds
  double gpu_hours = 0;    // GPU time held by jobs (restart delays included)
  double utilisation = 0;  // gpu_hours / (GPUs x makespan)
  long restarts = 0;
  long deadlines = 0;      // jobs with a deadline
  double deadline_met = 0; // share of those that met it (0 if none)
};

// Percentiles use linear interpolation between order statistics.
Summary summarize(const SimResult& r);
double percentile(std::vector<double> v, double q);

}  // namespace trainplan::sim
