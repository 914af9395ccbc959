#include "scoring/oracle_trials.h"

#include <gtest/gtest.h>

#include "test_util.h"

using namespace trainplan;
using namespace trainplan::scoring;

namespace {

Sample at(double b, int r, int nodes) {
  Sample s;
  s.batch = b;
  s.workers = r;
  s.nodes = nodes;
  s.epochs = 1;
  s.epoch_time_s = 1;
  return s;
}

// A tiny trace: "11" is not measured, "22" is; "1111" only at b = 16.
replay::ReplayOracle tiny_oracle() {
  auto d = tptest::temp_dir("xtrap-trace");
  tptest::write_file(d / "placements.csv",
                     "placement,local_bsz,step_time,sync_time\n"
                     "1,16,0.26,0\n1,32,0.42,0\n1,64,0.74,0\n"
                     "22,16,0.40,0.14\n22,32,0.56,0.14\n22,64,0.90,0.14\n"
                     "1111,16,0.50,0.2\n");
  tptest::write_file(d / "scalability.csv", "num_nodes,num_replicas,local_bsz,step_time,sync_time\n");
  tptest::write_file(d / "validation-32.csv", "progress,iteration,metric,grad_sqr,grad_var\n10,10,0.5,1,2\n");
  return replay::ReplayOracle::from_dir(d.string());
}

}  // namespace

TEST(EvaluateOracleTrials, FullNodesByDefaultFallingBackToFewerMeasuredGpus) {
  auto o = tiny_oracle();
  SampleSet train;
  for (double b : {16, 32, 64}) train.samples.push_back(at(b, 1, 1));
  SampleSet test;
  for (int r : {8, 9, 12, 16}) test.samples.push_back(at(32, r, (r + 3) / 4));  // 2, 3, 3, 4 nodes
  // "44" and "4444" are not measured: the most GPUs per node that is ("22"
  // on 2 nodes at the median batch; "1111" on 4 nodes, at b = 16 only).
  auto full = oracle_multi_node_trials(o, train, test);
  ASSERT_EQ(full.size(), 2u);
  EXPECT_EQ(full.samples[0].workers, 4);
  EXPECT_EQ(full.samples[0].nodes, 2);
  EXPECT_EQ(full.samples[0].batch, 32);
  EXPECT_EQ(full.samples[1].workers, 4);
  EXPECT_EQ(full.samples[1].nodes, 4);
}

TEST(EvaluateOracleTrials, SmallestAndLargestTestNodeCountFewestMeasuredGpusMedianBatch) {
  auto o = tiny_oracle();
  SampleSet train;
  for (double b : {16, 32, 64}) train.samples.push_back(at(b, 1, 1));
  SampleSet test;
  for (int r : {8, 9, 12, 16}) test.samples.push_back(at(32, r, (r + 3) / 4));  // 2, 3, 3, 4 nodes
  WorkersSplitRule one_per_node;
  one_per_node.trial_shape = TrialShape::kOnePerNode;
  auto trials = oracle_multi_node_trials(o, train, test, one_per_node);
  ASSERT_EQ(trials.size(), 2u);
  // 2 nodes: "11" is unmeasured, so "22" (4 GPUs) at the median batch 32.
  EXPECT_EQ(trials.samples[0].nodes, 2);
  EXPECT_EQ(trials.samples[0].workers, 4);
  EXPECT_EQ(trials.samples[0].batch, 32);
  EXPECT_NEAR(trials.samples[0].epoch_time_s, *o.epoch_time(32, 4, 2), 1e-12);
  // 4 nodes: "1111" is measured only at b = 16, the next batch by distance to 32.
  EXPECT_EQ(trials.samples[1].nodes, 4);
  EXPECT_EQ(trials.samples[1].workers, 4);
  EXPECT_EQ(trials.samples[1].batch, 16);
  EXPECT_FALSE(trials.samples[1].metric.has_value());

  WorkersSplitRule one;
  one.multi_node_train = 1;
  EXPECT_EQ(oracle_multi_node_trials(o, train, test, one).size(), 1u);
  SampleSet single_node_test;
  single_node_test.samples.push_back(at(32, 4, 1));
  EXPECT_TRUE(oracle_multi_node_trials(o, train, single_node_test).empty());
}
