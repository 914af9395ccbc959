// edit_distance: inserts, deletes, replaces, and a swap of neighbours each one edit.
#include "core/edit_distance.h"

#include <gtest/gtest.h>

using trainplan::edit_distance;

TEST(EditDistance, CountsEachSlipOnce) {
  EXPECT_EQ(edit_distance("epoch", "epoch"), 0u);
  EXPECT_EQ(edit_distance("epoc", "epoch"), 1u);    // dropped
  EXPECT_EQ(edit_distance("epochs", "epoch"), 1u);  // added
  EXPECT_EQ(edit_distance("epich", "epoch"), 1u);   // changed
  EXPECT_EQ(edit_distance("eopch", "epoch"), 1u);   // neighbours swapped
  EXPECT_EQ(edit_distance("epcoh", "epoch"), 1u);
  EXPECT_EQ(edit_distance("epo", "epoch"), 2u);
  EXPECT_EQ(edit_distance("", "done"), 4u);
  EXPECT_EQ(edit_distance("abc", "cba"), 2u);
}
