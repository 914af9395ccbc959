// app::search_space and app::node_packing pack workers on nodes by one rule,
// so that `plan` and `predict` price a configuration on the same nodes.
#include "app/search_space.h"

#include <gtest/gtest.h>

#include "app/predict.h"
#include "core/nodes.h"

using namespace trainplan;

namespace {

Sample at(int workers, int nodes) {
  Sample s;
  s.batch = 32, s.workers = workers, s.nodes = nodes, s.epochs = 1, s.epoch_time_s = 10;
  return s;
}

}  // namespace

TEST(SearchSpace, PacksWorkersAsPredictDoes) {
  SampleSet s;
  s.samples = {at(1, 1), at(8, 1), at(4, 2)};  // eight workers once ran on one node
  EXPECT_EQ(app::gpus_per_node_seen(s), 8);
  const ConfigSpace space = app::search_space(s, {});
  EXPECT_EQ(space.workers_per_node, 8);
  EXPECT_EQ(app::node_packing(s, 8, 0, nullptr).nodes, nodes_for(8, space.workers_per_node));
  // A node size given, or samples without nodes, as before.
  EXPECT_EQ(app::search_space(s, {.gpus_per_node = 4}).workers_per_node, 4);
  SampleSet unknown;
  unknown.samples = {at(2, 0), at(4, 0)};
  EXPECT_EQ(app::search_space(unknown, {}).workers_per_node, 0);
  EXPECT_EQ(app::node_packing(unknown, 4, 0, nullptr).nodes, 0);
}
