// The physical time model weighs each sample by its measured spread: a
// sample known only to +-30% moves the fit less than ones known to +-1%.
#include <gtest/gtest.h>

#include <cmath>

#include "models/registry.h"

using namespace trainplan;
using namespace trainplan::models;

namespace {

// Epoch time of a single worker: N (alpha + beta b) / b, N = 6000.
double truth(double b) { return 6000 * (0.002 + 0.0001 * b) / b; }

SampleSet samples(std::optional<double> disturbed_spread) {
  SampleSet set;
  set.dataset_size = 6000;
  for (double b : {16.0, 32.0, 64.0, 128.0, 256.0}) {
    Sample s;
    s.batch = b;
    s.workers = 1;
    s.nodes = 1;
    s.epochs = 1;
    s.epoch_time_s = truth(b);
    s.time_spread = 0.01;
    set.samples.push_back(s);
  }
  set.samples[2].epoch_time_s *= 1.6;  // a trial disturbed by a neighbour...
  set.samples[2].time_spread = disturbed_spread;  // ...whose repeats said so
  return set;
}

double error_at(const SampleSet& set, double b) {
  auto m = ModelRegistry::instance().make_time("allreduce-physical");
  m->fit(set);
  return std::abs(m->predict(b, 1, 1) / truth(b) - 1);
}

}  // namespace

TEST(TimeSpreadWeight, AnUncertainSampleMovesTheFitLess) {
  const double weighted = error_at(samples(0.3), 64);
  const double unweighted = error_at(samples(0.01), 64);
  EXPECT_LT(weighted, 0.5 * unweighted) << "weighted " << weighted << ", as precise " << unweighted;
  // Away from the disturbed point the weighted fit stays close to the truth.
  EXPECT_LT(error_at(samples(0.3), 32), 0.05);
}
