#include "models/pooled_samples.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <tuple>
#include <unordered_map>

#include "models/time_config_key.h"

namespace trainplan::models {

namespace {

struct KeyHash {
  size_t operator()(const std::tuple<double, int, double>& k) const {
    size_t h = std::hash<double>()(std::get<0>(k));
    h = h * 1000003u ^ std::hash<int>()(std::get<1>(k));
    return h * 1000003u ^ std::hash<double>()(std::get<2>(k));
  }
};

}  // namespace

SampleSet distinct_time_configs(const SampleSet& s) {
  SampleSet out = s;  // every field but the samples is the set's
  out.samples.clear();
  std::map<TimeConfigKey, std::pair<size_t, double>> at;  // -> (index in out, sum of epochs)
  for (const auto& x : s.samples) {
    const double w = x.epochs > 0 ? x.epochs : 1.0;
    const TimeConfigKey key = time_config_key(x);
    auto [it, fresh] = at.try_emplace(key, out.samples.size(), w);
    if (fresh) {
      out.samples.push_back(x);
      out.samples.back().nodes = std::get<2>(key);
      continue;
    }
    auto& [index, weight] = it->second;
    Sample& kept = out.samples[index];
    if (x.time_spread && (!kept.time_spread || *x.time_spread > *kept.time_spread)) kept.time_spread = x.time_spread;
    if (x.epoch_time_s != kept.epoch_time_s)
      kept.epoch_time_s = (kept.epoch_time_s * weight + x.epoch_time_s * w) / (weight + w);
    weight += w;
  }
  std::sort(out.samples.begin(), out.samples.end(),
            [](const Sample& a, const Sample& b) { return time_config_key(a) < time_config_key(b); });
  return out;
}

PooledMetricSamples::PooledMetricSamples(const std::vector<Sample>& samples) {
  std::unordered_map<std::tuple<double, int, double>, size_t, KeyHash> index;
  std::vector<size_t> group;  // per sample with a metric: its configuration
  std::vector<double> sum;
  for (size_t i = 0; i < samples.size(); ++i) {
    const Sample& s = samples[i];
    if (!s.metric) continue;
    auto [it, fresh] = index.try_emplace({s.batch, s.workers, s.epochs}, points_.size());
    if (fresh) {
      Point p;
      p.batch = s.batch, p.workers = s.workers, p.epochs = s.epochs, p.first = i;
      points_.push_back(p);
      sum.push_back(0);
    }
    const size_t g = it->second;
    points_[g].w += 1;
    sum[g] += *s.metric;
    group.push_back(g);
    all_.push_back(*s.metric);
  }
  n_ = all_.size();
  for (size_t g = 0; g < points_.size(); ++g) points_[g].y = sum[g] / points_[g].w;
  // Each configuration's values, sorted, with running sums for abs_dev.
  start_.assign(points_.size() + 1, 0);
  for (size_t g = 0; g < points_.size(); ++g) start_[g + 1] = start_[g] + static_cast<size_t>(points_[g].w);
  sorted_.resize(n_);
  std::vector<size_t> fill(start_.begin(), start_.end() - 1);
  for (size_t k = 0; k < n_; ++k) {
    const size_t g = group[k];
    sorted_[fill[g]++] = all_[k];
    const double d = points_[g].w > 1 ? all_[k] - points_[g].y : 0.0;
    points_[g].ss += d * d, points_[g].m3 += d * d * d, points_[g].m4 += d * d * d * d;
  }
  cum_.resize(n_);
  for (size_t g = 0; g < points_.size(); ++g) {
    std::sort(sorted_.begin() + static_cast<long>(start_[g]), sorted_.begin() + static_cast<long>(start_[g + 1]));
    points_[g].lo = sorted_[start_[g]], points_[g].hi = sorted_[start_[g + 1] - 1];
    double acc = 0;
    for (size_t k = start_[g]; k < start_[g + 1]; ++k) cum_[k] = acc += sorted_[k];
  }
}

double PooledMetricSamples::abs_dev(size_t i, double c) const {
  const size_t a = start_[i], b = start_[i + 1];
  if (b - a == 1) return std::abs(sorted_[a] - c);
  // Values below c contribute c - v, the rest v - c.
  const auto first = sorted_.begin();
  const size_t k = static_cast<size_t>(std::lower_bound(first + static_cast<long>(a), first + static_cast<long>(b), c) - first);
  const double below = k > a ? cum_[k - 1] : 0.0, total = cum_[b - 1];
  return (c * double(k - a) - below) + (total - below - c * double(b - k));
}

std::vector<size_t> thin_indices(size_t n, size_t m) {
  std::vector<size_t> out;
  if (n <= m) {
    for (size_t i = 0; i < n; ++i) out.push_back(i);
    return out;
  }
  if (m == 0) return out;
  if (m == 1) return {0};
  for (size_t k = 0; k < m; ++k) out.push_back(static_cast<size_t>(std::llround(double(k) * double(n - 1) / double(m - 1))));
  return out;
}

}  // namespace trainplan::models
