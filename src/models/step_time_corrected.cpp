#include "models/step_time_corrected.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "models/registry.h"

namespace trainplan::models {

void AllreduceLocalModel::fit(const SampleSet& set) {
  physical_.fit(set);
  std::map<std::pair<int, int>, std::map<double, std::pair<double, int>>> sums;
  for (const auto& s : set.samples) {
    int nodes = s.nodes > 0 ? s.nodes : (s.workers + gpus_per_node_ - 1) / gpus_per_node_;
    double p = physical_.predict(s.batch, s.workers, nodes);
    if (!(p > 0)) continue;
    auto& cell = sums[{nodes, s.workers}][s.batch];
    cell.first += std::log(s.epoch_time_s / p);
    cell.second += 1;
  }
  corr_.clear();
  for (const auto& [key, by_batch] : sums) {
    Series s;
    for (const auto& [b, c] : by_batch) s.emplace_back(b, c.first / c.second);
    corr_[key] = std::move(s);
  }
}

double AllreduceLocalModel::at(const Series& s, double b) {
  if (b <= s.front().first) return s.front().second;
  if (b >= s.back().first) return s.back().second;
  size_t i = std::upper_bound(s.begin(), s.end(), std::make_pair(b, double(INFINITY))) - s.begin();
  const auto& [b0, d0] = s[i - 1];
  const auto& [b1, d1] = s[i];
  return d0 + (d1 - d0) * (b - b0) / (b1 - b0);
}

double AllreduceLocalModel::correction(double batch, int workers, int nodes) const {
  if (nodes <= 0) nodes = (workers + gpus_per_node_ - 1) / gpus_per_node_;
  auto it = corr_.find({nodes, workers});
  if (it != corr_.end()) return at(it->second, batch);
  // Neighbouring worker counts on the same number of nodes.
  auto hi = corr_.lower_bound({nodes, workers});
  if (hi == corr_.end() || hi->first.first != nodes || hi == corr_.begin()) return 0;
  auto lo = std::prev(hi);
  if (lo->first.first != nodes) return 0;
  double f = double(workers - lo->first.second) / double(hi->first.second - lo->first.second);
  return (1 - f) * at(lo->second, batch) + f * at(hi->second, batch);
}

double AllreduceLocalModel::predict(double batch, int workers, int nodes) const {
  return physical_.predict(batch, workers, nodes) * std::exp(correction(batch, workers, nodes));
}

std::string AllreduceLocalModel::describe() const {
  double worst = 0;
  for (const auto& [k, s] : corr_)
    for (const auto& [b, d] : s) worst = std::max(worst, std::abs(d));
  return physical_.describe() +
         fmt::format("\n  local correction: {} (workers, nodes) series, largest |log ratio| {:.3f}", corr_.size(), worst);
}

static TimeModelRegistrar reg_local(
    "allreduce-local",
    "allreduce-physical times a per-(workers, nodes) correction interpolated in batch (physical shape outside the samples)",
    [] { return std::make_unique<AllreduceLocalModel>(); });

}  // namespace trainplan::models
