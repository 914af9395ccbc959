#include "numerics/mutual_information.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "numerics/pava.h"

namespace trainplan::numerics {

std::vector<int> discretise(const std::vector<double>& column, const MiBinning& binning) {
  size_t n = column.size();
  if (n == 0) return {};
  for (double v : column)
    if (!std::isfinite(v)) throw std::invalid_argument("discretise: NaN or Inf in column");
  // Step 1: min-max normalisation (a constant column maps to 0).
  auto [lo_it, hi_it] = std::minmax_element(column.begin(), column.end());
  double lo = *lo_it, span = *hi_it - *lo_it;
  std::vector<double> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = span > 0 ? (column[i] - lo) / span : 0.0;

  ValueGroups g = group_by_value(v);
  std::vector<int> out(n);
  if (static_cast<int>(g.values.size()) <= binning.keep_distinct) {
    for (size_t i = 0; i < n; ++i) out[i] = g.group[i];
    return out;
  }
  int k = std::min(binning.max_bins, static_cast<int>(std::ceil(std::sqrt(double(n)))));
  k = std::max(k, 1);
  // Cut points at the i/k quantiles (the value at sorted position floor(i n / k));
  // a value's bin is the number of cuts <= it.
  std::vector<double> cuts;
  size_t j = 0, below = 0;  // g.values[j] covers sorted positions [below, below + counts[j])
  for (int i = 1; i < k; ++i) {
    size_t pos = static_cast<size_t>(double(i) * n / k);
    while (below + g.counts[j] <= pos) below += g.counts[j++];
    double c = g.values[j];
    if (c > g.values.front() && (cuts.empty() || c > cuts.back())) cuts.push_back(c);
  }
  std::vector<int> bin_of_value(g.values.size());
  for (size_t d = 0; d < g.values.size(); ++d)
    bin_of_value[d] = static_cast<int>(std::upper_bound(cuts.begin(), cuts.end(), g.values[d]) - cuts.begin());
  for (size_t i = 0; i < n; ++i) out[i] = bin_of_value[g.group[i]];
  return out;
}

namespace {

// Labels as codes 0..K-1 (K returned): as they are when already small and
// non-negative (discretise's output), else renumbered in sorted order.
size_t dense_codes(const std::vector<int>& labels, std::vector<int>& codes) {
  if (labels.empty()) return 0;
  auto [lo, hi] = std::minmax_element(labels.begin(), labels.end());
  if (*lo >= 0 && static_cast<size_t>(*hi) < 4 * labels.size() + 64) {
    codes = labels;
    return static_cast<size_t>(*hi) + 1;
  }
  std::vector<int> distinct = labels;
  std::sort(distinct.begin(), distinct.end());
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  codes.resize(labels.size());
  for (size_t i = 0; i < labels.size(); ++i)
    codes[i] = static_cast<int>(std::lower_bound(distinct.begin(), distinct.end(), labels[i]) - distinct.begin());
  return distinct.size();
}

double entropy_of_counts(const std::vector<long>& counts, double n) {
  double h = 0;
  for (long c : counts)
    if (c > 0) h -= (c / n) * std::log(c / n);
  return h;
}

}  // namespace

double entropy(const std::vector<int>& labels) {
  if (labels.empty()) return 0;
  std::vector<int> codes;
  std::vector<long> counts(dense_codes(labels, codes), 0);
  for (int c : codes) ++counts[c];
  return entropy_of_counts(counts, double(labels.size()));
}

// H(T | S) = H(T, S) - H(S).
double conditional_entropy(const std::vector<int>& target, const std::vector<int>& given) {
  if (target.size() != given.size()) throw std::invalid_argument("conditional_entropy: lengths differ");
  if (target.empty()) return 0;
  std::vector<int> t, g;
  size_t kt = dense_codes(target, t), kg = dense_codes(given, g);
  std::vector<long> joint(kt * kg, 0), marginal(kg, 0);
  for (size_t i = 0; i < t.size(); ++i) ++joint[size_t(t[i]) * kg + g[i]], ++marginal[g[i]];
  double n = double(target.size());
  return std::max(0.0, entropy_of_counts(joint, n) - entropy_of_counts(marginal, n));
}

MiWeights mi_weights(const std::vector<std::vector<double>>& columns, const std::vector<double>& target,
                     const MiBinning& binning) {
  if (columns.empty() || target.empty()) throw std::invalid_argument("mi_weights: no columns or no rows");
  for (const auto& c : columns)
    if (c.size() != target.size()) throw std::invalid_argument("mi_weights: a column differs in length from the target");
  std::vector<int> t = discretise(target, binning);
  MiWeights r;
  r.target_entropy = entropy(t);
  double total = 0;
  for (const auto& c : columns) {
    double m = r.target_entropy - conditional_entropy(t, discretise(c, binning));
    m = std::max(0.0, m);  // rounding can leave -1e-16
    r.mi.push_back(m);
    r.score.push_back(1.0 - 1.0 / (m + 1.0));
    total += r.score.back();
  }
  for (double s : r.score) r.weight.push_back(total > 0 ? s / total : 1.0 / columns.size());
  return r;
}

}  // namespace trainplan::numerics
