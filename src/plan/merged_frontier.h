// The cheapest option for every deadline, over several cost-time frontiers
// whose costs compare (one per GPU, each costed at its own price).
//
// Each input frontier is a list of (time, cost) points, fastest first and
// each strictly cheaper than the one before (plan/frontier.h,
// LlmPlanResult::frontier). The merged frontier keeps the points that are
// cheapest among every option's point in effect at their own time: sorted
// by time (cheaper first at equal times), each strictly cheaper than every
// faster one. A deadline D then costs as much as the last merged point with
// time <= D, which is the least over the options of what D costs on each.
#pragma once
#include <cstddef>
#include <utility>
#include <vector>

namespace trainplan::plan {

struct MergedPoint {
  size_t option = 0;  // index of the input frontier
  size_t point = 0;   // index within it
};

std::vector<MergedPoint> merge_frontiers(const std::vector<std::vector<std::pair<double, double>>>& fronts);

}  // namespace trainplan::plan
