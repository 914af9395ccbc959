// The frontier kept as candidates come equals the one found by sorting them
// all, ties included.
#include "plan/cost_time_frontier.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <tuple>

namespace {

struct Point {
  double train_s = 0, gpu_hours = 0;
  int index = 0;  // order of offer
};

// Every point sorted stably by (time, cost); each kept when strictly cheaper than all before it.
std::vector<Point> by_sorting(std::vector<Point> all) {
  std::stable_sort(all.begin(), all.end(),
                   [](const Point& a, const Point& b) { return std::tie(a.train_s, a.gpu_hours) < std::tie(b.train_s, b.gpu_hours); });
  std::vector<Point> out;
  for (const auto& p : all)
    if (out.empty() || p.gpu_hours < out.back().gpu_hours) out.push_back(p);
  return out;
}

TEST(CostTimeFrontier, KeptAsTheyComeEqualsSortingThemAll) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 300; ++trial) {
    // Few distinct values, so that equal times, equal costs and equal points are common.
    std::uniform_int_distribution<int> value(1, 1 + trial % 9), count(0, 60);
    std::vector<Point> all;
    trainplan::plan::CostTimeFrontier<Point> kept;
    const int n = count(rng);
    for (int i = 0; i < n; ++i) {
      Point p{double(value(rng)), double(value(rng)), i};
      all.push_back(p);
      kept.offer(p);
    }
    const auto want = by_sorting(all), got = kept.take();
    ASSERT_EQ(got.size(), want.size()) << "trial " << trial;
    for (size_t i = 0; i < want.size(); ++i) {
      EXPECT_EQ(got[i].index, want[i].index) << "trial " << trial << ", point " << i;
      if (i > 0) EXPECT_LT(got[i].gpu_hours, got[i - 1].gpu_hours);
    }
  }
}

}  // namespace
