// allreduce-local's node-count level z(n): learned from one multi-node
// sample per node count, interpolated in n, held outside.
#include <gtest/gtest.h>

#include <cmath>

#include "models/step_time_corrected.h"

using namespace trainplan;
using namespace trainplan::models;

namespace {

const StepTimeTerms kTerms{0.020, 0.0006, 0.004, 0.010, 0.010, 0.060, 2.5};
constexpr long kN = 50000;

Sample at(double b, int r, int n, double slowdown = 1) {
  Sample x;
  x.batch = b;
  x.workers = r;
  x.nodes = n;
  x.epoch_time_s = double(kN) / (b * r) * step_time_of(kTerms, b, r, n) * slowdown;
  return x;
}

// Single-node r = 1..4 plus "11" 40% slower and "1111" 10% slower than the terms say.
SampleSet two_node_counts() {
  SampleSet s;
  s.dataset_size = kN;
  for (int r = 1; r <= 4; ++r)
    for (double b : {16.0, 32.0, 64.0, 128.0}) s.samples.push_back(at(b, r, 1));
  s.samples.push_back(at(32, 2, 2, 1.4));
  s.samples.push_back(at(32, 4, 4, 1.1));
  return s;
}

}  // namespace

TEST(StepTimeLocalNodes, LevelPerNodeCountIsInterpolatedInNodesAndHeldOutside) {
  AllreduceLocalModel m;
  m.fit(two_node_counts());
  // Configurations never sampled: only the batch level and z(n) apply.
  double c2 = m.correction(64, 8, 2), c3 = m.correction(64, 12, 3), c4 = m.correction(64, 16, 4);
  EXPECT_GT(c2, c4);  // the 2-node sample was the slower one
  EXPECT_NEAR(c3, (c2 + c4) / 2, 1e-12);                // linear in n between 2 and 4
  EXPECT_NEAR(m.correction(64, 20, 5), c4, 1e-12);      // held beyond the largest node count
  EXPECT_NEAR(m.correction(64, 6, 2), c2, 1e-12);       // one worker count on 2 nodes: z only
}

TEST(StepTimeLocalNodes, OneNodeCountIsHeldForAllNodeCounts) {
  auto s = two_node_counts();
  s.samples.pop_back();  // drop the 4-node sample
  AllreduceLocalModel m;
  m.fit(s);
  double c2 = m.correction(64, 8, 2);
  EXPECT_NEAR(m.correction(64, 16, 4), c2, 1e-12);
}
