#include "app/search_space.h"

#include <algorithm>
#include <cmath>

#include "core/nodes.h"

namespace trainplan::app {

ConfigSpace search_space(const SampleSet& samples, const SpaceOptions& o) {
  ConfigSpace s;
  s.batches = o.batches;
  if (s.batches.empty())
    for (const auto& x : samples.samples) s.batches.push_back(static_cast<int>(std::lround(x.batch)));
  std::sort(s.batches.begin(), s.batches.end());
  s.batches.erase(std::unique(s.batches.begin(), s.batches.end()), s.batches.end());
  s.max_workers = o.max_workers;
  if (s.max_workers == 0)
    for (const auto& x : samples.samples) s.max_workers = std::max(s.max_workers, x.workers);
  s.max_epochs = o.max_epochs;
  s.workers_per_node = o.gpus_per_node >= 0 ? o.gpus_per_node : gpus_per_node_seen(samples);
  s.diverged = diverged_cells(samples);
  return s;
}

int gpus_per_node_seen(const SampleSet& samples) {
  int most = 0;
  for (const auto& x : samples.samples)
    if (x.nodes > 0) most = std::max(most, nodes_for(x.workers, x.nodes));
  return most;
}

std::set<std::pair<int, int>> diverged_cells(const SampleSet& samples) {
  std::set<std::pair<int, int>> out;
  for (const auto& [b, r] : samples.diverged) out.insert({static_cast<int>(std::lround(b)), r});
  return out;
}

}  // namespace trainplan::app
