#include "core/sampled_range.h"

#include <algorithm>

namespace trainplan {

int most_workers_sampled(const SampleSet& s) {
  int most = 0;
  for (const auto& x : s.samples) most = std::max(most, x.workers);
  return most;
}

int most_nodes_sampled(const SampleSet& s) {
  int most = 0;
  for (const auto& x : s.samples) most = std::max(most, x.nodes);
  return most;
}

std::optional<std::pair<double, double>> batch_range_sampled(const SampleSet& s) {
  std::optional<std::pair<double, double>> range;
  for (const auto& x : s.samples)
    range = range ? std::pair{std::min(range->first, x.batch), std::max(range->second, x.batch)}
                  : std::pair{x.batch, x.batch};
  return range;
}

}  // namespace trainplan
