// Relative residuals and their conformal ranks: what every conformal
// calibrator stores and reads. A residual is (y - f(x)) / |f(x)|, relative
// because both targets (seconds, metrics) err roughly in proportion to their
// size; a rank at coverage c is the ceil((n+1) c)-th smallest of n residuals,
// the split-conformal rank that guarantees coverage >= c for exchangeable data.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/sample.h"
#include "models/model.h"

namespace trainplan::uncertainty {

// (y - pred) / |pred|; NaN when pred is not finite (the worst residual on
// either side once stored).
double signed_residual(double y, double pred);

// A set of signed relative residuals, ranked.
class ConformalResiduals {
 public:
  // Signed relative residuals; NaN marks a sample whose prediction was not finite.
  void set(std::vector<double> signed_residuals);
  size_t size() const { return abs_.size(); }
  // The conformal quantile of |r| at coverage c in (0, 1); nullopt with no residuals.
  std::optional<double> quantile(double coverage) const;
  // One-sided: the conformal quantile at c of the shortfall -r (kLower) or of
  // the excess r (kUpper); the bound is f(x) -/+ q |f(x)|. May be negative
  // where the model errs to the other side.
  std::optional<double> one_sided(double coverage, models::BoundSide side) const;
  // True when `coverage` needs more residuals than there are (the largest is then used).
  bool too_few(double coverage) const;
  std::string describe(const std::string& kind = "out-of-fold") const;

 private:
  std::vector<double> abs_, shortfall_, excess_;  // each sorted ascending
};

// What an interval at one point rests on: how many residuals, whether they
// are out-of-fold (configurations held out) or in-sample (at a measured
// configuration, where no finite-sample guarantee holds), and whether they
// are enough for the coverage asked ((n+1) c <= n; else the largest is used).
struct IntervalBasis {
  size_t residuals = 0;  // out-of-fold: one per held-out configuration; in-sample: one per sample
  bool in_sample = false;
  bool enough = true;
  // True when split conformal promises the coverage: out-of-fold and enough.
  bool coverage_promised() const { return !in_sample && enough; }
};

// The rank a caller reads from a set of residuals: a two-sided quantile or a
// one-sided bound at its coverage.
using ResidualRank = std::function<std::optional<double>(const ConformalResiduals&)>;

// Residuals split into equal-count bins by a key (Mondrian conformal
// prediction: the guarantee holds within each bin).
class BinnedResiduals {
 public:
  // At most `max_bins` bins, and only as many as give each `min_per_bin`
  // residuals. A boundary that falls between equal keys moves to the nearest
  // place between unequal ones that leaves min_per_bin on both sides, and is
  // dropped where there is none, so that every key lies in exactly one bin
  // and no bin holds fewer than min_per_bin (unless all do: fewer residuals
  // than min_per_bin make one bin).
  void fit(std::vector<std::pair<double, double>> key_residual, int max_bins, int min_per_bin);
  void clear();
  bool empty() const { return bins_.empty(); }
  // The bin `key` falls in. Call only when !empty().
  const ConformalResiduals& at(double key) const;
  const std::vector<double>& edges() const { return edges_; }  // bins - 1 upper edges
  const std::vector<ConformalResiduals>& bins() const { return bins_; }
  // The key range of bin b, for descriptions.
  std::string range(size_t b) const;

 private:
  std::vector<double> edges_;
  std::vector<ConformalResiduals> bins_;
};

// y -/+ q |y|, ordered.
models::Interval interval_around(double y, double q, double coverage);
// y - q |y| (kLower) or y + q |y| (kUpper).
double bound_at(double y, double q, models::BoundSide side);

// Fold index of every sample: configurations (batch, workers, nodes) shuffled
// with `seed` and dealt round-robin into min(folds, configurations) folds.
std::vector<int> config_folds(const SampleSet& s, int folds, uint64_t seed);
// How many folds config_folds deals `s` into: min(folds, configurations), at least 1.
int config_fold_count(const SampleSet& s, int folds);
// The samples of `s` with fold != k (test = false) or == k (test = true).
SampleSet fold_part(const SampleSet& s, const std::vector<int>& fold, int k, bool test);

}  // namespace trainplan::uncertainty
