#include "replay/synthetic_store.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

#include "core/error.h"

namespace trainplan::replay {

double synthetic_epoch_time(double batch, int workers, long dataset_size) {
  const int nodes = synthetic_nodes(workers);
  const double sync = 0.01 * (workers - 1) / workers + 0.006 * (nodes - 1);
  return double(dataset_size) / (batch * workers) * (0.004 + 0.0004 * batch + sync);
}

double synthetic_metric(double global_batch, double epochs) {
  const double x = epochs * (1 + 16.0 / 1024) / (1 + global_batch / 1024);
  return 0.95 - 0.85 * std::exp(-x / 3);
}

SampleSet synthetic_store(const SyntheticStoreParams& p) {
  if (p.rows < 1 || p.batches.empty() || p.max_workers < 1 || p.max_epochs < 1)
    throw InputError("synthetic store: needs rows >= 1, batches, max_workers >= 1 and max_epochs >= 1");
  std::mt19937_64 rng(p.seed);
  std::uniform_int_distribution<size_t> pick_b(0, p.batches.size() - 1);
  std::uniform_int_distribution<int> pick_r(1, p.max_workers), pick_e(1, p.max_epochs);
  std::normal_distribution<double> z(0.0, 1.0);
  SampleSet s;
  s.direction = MetricDirection::kMax;
  s.dataset_size = p.dataset_size;
  s.source = "synthetic store";
  size_t rows = 0;
  while (rows < p.rows) {
    Sample t;
    t.batch = p.batches[pick_b(rng)];
    t.workers = pick_r(rng);
    t.nodes = synthetic_nodes(t.workers);
    t.model = p.model;
    t.hardware = "closed form";
    const int e = pick_e(rng);
    t.epoch_time_s = synthetic_epoch_time(t.batch, t.workers, p.dataset_size) * std::max(0.5, 1 + p.time_noise * z(rng));
    const double offset = p.trial_noise * z(rng);
    // The trial's curve, best so far.
    std::vector<double> curve(static_cast<size_t>(e));
    double best = -std::numeric_limits<double>::infinity();
    for (int k = 1; k <= e; ++k) {
      best = std::max(best, synthetic_metric(t.global_batch(), k) + offset + p.metric_noise * z(rng));
      curve[static_cast<size_t>(k - 1)] = best;
    }
    // Rows this trial may still add; the trial's own row comes first.
    const size_t room = p.rows - rows;
    const size_t n = std::min(room, static_cast<size_t>(e));
    auto row = [&](int k) {
      Sample r = t;
      r.epochs = k;
      r.metric = curve[static_cast<size_t>(k - 1)];
      return r;
    };
    if (p.form == SyntheticStoreParams::Form::kTrials) {
      for (size_t k = 1; k <= n; ++k) s.samples.push_back(row(static_cast<int>(k)));
    } else {
      s.samples.push_back(row(e));
      for (size_t k = 1; k < n; ++k) s.curve.push_back(row(static_cast<int>(k)));
    }
    rows += n;
  }
  return s;
}

}  // namespace trainplan::replay
