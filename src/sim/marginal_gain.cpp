#include "sim/marginal_gain.h"

#include <queue>
#include <utility>

namespace trainplan::sim {

int give_gpus_by_marginal_gain(std::vector<int>& alloc, int free, const std::function<double(size_t)>& gain) {
  std::priority_queue<std::pair<double, size_t>> gains;  // (gain of the next GPU, job index)
  auto push = [&](size_t i) {
    double g = gain(i);
    if (g > 0) gains.push({g, i});
  };
  for (size_t i = 0; i < alloc.size(); ++i) push(i);
  while (free > 0 && !gains.empty()) {
    size_t i = gains.top().second;
    gains.pop();
    ++alloc[i];
    --free;
    push(i);
  }
  return free;
}

}  // namespace trainplan::sim
