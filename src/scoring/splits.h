// How samples are divided for scoring: seeded k-fold cross-validation and the
// two extrapolation splits of docs/lab/EVALUATION.md.
//  * workers: train on single-node samples with workers <= 4 plus at most two
//    multi-node samples at distinct node counts (the smallest and the largest
//    multi-node count seen; at each, the most workers -- full nodes, the shape
//    a packed job runs in -- or, with TrialShape::kOnePerNode, the fewest;
//    then the batch nearest the lower quartile of the single-node training
//    batches for the first trial and the upper quartile for the second);
//    test on 8..16 workers.
//  * batch: train on the smaller half of the distinct per-worker batches
//    (floor(d/2) of d), test on the rest.
#pragma once
#include <cstdint>
#include <vector>

#include "core/sample.h"

namespace trainplan::scoring {

// Indices into a set of `n` items, shuffled with `seed`, dealt round-robin
// into `k` folds; returns each fold's held-out indices. Requires 2 <= k <= n.
std::vector<std::vector<size_t>> kfold(size_t n, int k, uint64_t seed);

// k-fold over whole configurations: samples of one (batch, workers, nodes,
// epochs) are held out together, so a repeated measurement never sits on both
// sides of a fold. The distinct configurations, in order of their first
// sample, are dealt as kfold(m, k, seed) deals m items; each fold lists its
// configurations' samples (each configuration's in sample order). Without
// repeats this is kfold(s.size(), k, seed). Requires 2 <= k <= m.
std::vector<std::vector<size_t>> config_kfold(const SampleSet& s, int k, uint64_t seed);
// The distinct configurations config_kfold deals.
size_t distinct_configs(const SampleSet& s);

struct Split {
  std::vector<size_t> train, test;  // indices into the set that was split
};

// Which placement a multi-node training trial takes at its node count.
enum class TrialShape {
  kFullNodes,   // the most GPUs per node (packed jobs run so)
  kOnePerNode,  // the fewest: one GPU per node, the cheapest trial
};

struct WorkersSplitRule {
  int max_train_workers = 4;
  int multi_node_train = 2;  // multi-node samples added to the training side
  TrialShape trial_shape = TrialShape::kFullNodes;
  // Batch of the i-th multi-node trial: this quantile of the distinct
  // single-node training batches. Distinct batches let two trials identify
  // the overlap of sync with compute as well as the sync's scale.
  double trial_batch_quantile[2] = {0.25, 0.75};
  int test_min_workers = 8;
  int test_max_workers = 16;
};

// The training side of the workers split (multi-node samples at distinct node counts).
std::vector<size_t> workers_train(const SampleSet& s, const WorkersSplitRule& rule = {});
// Single-node samples with at most rule.max_train_workers workers.
std::vector<size_t> single_node_train(const SampleSet& s, const WorkersSplitRule& rule = {});
// The batch of `s` nearest the lower median of its distinct batches over
// `idx` (ties: the smaller); 0 when idx is empty.
// The q-quantile of the distinct batches of s[idx] (nearest rank, index
// round(q (d - 1))); 0 if idx is empty.
double quantile_batch(const SampleSet& s, const std::vector<size_t>& idx, double q);
double median_batch(const SampleSet& s, const std::vector<size_t>& idx);
// Samples with test_min..test_max workers, leaving out `exclude` (sorted or not).
std::vector<size_t> workers_test(const SampleSet& s, const std::vector<size_t>& exclude,
                                 const WorkersSplitRule& rule = {});
// Both sides from one set (the workers split).
Split workers_split(const SampleSet& s, const WorkersSplitRule& rule = {});
// The batch split; empty sides when there are fewer than two distinct batches.
Split batch_split(const SampleSet& s);

// The samples at `idx`, with the set's direction, dataset size and source.
SampleSet subset(const SampleSet& s, const std::vector<size_t>& idx);

}  // namespace trainplan::scoring
