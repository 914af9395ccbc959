// The cheapest option for every deadline over several cost-time frontiers.
#include "plan/merged_frontier.h"

#include <gtest/gtest.h>

using trainplan::plan::merge_frontiers;

// A fast dear option and a slow cheap one: the fast one's points until the
// slow one's first point is cheaper, then the slow one's; at equal times the
// cheaper point; an empty frontier adds nothing.
TEST(MergedFrontier, KeepsTheCheapestInEffectAtEveryTime) {
  const std::vector<std::vector<std::pair<double, double>>> fronts = {
      {{1, 10}, {2, 8}, {4, 7}},  // fast, dear
      {},                         // nothing reaches the target here
      {{3, 5}, {6, 4}},           // slow, cheap
      {{2, 9}, {4, 6.5}}};        // at 2 dearer than the first, at 4 cheaper than it but not than the third's 5
  const auto m = merge_frontiers(fronts);
  ASSERT_EQ(m.size(), 4u);
  EXPECT_EQ(m[0].option, 0u);  // t 1: 10
  EXPECT_EQ(m[0].point, 0u);
  EXPECT_EQ(m[1].option, 0u);  // t 2: 8 (the fourth's 9 is dearer)
  EXPECT_EQ(m[1].point, 1u);
  EXPECT_EQ(m[2].option, 2u);  // t 3: 5
  EXPECT_EQ(m[2].point, 0u);
  EXPECT_EQ(m[3].option, 2u);  // t 6: 4 (at 4, 7 and 6.5 are above 5)
  EXPECT_EQ(m[3].point, 1u);
  EXPECT_TRUE(merge_frontiers({}).empty());
  EXPECT_TRUE(merge_frontiers({{}, {}}).empty());
}
