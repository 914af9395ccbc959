#include "core/even_subset.h"

#include <gtest/gtest.h>

using trainplan::even_subset;

TEST(EvenSubset, KeepsTheEndsAndSpreadsTheRest) {
  const std::vector<int> v{1, 2, 3, 4, 5, 6, 7, 8, 9};
  EXPECT_EQ(even_subset(v, 3), (std::vector<int>{1, 5, 9}));
  EXPECT_EQ(even_subset(v, 20), v);
  EXPECT_EQ(even_subset(v, 1), (std::vector<int>{1}));
  EXPECT_TRUE(even_subset(v, 0).empty());
  EXPECT_TRUE(even_subset(std::vector<int>{}, 3).empty());
}
