// The cost-time frontier of candidates offered one at a time: those that no
// other beats on both time and cost. A candidate joins when it is cheaper than
// every candidate before it in (time, cost) order, an equal one offered
// earlier coming first, and drops the later ones it is no cheaper than. So
// take() gives exactly what sorting every offer stably by (time, cost) and
// keeping each strictly cheaper than all before it gives, in that order, with
// memory of the frontier's size however many are offered.
//
// Candidate has `double train_s` (time) and `double gpu_hours` (cost).
#pragma once
#include <iterator>
#include <map>
#include <utility>
#include <vector>

namespace trainplan::plan {

template <class Candidate>
class CostTimeFrontier {
 public:
  void offer(const Candidate& c) {
    const Key k{c.train_s, c.gpu_hours};
    auto after = points_.upper_bound(k);
    if (after != points_.begin() && std::prev(after)->second.gpu_hours <= c.gpu_hours) return;
    while (after != points_.end() && after->second.gpu_hours >= c.gpu_hours) after = points_.erase(after);
    points_.emplace_hint(after, k, c);
  }
  // Fastest first, so cost falls along it.
  std::vector<Candidate> take() const {
    std::vector<Candidate> out;
    for (const auto& [k, c] : points_) out.push_back(c);
    return out;
  }

 private:
  using Key = std::pair<double, double>;
  std::map<Key, Candidate> points_;
};

}  // namespace trainplan::plan
