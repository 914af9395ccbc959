#include "sim/app_model.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/error.h"

namespace trainplan::sim {

AppModel::AppModel(std::shared_ptr<const replay::ReplayOracle> oracle) : oracle_(std::move(oracle)) {
  const auto& tr = oracle_->trace();
  if (tr.curves.empty())
    throw InputError(tr.dir, 0, "", "application '" + tr.name + "' has no validation curves: the simulator needs them for its work");
  int limit = oracle_->epoch_limit();
  size_t shortest = tr.curves.front().rows.size();
  for (const auto& c : tr.curves) shortest = std::min(shortest, c.rows.size());
  // A job's work is its epochs' boundaries over every curve: one short curve would cut every job short.
  if (limit > 0)
    for (const auto& c : tr.curves)
      if (c.rows.size() < size_t(limit))
        throw InputError(c.path, 0, "",
                         fmt::format("{} rows, fewer than the application's {} epochs: every job's work would end "
                                     "at epoch {}",
                                     c.rows.size(), limit, c.rows.size()));
  size_t n = limit > 0 ? std::min<size_t>(limit, shortest) : shortest;
  for (size_t e = 0; e < n; ++e) {
    double p = 1e300;
    for (const auto& c : tr.curves) p = std::min(p, c.rows[e].progress);
    boundaries_.push_back(p);
  }
  for (const auto& c : tr.curves) {
    curve_batches_.push_back(static_cast<double>(c.global_batch));
    std::vector<std::pair<double, double>> g;
    for (const auto& r : c.rows) g.push_back({r.grad_sqr.value_or(1.0), r.grad_var.value_or(0.0)});
    grad_.push_back(std::move(g));
  }
  init_batch_ = static_cast<int>(tr.curves.front().global_batch);
  max_batch_ = static_cast<int>(tr.curves.back().global_batch);
  auto [lo, hi] = oracle_->local_batch_range();
  min_local_ = static_cast<int>(std::ceil(lo));
  max_local_ = static_cast<int>(std::floor(hi));
  // Pollux's simulator caps yolov3 at 8 images per GPU (GPU memory); larger
  // per-GPU batches accumulate gradients.
  if (tr.name == "yolov3") max_local_ = std::min(max_local_, 8);
}

std::optional<double> AppModel::step_time(int atomic, int gpus, int nodes) const {
  if (nodes <= 0) nodes = oracle_->default_nodes(gpus);
  if (auto t = oracle_->step_time(atomic, gpus, nodes)) return t;
  // Outside the measured placements (for example 7 GPUs over 7 nodes, which
  // neither placements.csv nor scalability.csv holds): the nearest measured
  // spread, wider first (pessimistic), then narrower.
  for (int n = nodes + 1; n <= gpus; ++n)
    if (auto t = oracle_->step_time(atomic, gpus, n)) return t;
  for (int n = nodes - 1; n >= 1; --n)
    if (auto t = oracle_->step_time(atomic, gpus, n)) return t;
  return std::nullopt;
}

std::optional<Execution> AppModel::execute(int gpus, int nodes, int batch) const {
  if (gpus < 1 || batch < 1) return std::nullopt;
  const std::tuple<int, int, int> key{gpus, nodes, batch};
  auto it = exec_cache_.find(key);
  if (it != exec_cache_.end()) return it->second;
  std::optional<Execution> res;
  // Pollux's rules: the per-GPU batch is split into micro-steps of at most
  // max_local; the global batch never exceeds the largest measured one.
  int local = (batch + gpus - 1) / gpus;
  int accum = (local + max_local_ - 1) / max_local_ - 1;
  if (gpus == 1 && batch > init_batch_) accum = std::max(1, accum);
  int atomic = (local + accum) / (accum + 1);
  atomic = std::min(atomic, max_batch_ / (gpus * (accum + 1)));
  if (atomic >= min_local_) {
    auto step = step_time(atomic, gpus, nodes);
    auto compute = accum > 0 ? step_time(atomic, 1, 1) : std::optional<double>(0.0);
    if (step && compute) res = Execution{atomic, accum, gpus * atomic * (accum + 1), *step + accum * *compute};
  }
  exec_cache_.emplace(key, res);
  return res;
}

double AppModel::gain(int batch, int epoch) const {
  double B = std::clamp<double>(batch, curve_batches_.front(), curve_batches_.back());
  size_t hi = 0;
  while (hi + 1 < curve_batches_.size() && curve_batches_[hi] < B) ++hi;
  size_t lo = hi > 0 && curve_batches_[hi] > B ? hi - 1 : hi;
  auto at = [&](size_t c) {
    const auto& g = grad_[c];
    return g[std::min<size_t>(std::max(epoch, 0), g.size() - 1)];
  };
  auto [sl, vl] = at(lo);
  auto [sh, vh] = at(hi);
  double t = hi == lo ? 0 : (B - curve_batches_[lo]) / (curve_batches_[hi] - curve_batches_[lo]);
  double sqr = sl + t * (sh - sl), var = vl + t * (vh - vl);
  double scale = static_cast<double>(batch) / init_batch_;
  if (sqr <= 0 && var <= 0) return 1.0;
  return (var + sqr) / (var / scale + sqr);
}

double AppModel::rate(int gpus, int nodes, int batch, int epoch) const {
  auto ex = execute(gpus, nodes, batch);
  if (!ex || ex->step_s <= 0) return 0;
  return gain(ex->batch, epoch) / ex->step_s;
}

}  // namespace trainplan::sim
