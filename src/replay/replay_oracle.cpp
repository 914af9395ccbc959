#include "replay/replay_oracle.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "core/error.h"
#include "replay/app_info.h"

namespace trainplan::replay {

ReplayOracle::ReplayOracle(io::PolluxTrace trace, OracleOptions opts) : trace_(std::move(trace)) {
  gpus_per_node_ = opts.gpus_per_node > 0 ? opts.gpus_per_node : 4;
  alignment_ = opts.metric_alignment;
  auto info = known_app(trace_.name);
  direction_ = opts.direction ? *opts.direction : (info ? info->direction : MetricDirection::kMax);
  epoch_limit_ = info ? info->epoch_limit : 0;
  // The trace's own step (each row is one epoch at the smallest batch) is
  // preferred over the published size: for yolov3 they disagree (16,552 in
  // the trace against 117,264 published) and only the trace's is consistent
  // with its epoch limit.
  if (opts.dataset_size) {
    dataset_size_ = *opts.dataset_size;
  } else if (!trace_.curves.empty() && trace_.curves.front().rows.size() >= 2) {
    // At the smallest batch each row is one data epoch: N = iteration step x B.
    const auto& c = trace_.curves.front();
    double step = c.rows[1].iteration - c.rows[0].iteration;
    dataset_size_ = std::lround(step * static_cast<double>(c.global_batch));
  } else if (!trace_.curves.empty()) {
    const auto& c = trace_.curves.front();
    dataset_size_ = std::lround(c.rows[0].iteration * static_cast<double>(c.global_batch));
  } else if (info && info->dataset_size > 0) {
    dataset_size_ = info->dataset_size;
  }
  if (dataset_size_ <= 0)
    throw InputError(trace_.dir, 0, "",
                     "dataset size unknown for '" + trace_.name +
                         "': the trace has no learning curve to derive it from, and the network is not one whose size "
                         "is known (give --dataset-size where the verb takes it, or leave this trace out)");

  for (const auto& r : trace_.placements) by_placement_[r.placement].push_back({r.local_bsz, r.step_time});
  for (const auto& r : trace_.scalability) by_scale_[{r.num_nodes, r.num_replicas}].push_back({r.local_bsz, r.step_time});
  auto sort_series = [](BatchSeries& s) {
    std::sort(s.begin(), s.end());
    // Average repeated batches so interpolation is well defined.
    BatchSeries out;
    for (size_t i = 0; i < s.size();) {
      size_t j = i;
      double sum = 0;
      while (j < s.size() && s[j].first == s[i].first) sum += s[j++].second;
      out.push_back({s[i].first, sum / static_cast<double>(j - i)});
      i = j;
    }
    s = std::move(out);
  };
  for (auto& [k, s] : by_placement_) sort_series(s);
  for (auto& [k, s] : by_scale_) sort_series(s);

  bool first = true;
  for (const auto& c : trace_.curves)
    for (const auto& r : c.rows) {
      if (first) worst_metric_ = r.metric;
      else if (direction_ == MetricDirection::kMax) worst_metric_ = std::min(worst_metric_, r.metric);
      else worst_metric_ = std::max(worst_metric_, r.metric);
      first = false;
    }
  for (const auto& c : trace_.curves) {
    Curve cv;
    cv.global_batch = static_cast<double>(c.global_batch);
    double best = 0;
    bool have = false;
    for (const auto& r : c.rows) {
      if (!have || (direction_ == MetricDirection::kMax ? r.metric > best : r.metric < best)) best = r.metric;
      have = true;
      bool g = r.grad_sqr && r.grad_var;
      cv.points.push_back({r.iteration * cv.global_batch / static_cast<double>(dataset_size_), best,
                           g ? *r.grad_sqr : 0.0, g ? *r.grad_var : 0.0, g});
    }
    curves_.push_back(std::move(cv));
  }
}

ReplayOracle ReplayOracle::from_dir(const std::string& dir, OracleOptions opts) {
  return ReplayOracle(io::read_pollux_trace(dir), opts);
}

int ReplayOracle::default_nodes(int workers) const {
  return std::max(1, (workers + gpus_per_node_ - 1) / gpus_per_node_);
}

std::string ReplayOracle::placement_for(int workers, int nodes) {
  if (nodes < 1 || workers < nodes) return "";
  std::string p;
  int base = workers / nodes, extra = workers % nodes;
  for (int i = 0; i < nodes; ++i) {
    int g = base + (i >= nodes - extra ? 1 : 0);  // larger counts last: digits ascending
    if (g > 9) return "";
    p.push_back(static_cast<char>('0' + g));
  }
  return p;
}

std::optional<double> ReplayOracle::interp_batch(const BatchSeries& s, double b) {
  if (s.empty()) return std::nullopt;
  const double eps = 1e-9;
  if (b < s.front().first - eps || b > s.back().first + eps) return std::nullopt;
  if (s.size() == 1) return s.front().second;
  auto it = std::lower_bound(s.begin(), s.end(), std::make_pair(b, -1e300));
  if (it == s.end()) return s.back().second;
  if (it == s.begin()) return s.front().second;
  auto lo = it - 1;
  double t = (b - lo->first) / (it->first - lo->first);
  return lo->second + t * (it->second - lo->second);
}

std::optional<double> ReplayOracle::scalability_step(double b, int workers, int nodes) const {
  // Smallest measured node count >= nodes; then linear in replicas.
  std::set<int> node_counts;
  for (const auto& [k, s] : by_scale_) node_counts.insert(k.first);
  for (int n : node_counts) {
    if (n < nodes) continue;
    std::vector<std::pair<int, double>> by_r;  // replicas -> step time at b
    for (const auto& [k, s] : by_scale_)
      if (k.first == n)
        if (auto v = interp_batch(s, b)) by_r.push_back({k.second, *v});
    if (by_r.empty()) continue;
    std::sort(by_r.begin(), by_r.end());
    if (workers < by_r.front().first || workers > by_r.back().first) continue;
    for (size_t i = 0; i < by_r.size(); ++i) {
      if (by_r[i].first == workers) return by_r[i].second;
      if (i + 1 < by_r.size() && by_r[i].first < workers && workers < by_r[i + 1].first) {
        double t = double(workers - by_r[i].first) / double(by_r[i + 1].first - by_r[i].first);
        return by_r[i].second + t * (by_r[i + 1].second - by_r[i].second);
      }
    }
  }
  return std::nullopt;
}

std::optional<double> ReplayOracle::step_time(double local_bsz, int workers, int nodes) const {
  if (workers < 1 || local_bsz <= 0) return std::nullopt;
  if (nodes <= 0) nodes = default_nodes(workers);
  if (nodes > workers) return std::nullopt;
  std::string p = placement_for(workers, nodes);
  if (!p.empty()) {
    auto it = by_placement_.find(p);
    if (it != by_placement_.end()) return interp_batch(it->second, local_bsz);
  }
  return scalability_step(local_bsz, workers, nodes);
}

std::optional<double> ReplayOracle::measured_step_time(double local_bsz, int workers, int nodes) const {
  if (workers < 1 || nodes < 1 || nodes > workers || local_bsz <= 0) return std::nullopt;
  const std::string p = placement_for(workers, nodes);
  if (auto it = by_placement_.find(p); !p.empty() && it != by_placement_.end()) return interp_batch(it->second, local_bsz);
  if (auto it = by_scale_.find({nodes, workers}); it != by_scale_.end()) return interp_batch(it->second, local_bsz);
  return std::nullopt;
}

std::optional<double> ReplayOracle::epoch_time(double local_bsz, int workers, int nodes) const {
  auto st = step_time(local_bsz, workers, nodes);
  if (!st) return std::nullopt;
  return static_cast<double>(dataset_size_) / (local_bsz * workers) * *st;
}

std::pair<double, double> ReplayOracle::local_batch_range() const {
  auto it = by_placement_.find("1");
  const BatchSeries& s = it != by_placement_.end() ? it->second : by_placement_.begin()->second;
  return {s.front().first, s.back().first};
}

std::pair<double, double> ReplayOracle::global_batch_range() const {
  if (curves_.empty()) return {0, 0};
  return {curves_.front().global_batch, curves_.back().global_batch};
}

double ReplayOracle::curve_value(const std::vector<CurvePoint>& p, double e) const {
  if (e <= 0) return worst_metric_;
  if (e < p.front().epochs) return worst_metric_ + (p.front().best - worst_metric_) * (e / p.front().epochs);
  if (e >= p.back().epochs) return p.back().best;
  auto it = std::lower_bound(p.begin(), p.end(), e, [](const CurvePoint& a, double x) { return a.epochs < x; });
  if (it == p.begin()) return it->best;  // e is exactly the first evaluation (bert: N = step x B)
  auto lo = it - 1;
  double t = (e - lo->epochs) / (it->epochs - lo->epochs);
  return lo->best + t * (it->best - lo->best);
}

std::optional<std::pair<double, double>> ReplayOracle::curve_grad(const Curve& c, double e) const {
  const auto& p = c.points;
  if (!p.front().has_grad) return std::nullopt;
  // Nearest evaluation at or before e (gradient statistics are not monotone).
  size_t i = 0;
  while (i + 1 < p.size() && p[i + 1].epochs <= e) ++i;
  return std::make_pair(p[i].grad_sqr, p[i].grad_var);
}

std::optional<double> ReplayOracle::metric(double B, double e) const {
  if (curves_.empty()) return std::nullopt;
  const double eps = 1e-9 * B;
  if (B < curves_.front().global_batch - eps || B > curves_.back().global_batch + eps) return std::nullopt;
  if (curves_.size() == 1) return curve_value(curves_.front().points, e);
  size_t hi = 0;
  while (hi < curves_.size() && curves_[hi].global_batch < B - eps) ++hi;
  if (hi == curves_.size()) hi = curves_.size() - 1;
  if (std::abs(curves_[hi].global_batch - B) <= eps || hi == 0) return curve_value(curves_[hi].points, e);
  const Curve& a = curves_[hi - 1];
  const Curve& b = curves_[hi];
  double t = (std::log2(B) - std::log2(a.global_batch)) / (std::log2(b.global_batch) - std::log2(a.global_batch));
  if (alignment_ == MetricAlignment::kDataEpochs) return (1 - t) * curve_value(a.points, e) + t * curve_value(b.points, e);
  // Row by row (equal progress): blend iterations and metric of row k.
  const size_t rows = std::min(a.points.size(), b.points.size());
  std::vector<CurvePoint> blended(rows);
  for (size_t k = 0; k < rows; ++k) {
    const CurvePoint &pa = a.points[k], &pb = b.points[k];
    blended[k] = pa;
    blended[k].epochs = B * ((1 - t) * pa.epochs / a.global_batch + t * pb.epochs / b.global_batch);
    blended[k].best = (1 - t) * pa.best + t * pb.best;
  }
  return curve_value(blended, e);
}

std::optional<std::pair<double, double>> ReplayOracle::gradient_stats(double B, double e) const {
  if (curves_.empty()) return std::nullopt;
  auto [lo, hi] = global_batch_range();
  if (B < lo * (1 - 1e-9) || B > hi * (1 + 1e-9)) return std::nullopt;
  size_t k = 0;
  double best = 1e300;
  for (size_t i = 0; i < curves_.size(); ++i) {
    double d = std::abs(std::log2(curves_[i].global_batch) - std::log2(B));
    if (d < best) best = d, k = i;
  }
  return curve_grad(curves_[k], e);
}

}  // namespace trainplan::replay
