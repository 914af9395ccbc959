#include "scoring/oracle_trials.h"

#include <algorithm>
#include <cmath>
#include <set>

namespace trainplan::scoring {

SampleSet oracle_multi_node_trials(const replay::ReplayOracle& oracle, const SampleSet& train, const SampleSet& test,
                                   const WorkersSplitRule& rule) {
  SampleSet out = subset(train, {});
  std::set<int> node_counts;
  for (const auto& x : test.samples)
    if (x.nodes > 1) node_counts.insert(x.nodes);
  std::vector<int> wanted;
  if (!node_counts.empty() && rule.multi_node_train >= 1) wanted.push_back(*node_counts.begin());
  if (node_counts.size() > 1 && rule.multi_node_train >= 2) wanted.push_back(*node_counts.rbegin());

  std::vector<size_t> all(train.size());
  for (size_t i = 0; i < all.size(); ++i) all[i] = i;
  std::set<double> distinct;
  for (const auto& x : train.samples) distinct.insert(x.batch);

  bool full = rule.trial_shape == TrialShape::kFullNodes;
  for (size_t t = 0; t < wanted.size(); ++t) {
    int n = wanted[t];
    // The training grid's batches, nearest this trial's quantile first (ties: the smaller).
    double mid = quantile_batch(train, all, rule.trial_batch_quantile[std::min<size_t>(t, 1)]);
    std::vector<double> batches(distinct.begin(), distinct.end());
    std::stable_sort(batches.begin(), batches.end(),
                     [&](double a, double b) { return std::abs(a - mid) < std::abs(b - mid); });
    bool found = false;
    int r0 = full ? n * oracle.gpus_per_node() : n, step = full ? -1 : 1;
    for (int r = r0; r >= n && r <= n * oracle.gpus_per_node() && !found; r += step)
      for (double b : batches) {
        auto t = oracle.epoch_time(b, r, n);
        if (!t) continue;
        Sample s;
        s.batch = b;
        s.workers = r;
        s.nodes = n;
        s.epochs = 1;
        s.epoch_time_s = *t;
        s.model = oracle.name();
        out.samples.push_back(s);
        found = true;
        break;
      }
  }
  return out;
}

}  // namespace trainplan::scoring
