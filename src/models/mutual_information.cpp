#include "models/mutual_information.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>

namespace trainplan::models {

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

  std::vector<double> sorted = v;
  std::sort(sorted.begin(), sorted.end());
  std::vector<double> distinct = sorted;
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());

  std::vector<int> out(n);
  if (static_cast<int>(distinct.size()) <= binning.keep_distinct) {
    for (size_t i = 0; i < n; ++i)
      out[i] = static_cast<int>(std::lower_bound(distinct.begin(), distinct.end(), v[i]) - distinct.begin());
    return out;
  }
  int k = std::min(binning.max_bins, static_cast<int>(std::ceil(std::sqrt(double(n)))));
  k = std::max(k, 1);
  // Cut points at the i/k quantiles; a value's bin is the number of cuts <= it.
  std::vector<double> cuts;
  for (int i = 1; i < k; ++i) {
    double c = sorted[static_cast<size_t>(double(i) * n / k)];
    if (c > sorted.front() && (cuts.empty() || c > cuts.back())) cuts.push_back(c);
  }
  for (size_t i = 0; i < n; ++i)
    out[i] = static_cast<int>(std::upper_bound(cuts.begin(), cuts.end(), v[i]) - cuts.begin());
  return out;
}

double entropy(const std::vector<int>& labels) {
  if (labels.empty()) return 0;
  std::map<int, long> counts;
  for (int l : labels) ++counts[l];
  double n = double(labels.size()), h = 0;
  for (auto& [l, c] : counts) {
    double p = c / n;
    h -= p * std::log(p);
  }
  return h;
}

double conditional_entropy(const std::vector<int>& target, const std::vector<int>& given) {
  if (target.size() != given.size()) throw std::invalid_argument("conditional_entropy: lengths differ");
  std::map<int, std::vector<int>> groups;
  for (size_t i = 0; i < target.size(); ++i) groups[given[i]].push_back(target[i]);
  double n = double(target.size()), h = 0;
  for (auto& [g, t] : groups) h += (t.size() / n) * entropy(t);
  return h;
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

}  // namespace trainplan::models
