#include "scoring/splits.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <numeric>
#include <random>
#include <set>
#include <stdexcept>
#include <tuple>

namespace trainplan::scoring {

std::vector<std::vector<size_t>> kfold(size_t n, int k, uint64_t seed) {
  if (k < 2 || static_cast<size_t>(k) > n) throw std::invalid_argument("kfold: need 2 <= k <= n");
  std::vector<size_t> idx(n);
  std::iota(idx.begin(), idx.end(), 0);
  std::mt19937_64 rng(seed);
  // Fisher-Yates by hand: std::shuffle's sequence differs between standard libraries.
  for (size_t i = n - 1; i > 0; --i) std::swap(idx[i], idx[rng() % (i + 1)]);
  std::vector<std::vector<size_t>> folds(k);
  for (size_t i = 0; i < n; ++i) folds[i % k].push_back(idx[i]);
  return folds;
}

namespace {

// Each configuration's samples, configurations in the order of their keys
// (batch, workers, nodes, epochs): the folds dealt from them then depend on
// the set of rows and the seed, never on the order the rows came in.
std::vector<std::vector<size_t>> config_groups(const SampleSet& s) {
  std::map<std::tuple<double, int, int, double>, std::vector<size_t>> by_key;
  for (size_t i = 0; i < s.size(); ++i) {
    const Sample& x = s.samples[i];
    by_key[{x.batch, x.workers, x.nodes, x.epochs}].push_back(i);
  }
  std::vector<std::vector<size_t>> groups;
  groups.reserve(by_key.size());
  for (auto& [key, rows] : by_key) groups.push_back(std::move(rows));
  return groups;
}

}  // namespace

std::vector<std::vector<size_t>> config_kfold(const SampleSet& s, int k, uint64_t seed) {
  const auto groups = config_groups(s);
  std::vector<std::vector<size_t>> folds;
  for (const auto& fold : kfold(groups.size(), k, seed)) {
    folds.emplace_back();
    for (size_t g : fold) folds.back().insert(folds.back().end(), groups[g].begin(), groups[g].end());
  }
  return folds;
}

size_t distinct_configs(const SampleSet& s) { return config_groups(s).size(); }

std::vector<size_t> single_node_train(const SampleSet& s, const WorkersSplitRule& rule) {
  std::vector<size_t> train;
  for (size_t i = 0; i < s.size(); ++i)
    if (s.samples[i].workers <= rule.max_train_workers && s.samples[i].nodes <= 1) train.push_back(i);
  return train;
}

double median_batch(const SampleSet& s, const std::vector<size_t>& idx) {
  std::set<double> distinct;
  for (size_t i : idx) distinct.insert(s.samples[i].batch);
  if (distinct.empty()) return 0;
  auto it = distinct.begin();
  std::advance(it, (distinct.size() - 1) / 2);
  return *it;
}

double quantile_batch(const SampleSet& s, const std::vector<size_t>& idx, double q) {
  std::set<double> distinct;
  for (size_t i : idx) distinct.insert(s.samples[i].batch);
  if (distinct.empty()) return 0;
  auto it = distinct.begin();
  std::advance(it, static_cast<long>(std::lround(std::clamp(q, 0.0, 1.0) * (distinct.size() - 1))));
  return *it;
}

std::vector<size_t> workers_train(const SampleSet& s, const WorkersSplitRule& rule) {
  std::vector<size_t> train = single_node_train(s, rule);
  std::vector<size_t> single = train;
  std::set<int> node_counts;
  for (const auto& x : s.samples)
    if (x.nodes > 1) node_counts.insert(x.nodes);
  // The smallest and the largest node count: the widest base for the
  // inter-node term's dependence on n (one count when only one is seen).
  std::vector<int> wanted;
  if (!node_counts.empty() && rule.multi_node_train >= 1) wanted.push_back(*node_counts.begin());
  if (node_counts.size() > 1 && rule.multi_node_train >= 2) wanted.push_back(*node_counts.rbegin());
  for (size_t t = 0; t < wanted.size(); ++t) {
    int n = wanted[t];
    double mid = quantile_batch(s, single, rule.trial_batch_quantile[std::min<size_t>(t, 1)]);
    // The trial is a configuration (batch, workers) at n nodes, chosen by
    // those alone, and trains with every sample of it (each epoch of its
    // learning curve, each repeat): which of them comes first in the file
    // does not matter.
    std::optional<size_t> pick;
    for (size_t i = 0; i < s.size(); ++i) {
      const auto& x = s.samples[i];
      if (x.nodes != n) continue;
      if (!pick) { pick = i; continue; }
      const auto& y = s.samples[*pick];
      double dx = std::abs(x.batch - mid), dy = std::abs(y.batch - mid);
      bool better_workers = rule.trial_shape == TrialShape::kFullNodes ? x.workers > y.workers : x.workers < y.workers;
      if (better_workers || (x.workers == y.workers && (dx < dy || (dx == dy && x.batch < y.batch)))) pick = i;
    }
    const auto& chosen = s.samples[*pick];
    for (size_t i = 0; i < s.size(); ++i) {
      const auto& x = s.samples[i];
      if (x.nodes == n && x.workers == chosen.workers && x.batch == chosen.batch) train.push_back(i);
    }
  }
  std::sort(train.begin(), train.end());
  return train;
}

std::vector<size_t> workers_test(const SampleSet& s, const std::vector<size_t>& exclude, const WorkersSplitRule& rule) {
  std::set<size_t> ex(exclude.begin(), exclude.end());
  std::vector<size_t> test;
  for (size_t i = 0; i < s.size(); ++i) {
    int r = s.samples[i].workers;
    if (r >= rule.test_min_workers && r <= rule.test_max_workers && !ex.count(i)) test.push_back(i);
  }
  return test;
}

Split workers_split(const SampleSet& s, const WorkersSplitRule& rule) {
  Split sp;
  sp.train = workers_train(s, rule);
  sp.test = workers_test(s, sp.train, rule);
  return sp;
}

Split batch_split(const SampleSet& s) {
  std::set<double> distinct;
  for (const auto& x : s.samples) distinct.insert(x.batch);
  Split sp;
  if (distinct.size() < 2) return sp;
  auto it = distinct.begin();
  std::advance(it, distinct.size() / 2);
  double first_test = *it;
  for (size_t i = 0; i < s.size(); ++i) (s.samples[i].batch < first_test ? sp.train : sp.test).push_back(i);
  return sp;
}

SampleSet subset(const SampleSet& s, const std::vector<size_t>& idx) {
  SampleSet out;
  out.direction = s.direction;
  out.dataset_size = s.dataset_size;
  out.source = s.source;
  for (size_t i : idx) out.samples.push_back(s.samples.at(i));
  return out;
}

}  // namespace trainplan::scoring
