#include "models/step_time_per_batch.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/nodes.h"
#include "core/error.h"
#include "models/registry.h"

namespace trainplan::models {
namespace {

// Averages repeated batches and sorts.
std::vector<std::pair<double, double>> collapse(std::vector<std::pair<double, double>> v) {
  std::sort(v.begin(), v.end());
  std::vector<std::pair<double, double>> out;
  for (size_t i = 0; i < v.size();) {
    size_t j = i;
    double sum = 0;
    for (; j < v.size() && v[j].first == v[i].first; ++j) sum += v[j].second;
    out.emplace_back(v[i].first, sum / double(j - i));
    i = j;
  }
  return out;
}

}  // namespace

void PerBatchExtrapolationModel::fit(const SampleSet& set) {
  if (set.empty()) throw InputError(set.source, 0, "", "per-batch-extrapolation: no samples to fit");
  n_known_ = set.dataset_size && *set.dataset_size > 0;
  n_ = n_known_ ? double(*set.dataset_size) : 1.0;
  std::map<std::pair<int, int>, Series> raw;
  std::map<int, Series> raw_w;
  for (const auto& s : set.samples) {
    if (!(s.batch > 0) || s.workers < 1 || !(s.epoch_time_s > 0))
      throw InputError(set.source, 0, "", "per-batch-extrapolation: samples need batch > 0, workers >= 1, epoch_time_s > 0");
    int nodes = s.nodes > 0 ? s.nodes : nodes_for(s.workers, p_.gpus_per_node);
    double step = s.epoch_time_s * s.batch * s.workers / n_;
    raw[{s.workers, nodes}].emplace_back(s.batch, step);
    raw_w[s.workers].emplace_back(s.batch, step);
  }
  by_workers_nodes_.clear();
  by_workers_.clear();
  for (auto& [k, v] : raw) by_workers_nodes_[k] = collapse(std::move(v));
  for (auto& [k, v] : raw_w) by_workers_[k] = collapse(std::move(v));
}

double PerBatchExtrapolationModel::step_at(const Series& s, double b) const {
  if (s.size() == 1) return s[0].second;
  // The segment holding b, or the end segment nearest to it.
  size_t i = std::upper_bound(s.begin(), s.end(), std::make_pair(b, double(INFINITY))) - s.begin();
  i = std::clamp<size_t>(i, 1, s.size() - 1);
  const auto& [b0, t0] = s[i - 1];
  const auto& [b1, t1] = s[i];
  double t = t0 + (t1 - t0) * (b - b0) / (b1 - b0);
  // A falling end segment must not extrapolate to zero or below.
  t = std::max(t, 0.1 * std::min(t0, t1));
  // Below the smallest batch measured, an epoch takes no less than it took there: a smaller step
  // is no cheaper per example (yolov3's steps 4 to 15 extrapolated to an epoch at batch 1 in 40%
  // of the time at batch 4, and plans took it).
  if (b < s.front().first) t = std::max(t, s.front().second * b / s.front().first);
  return t;
}

double PerBatchExtrapolationModel::step_for_workers(int workers, double batch) const {
  auto hi = by_workers_.lower_bound(workers);
  if (hi != by_workers_.end() && hi->first == workers) return step_at(hi->second, batch);
  if (hi == by_workers_.begin()) return step_at(hi->second, batch);
  auto lo = std::prev(hi);
  if (hi == by_workers_.end()) return step_at(lo->second, batch);
  double f = double(workers - lo->first) / double(hi->first - lo->first);
  return (1 - f) * step_at(lo->second, batch) + f * step_at(hi->second, batch);
}

double PerBatchExtrapolationModel::predict(double batch, int workers, int nodes) const {
  if (by_workers_.empty()) throw std::logic_error("per-batch-extrapolation: predict() before fit()");
  if (nodes <= 0) nodes = nodes_for(workers, p_.gpus_per_node);
  auto it = by_workers_nodes_.find({workers, nodes});
  double step = it != by_workers_nodes_.end() ? step_at(it->second, batch) : step_for_workers(workers, batch);
  return n_ / (batch * workers) * step;
}

std::string PerBatchExtrapolationModel::describe() const {
  std::string s = fmt::format("epoch time = N/(b r) x measured step time; {} (workers, nodes) series; N = {}",
                              by_workers_nodes_.size(), n_known_ ? fmt::format("{:.0f}", n_) : "unknown (absorbed)");
  for (const auto& [k, v] : by_workers_nodes_)
    s += fmt::format("\n  r={} nodes={}: {} batches in [{:g}, {:g}]", k.first, k.second, v.size(), v.front().first,
                     v.back().first);
  return s;
}

static TimeModelRegistrar reg_per_batch(
    "per-batch-extrapolation",
    "seed 001 simple extrapolation: N/(b r) x measured time per batch, interpolated in batch and workers",
    [] { return std::make_unique<PerBatchExtrapolationModel>(); });

}  // namespace trainplan::models
