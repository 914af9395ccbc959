// Parameter weights from mutual information: Algorithm 1 of Liang et al. 2022
// (docs/MODELS.md and docs/lab/EVALUATION.md).
//
// The paper leaves the discretisation open; ours:
//  * every column is min-max normalised to [0, 1] (Algorithm 1, step 1);
//  * a column with at most `keep_distinct` distinct values keeps its values
//    as the classes (worker counts, sampled batches, epoch counts);
//  * otherwise it is cut into k = min(max_bins, ceil(sqrt(n))) equal-frequency
//    bins; equal values always share a bin, so a bin may hold more than n/k;
//  * the target is discretised the same way.
// Entropies are in nats (natural logarithm). Equal-frequency binning depends
// only on ranks, so the normalisation does not change the result; it is kept
// to follow the algorithm as written.
#pragma once
#include <string>
#include <vector>

namespace trainplan::numerics {

struct MiBinning {
  int keep_distinct = 16;  // columns with at most this many distinct values keep them
  int max_bins = 32;       // cap on k = ceil(sqrt(n)) for equal-frequency bins
};

// Class labels 0..K-1 for `column` under `binning`. Throws std::invalid_argument
// on NaN/Inf.
std::vector<int> discretise(const std::vector<double>& column, const MiBinning& binning);

// Plug-in entropy H(labels) in nats.
double entropy(const std::vector<int>& labels);
// Plug-in conditional entropy H(target | given) in nats.
double conditional_entropy(const std::vector<int>& target, const std::vector<int>& given);

struct MiWeights {
  double target_entropy = 0;   // H(target)
  std::vector<double> mi;      // H(target) - H(target | s), per column
  std::vector<double> score;   // 1 - 1/(mi + 1), in [0, 1)
  std::vector<double> weight;  // score / sum(score); equal when the sum is 0
};

// Algorithm 1 on `columns` (each of the target's length) and `target`.
// Throws std::invalid_argument on empty or mismatched input.
MiWeights mi_weights(const std::vector<std::vector<double>>& columns, const std::vector<double>& target,
                     const MiBinning& binning = {});

}  // namespace trainplan::numerics
