// A training configuration and the space the planner searches.
#pragma once
#include <set>
#include <utility>
#include <vector>

namespace trainplan {

// One candidate job configuration.
struct Config {
  int batch = 0;    // per-worker batch size
  int workers = 0;  // data-parallel workers
  int epochs = 0;   // data epochs to train
  bool operator==(const Config&) const = default;
};

// The candidate set D of the paper: batches x workers x epochs.
struct ConfigSpace {
  std::vector<int> batches;  // sorted ascending, distinct
  int max_workers = 1;       // workers run 1..max_workers
  int max_epochs = 1000;     // epochs run 1..max_epochs (also bounded by the deadline)
  int workers_per_node = 0;  // >0: workers fill nodes of this size (for nodes = ceil(r/size))
  std::set<std::pair<int, int>> diverged;  // (batch, workers) cells never planned: training diverged there
};

}  // namespace trainplan
