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
  // < 0: gpus_per_node_seen(samples) (0 when they record no nodes: nodes
  // unknown).
  int gpus_per_node = -1;
};

// The GPUs a node holds as the samples show it: the most workers any sample
// ran per node (ceil(workers / nodes) over the samples that record nodes);
// 0 when none records nodes. `plan` and `predict` both pack workers by it
// where neither --gpus-per-node nor a hardware file's node says otherwise,
// so that both price a configuration on the same nodes.
int gpus_per_node_seen(const SampleSet& samples);

// Batches sorted and distinct. By default the space reaches the largest
// worker count profiled: beyond it every prediction extrapolates in workers.
// The samples' diverged (batch, workers) are left out of it.
ConfigSpace search_space(const SampleSet& samples, const SpaceOptions& o);

// The samples' diverged (batch, workers), batches rounded as the space's are.
std::set<std::pair<int, int>> diverged_cells(const SampleSet& samples);

}  // namespace trainplan::app
