// How a measured grid's collectives grew with their size: from the seconds
// per iteration each rank spent in its tensor- and data-parallel groups
// (io::LlmConfigRow::tp_comm_s, dp_comm_s, as `trainplan llm profile`
// records them) and the collectives the model counts in those iterations
// (models::llm_collectives), the seconds of one ring step against the bytes
// it moves, and the power law through them:
//   step seconds = seconds_at_64kib · (step bytes / 64 KiB)^exponent
// by least squares in logs. An all-reduce over n ranks is 2(n - 1) steps of
// bytes / n each. The seconds include the wait for the group's last member,
// as a job waits for it. With pipeline parallelism the data-parallel seconds
// are the mean over every stage's ranks, set against the first stage's
// gradient bytes (stages of equal layers differ by their embedding or head).
// What NodeSpec::collective_latency_exponent describes, measured (docs/LLM.md,
// "The CPU grid").
#pragma once
#include <vector>

#include "io/llm_config_csv.h"

namespace trainplan::scoring {

struct CollectiveStep {
  long line = 0;
  const char* group = "";  // "tp" or "dp"
  double bytes = 0, seconds = 0;
};

struct CollectiveLaw {
  std::vector<CollectiveStep> steps;  // one per row and group with a measured, counted collective
  double smallest_bytes = 0, largest_bytes = 0;  // of the steps
  // Set when the steps have at least two distinct sizes.
  bool fitted = false;
  double exponent = 0, seconds_at_64kib = 0;
  // The law's seconds for a step of `bytes` (when fitted).
  double seconds_at(double bytes) const;
};

// Rows without the columns, or whose group has one member, add no step.
CollectiveLaw measure_collective_law(const std::vector<io::LlmConfigRow>& rows);

}  // namespace trainplan::scoring
