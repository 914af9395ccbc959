// The configurations a plan searches, built from the samples the same way by
// `plan`, `POST /plan` and the planning benchmark.
#pragma once
#include <set>
#include <utility>
#include <vector>

#include "core/config.h"
#include "core/sample.h"

namespace trainplan::app {

struct SpaceOptions {
  std::vector<int> batches;  // per-worker batches; empty: those the samples ran (rounded)
  int max_workers = 0;       // 0: the largest worker count in the samples
  int max_epochs = 1000;
  // GPUs per node, so that r workers span ceil(r / gpus_per_node) nodes;
  // < 0: 4 when the samples record nodes, else 0 (nodes unknown).
  int gpus_per_node = -1;
};

// Batches sorted and distinct. By default the space reaches the largest
// worker count profiled: beyond it every prediction extrapolates in workers.
// The samples' diverged (batch, workers) are left out of it.
ConfigSpace search_space(const SampleSet& samples, const SpaceOptions& o);

// The samples' diverged (batch, workers), batches rounded as the space's are.
std::set<std::pair<int, int>> diverged_cells(const SampleSet& samples);

}  // namespace trainplan::app
