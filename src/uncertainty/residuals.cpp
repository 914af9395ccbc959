#include "uncertainty/residuals.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <random>
#include <tuple>

#include "core/error.h"
#include "models/time_config_key.h"

namespace trainplan::uncertainty {

namespace {

using Key = models::TimeConfigKey;  // batch, workers, nodes

// As the time models' points are told apart (models/time_config_key.h).
Key key_of(const Sample& s) { return models::time_config_key(s); }

// The ceil((n+1) c)-th smallest of `sorted` (clamped to the sample).
std::optional<double> conformal_rank(const std::vector<double>& sorted, double coverage) {
  if (sorted.empty()) return std::nullopt;
  if (!(coverage > 0 && coverage < 1)) throw InputError("coverage must lie in (0, 1), got " + fmt::format("{}", coverage));
  double rank = std::ceil((double(sorted.size()) + 1) * coverage);  // 1-based
  size_t i = static_cast<size_t>(std::clamp(rank, 1.0, double(sorted.size()))) - 1;
  return sorted[i];
}

}  // namespace

double signed_residual(double y, double pred) {
  if (!std::isfinite(pred)) return std::numeric_limits<double>::quiet_NaN();
  double d = std::abs(pred) > 0 ? std::abs(pred) : std::max(std::abs(y), 1e-300);
  return (y - pred) / d;
}

void ConformalResiduals::set(std::vector<double> r) {
  const double inf = std::numeric_limits<double>::infinity();
  abs_.clear(), shortfall_.clear(), excess_.clear();
  for (double x : r) {
    bool bad = std::isnan(x);
    abs_.push_back(bad ? inf : std::abs(x));
    shortfall_.push_back(bad ? inf : -x);
    excess_.push_back(bad ? inf : x);
  }
  std::sort(abs_.begin(), abs_.end());
  std::sort(shortfall_.begin(), shortfall_.end());
  std::sort(excess_.begin(), excess_.end());
}

std::optional<double> ConformalResiduals::quantile(double coverage) const { return conformal_rank(abs_, coverage); }

std::optional<double> ConformalResiduals::one_sided(double coverage, models::BoundSide side) const {
  return conformal_rank(side == models::BoundSide::kLower ? shortfall_ : excess_, coverage);
}

bool ConformalResiduals::too_few(double coverage) const {
  return std::ceil((double(abs_.size()) + 1) * coverage) > double(abs_.size());
}

std::string ConformalResiduals::describe(const std::string& kind) const {
  if (abs_.empty()) return "no " + kind + " residuals";
  auto q = [&](double c) { return quantile(c).value_or(0) * 100; };
  std::string s = fmt::format("{} {} relative residuals; half-width at 50%: {:.2f}%, 80%: {:.2f}%, 90%: {:.2f}%, "
                              "95%: {:.2f}%",
                              abs_.size(), kind, q(0.5), q(0.8), q(0.9), q(0.95));
  auto side = [&](models::BoundSide b) { return one_sided(0.9, b).value_or(0) * 100; };
  s += fmt::format("; one-sided at 90%: {:+.2f}% below, {:+.2f}% above", -side(models::BoundSide::kLower),
                   side(models::BoundSide::kUpper));
  if (too_few(0.95)) s += " (too few residuals to guarantee 95%)";
  return s;
}

void BinnedResiduals::clear() {
  edges_.clear();
  bins_.clear();
}

void BinnedResiduals::fit(std::vector<std::pair<double, double>> pr, int max_bins, int min_per_bin) {
  clear();
  const int nb = std::max(1, std::min(max_bins, static_cast<int>(pr.size()) / std::max(1, min_per_bin)));
  std::sort(pr.begin(), pr.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  const size_t least = static_cast<size_t>(std::max(1, min_per_bin));
  size_t lo = 0;
  // A boundary between unequal keys that leaves min_per_bin on both sides:
  // moved past a run of ties, it must not starve either bin.
  auto splits_at = [&](size_t i) {
    return i > lo && i < pr.size() && pr[i - 1].first < pr[i].first && i - lo >= least && pr.size() - i >= least;
  };
  for (int b = 0; b < nb && lo < pr.size(); ++b) {
    size_t hi = pr.size();
    if (b + 1 < nb) {
      const size_t want = pr.size() * (b + 1) / nb;
      size_t best = 0;  // 0: no boundary after lo
      for (size_t d = 0; d < pr.size() && best == 0; ++d) {
        if (want + d > lo && splits_at(want + d)) best = want + d;
        else if (want >= d && want - d > lo && splits_at(want - d)) best = want - d;
      }
      if (best == 0) continue;
      hi = best;
    }
    std::vector<double> rb;
    for (size_t i = lo; i < hi; ++i) rb.push_back(pr[i].second);
    ConformalResiduals c;
    c.set(std::move(rb));
    bins_.push_back(std::move(c));
    if (hi < pr.size()) edges_.push_back(0.5 * (pr[hi - 1].first + pr[hi].first));
    lo = hi;
  }
}

const ConformalResiduals& BinnedResiduals::at(double key) const {
  size_t b = std::upper_bound(edges_.begin(), edges_.end(), key) - edges_.begin();
  return bins_[std::min(b, bins_.size() - 1)];
}

std::string BinnedResiduals::range(size_t b) const {
  if (edges_.empty()) return "any";
  if (b == 0) return fmt::format("< {:.4g}", edges_[0]);
  if (b == edges_.size()) return fmt::format(">= {:.4g}", edges_[b - 1]);
  return fmt::format("{:.4g} .. {:.4g}", edges_[b - 1], edges_[b]);
}

models::Interval interval_around(double y, double q, double coverage) {
  // An infinite rank (a fold whose prediction was not finite) is no bound at
  // all, also around a prediction of 0, where inf x 0 would be NaN.
  const double inf = std::numeric_limits<double>::infinity();
  if (std::isinf(q) && q > 0) return models::Interval{-inf, inf, coverage};
  double a = y - q * std::abs(y), b = y + q * std::abs(y);
  return models::Interval{std::min(a, b), std::max(a, b), coverage};
}

double bound_at(double y, double q, models::BoundSide side) {
  const double inf = std::numeric_limits<double>::infinity();
  if (std::isinf(q) && q > 0) return side == models::BoundSide::kLower ? -inf : inf;
  return side == models::BoundSide::kLower ? y - q * std::abs(y) : y + q * std::abs(y);
}

std::vector<int> config_folds(const SampleSet& s, int folds, uint64_t seed) {
  std::map<Key, int> index;
  for (const auto& x : s.samples) index.emplace(key_of(x), 0);
  std::vector<Key> keys;
  for (auto& [k, v] : index) keys.push_back(k);
  std::mt19937_64 rng(seed);
  std::shuffle(keys.begin(), keys.end(), rng);
  int k = std::max(1, std::min<int>(folds, static_cast<int>(keys.size())));
  for (size_t i = 0; i < keys.size(); ++i) index[keys[i]] = static_cast<int>(i % k);
  std::vector<int> out;
  for (const auto& x : s.samples) out.push_back(index[key_of(x)]);
  return out;
}

int config_fold_count(const SampleSet& s, int folds) {
  std::set<Key> keys;
  for (const auto& x : s.samples) keys.insert(key_of(x));
  return std::max(1, std::min<int>(folds, static_cast<int>(keys.size())));
}

SampleSet fold_part(const SampleSet& s, const std::vector<int>& fold, int k, bool test) {
  SampleSet out;
  out.direction = s.direction;
  out.dataset_size = s.dataset_size;
  out.source = s.source;
  for (size_t i = 0; i < s.size(); ++i)
    if ((fold[i] == k) == test) out.samples.push_back(s.samples[i]);
  return out;
}

}  // namespace trainplan::uncertainty
