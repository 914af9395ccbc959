#include "numerics/mutual_information.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>

using namespace trainplan::numerics;
using namespace trainplan::numerics;

TEST(MutualInformation, EntropyByHand) {
  EXPECT_NEAR(entropy({0, 0, 1, 1}), std::log(2.0), 1e-12);
  EXPECT_NEAR(entropy({3, 3, 3}), 0, 1e-12);
  EXPECT_NEAR(entropy({0, 1, 2, 0, 1, 2}), std::log(3.0), 1e-12);
}

TEST(MutualInformation, ConditionalEntropyByHand) {
  // T = 0 0 1 1 2 2, S = 0 0 0 0 1 1. Given S = 0 (4 of 6), T is 0 or 1 evenly:
  // ln 2; given S = 1, T = 2 surely. H(T|S) = 4/6 ln 2, so I = ln 3 - 2/3 ln 2.
  std::vector<int> t{0, 0, 1, 1, 2, 2}, s{0, 0, 0, 0, 1, 1};
  EXPECT_NEAR(conditional_entropy(t, s), 2.0 / 3 * std::log(2.0), 1e-12);
  EXPECT_NEAR(entropy(t) - conditional_entropy(t, s), std::log(3.0) - 2.0 / 3 * std::log(2.0), 1e-12);
  // Independent: no information.
  EXPECT_NEAR(entropy({0, 0, 1, 1}) - conditional_entropy({0, 0, 1, 1}, {0, 1, 0, 1}), 0, 1e-12);
}

TEST(MutualInformation, DiscretiseKeepsFewValuesAndBinsManyByFrequency) {
  auto few = discretise({5, 1, 5, 3}, {});
  EXPECT_EQ(few, (std::vector<int>{2, 0, 2, 1}));
  // 100 distinct values: k = ceil(sqrt(100)) = 10 equal-frequency bins of 10.
  std::vector<double> many;
  for (int i = 0; i < 100; ++i) many.push_back(std::pow(1.07, i));  // skewed, so equal-width bins would differ
  auto bins = discretise(many, {});
  std::map<int, int> counts;
  for (int b : bins) ++counts[b];
  ASSERT_EQ(counts.size(), 10u);
  for (auto& [b, c] : counts) EXPECT_EQ(c, 10) << "bin " << b;
  // Monotone: larger values never fall in a smaller bin.
  for (size_t i = 1; i < bins.size(); ++i) EXPECT_GE(bins[i], bins[i - 1]);
}

TEST(MutualInformation, EqualValuesShareABin) {
  std::vector<double> v;
  for (int i = 0; i < 60; ++i) v.push_back(i < 30 ? 7.0 : double(i));  // half are one value
  auto bins = discretise(v, {});
  for (int i = 1; i < 30; ++i) EXPECT_EQ(bins[i], bins[0]);
  EXPECT_NE(bins[30], bins[0]);
}

TEST(MutualInformation, UninformativeParameterGetsLittleWeight) {
  // y depends on x1 alone; x2 is independent noise. With n = 20000 and 32 x 32
  // bins, the plug-in MI of independent columns is biased up by about
  // (32-1)^2 / (2n) = 0.024 nats, while I(y; x1) = ln 32 = 3.47 nats; so
  // w2/w1 should be near 0.024/0.78 = 0.03. Equal weights would give 1.
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<double> x1, x2, y;
  for (int i = 0; i < 20000; ++i) {
    x1.push_back(u(rng));
    x2.push_back(u(rng));
    y.push_back(x1.back() * x1.back() + 1);
  }
  auto w = mi_weights({x1, x2}, y);
  EXPECT_NEAR(w.mi[0], std::log(32.0), 1e-9);
  EXPECT_LT(w.mi[1], 0.05);
  EXPECT_LT(w.weight[1], 0.1 * w.weight[0]);
  EXPECT_NEAR(w.weight[0] + w.weight[1], 1, 1e-12);
  EXPECT_NEAR(w.score[0], 1 - 1 / (w.mi[0] + 1), 1e-12);
}

TEST(MutualInformation, ConstantTargetGivesEqualWeights) {
  auto w = mi_weights({{1, 2, 3, 4}, {4, 3, 2, 1}}, {5, 5, 5, 5});
  EXPECT_EQ(w.target_entropy, 0);
  EXPECT_DOUBLE_EQ(w.weight[0], 0.5);
  EXPECT_DOUBLE_EQ(w.weight[1], 0.5);
}

TEST(MutualInformation, WeightsFollowAlgorithmOneByHand) {
  // Target 0 0 1 1 2 2; s1 as in ConditionalEntropyByHand, s2 identical to the target.
  std::vector<double> t{0, 0, 1, 1, 2, 2}, s1{0, 0, 0, 0, 1, 1}, s2 = t;
  auto w = mi_weights({s1, s2}, t);
  double m1 = std::log(3.0) - 2.0 / 3 * std::log(2.0), m2 = std::log(3.0);
  double a = 1 - 1 / (m1 + 1), b = 1 - 1 / (m2 + 1);
  EXPECT_NEAR(w.weight[0], a / (a + b), 1e-12);
  EXPECT_NEAR(w.weight[1], b / (a + b), 1e-12);
}
