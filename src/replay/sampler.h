// Sampling plans drawn from a replay oracle: what the profiler would have
// measured had it run those trials on the trace's hardware.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/sample.h"
#include "replay/replay_oracle.h"

namespace trainplan::replay {

struct SamplingPlan {
  std::vector<int> workers;  // worker counts to try
  int n_batches = 10;        // per-worker batches, one drawn per equal stratum of [batch_lo, batch_hi]
  double batch_lo = 16;      // clipped to the trace's range where the trace allows
  double batch_hi = 256;
  int n_epochs = 3;          // distinct epoch counts per (batch, workers), drawn from [1, max_epochs]
  int max_epochs = 40;       // further capped by the application's epoch limit
  uint64_t seed = 1;
  // Also record the learning curve of each configuration's longest trial:
  // its best metric after every epoch that is not itself a trial's length
  // (SampleSet::curve), as a profiler reading the trial's epoch lines does.
  // The trials drawn do not depend on it.
  bool record_curves = false;
};

// Named plans: "paper" (r=1..8, 10 batches, 3 epochs: 240 samples),
// "small" (r in {1,2,4,8}, 5 batches, 2 epochs: 40), "wide" (r=1..16, 12 batches, 3 epochs: 576).
// Throws InputError for an unknown name.
SamplingPlan named_plan(const std::string& name, uint64_t seed);
std::vector<std::string> plan_names();

struct DrawResult {
  SampleSet samples;
  int skipped_time = 0;    // (batch, workers) outside the measured time region
  int metric_missing = 0;  // samples whose global batch is outside the measured curves
};

// Draws the plan from the oracle. Batches are integers; epochs are integers.
DrawResult draw_samples(const ReplayOracle& oracle, const SamplingPlan& plan);

}  // namespace trainplan::replay
