// Picking a few items of a long sorted list for a chart: up to k items,
// evenly spread, the first and the last included.
#pragma once
#include <cmath>
#include <cstddef>
#include <vector>

namespace trainplan {

// Up to `k` items of `sorted`, evenly spread by index, first and last
// included (k = 1: the first only; k <= 0: none), without repeating an item;
// all of them when there are at most k.
template <class T>
std::vector<T> even_subset(const std::vector<T>& sorted, int k) {
  if (static_cast<int>(sorted.size()) <= k) return sorted;
  if (k <= 1) return k == 1 ? std::vector<T>{sorted.front()} : std::vector<T>{};
  std::vector<T> out;
  for (int i = 0; i < k; ++i) {
    const size_t at = static_cast<size_t>(std::lround(double(i) * double(sorted.size() - 1) / double(k - 1)));
    if (out.empty() || !(out.back() == sorted[at])) out.push_back(sorted[at]);
  }
  return out;
}

}  // namespace trainplan
