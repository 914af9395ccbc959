#include "plan/merged_frontier.h"

#include <algorithm>

namespace trainplan::plan {

std::vector<MergedPoint> merge_frontiers(const std::vector<std::vector<std::pair<double, double>>>& fronts) {
  std::vector<MergedPoint> all;
  for (size_t o = 0; o < fronts.size(); ++o)
    for (size_t i = 0; i < fronts[o].size(); ++i) all.push_back({o, i});
  auto at = [&](const MergedPoint& m) { return fronts[m.option][m.point]; };
  std::stable_sort(all.begin(), all.end(), [&](const MergedPoint& a, const MergedPoint& b) {
    const auto [ta, ca] = at(a);
    const auto [tb, cb] = at(b);
    return ta != tb ? ta < tb : ca < cb;
  });
  std::vector<MergedPoint> out;
  for (const auto& m : all)
    if (out.empty() || at(m).second < at(out.back()).second) out.push_back(m);
  return out;
}

}  // namespace trainplan::plan
