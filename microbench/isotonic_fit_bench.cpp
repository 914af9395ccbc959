// Fit time of the faithful isotonic-mi model on 10^5 synthetic samples.
// Samples (seeded): batch uniform in 16..256, workers 1..16 (4 a node),
// epochs 1..40;
//   epoch_time = 50000 / (b r) * (0.02 + 0.001 b) * (1 + 0.1 log2 r)
//   metric     = 0.95 - 0.5 exp(-e / 8) - 0.0003 b + N(0, 0.005)
#include <benchmark/benchmark.h>

#include <cmath>
#include <random>

#include "models/isotonic_mi.h"
#include "numerics/pava.h"

using namespace trainplan;
using namespace trainplan::models;
using namespace trainplan::numerics;

namespace {

SampleSet synthetic(size_t n) {
  std::mt19937_64 rng(1);
  std::uniform_int_distribution<int> B(16, 256), R(1, 16), E(1, 40);
  std::normal_distribution<double> noise(0, 0.005);
  SampleSet s;
  s.samples.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    Sample x;
    x.batch = B(rng);
    x.workers = R(rng);
    x.nodes = (x.workers + 3) / 4;
    x.epochs = E(rng);
    x.epoch_time_s = 50000 / (x.batch * x.workers) * (0.02 + 0.001 * x.batch) * (1 + 0.1 * std::log2(x.workers));
    x.metric = 0.95 - 0.5 * std::exp(-x.epochs / 8) - 0.0003 * x.batch + noise(rng);
    s.samples.push_back(x);
  }
  return s;
}

void BM_IsotonicMiFitTime(benchmark::State& st) {
  auto s = synthetic(st.range(0));
  for (auto _ : st) {
    IsotonicMiTimeModel m;
    m.fit(s);
    benchmark::DoNotOptimize(m.predict(64, 4, 1));
  }
  st.SetItemsProcessed(st.iterations() * st.range(0));
}
BENCHMARK(BM_IsotonicMiFitTime)->Arg(1000)->Arg(100000)->Unit(benchmark::kMillisecond);

void BM_IsotonicMiFitMetric(benchmark::State& st) {
  auto s = synthetic(st.range(0));
  for (auto _ : st) {
    IsotonicMiMetricModel m;
    m.fit(s);
    benchmark::DoNotOptimize(m.predict(64, 4, 10));
  }
  st.SetItemsProcessed(st.iterations() * st.range(0));
}
BENCHMARK(BM_IsotonicMiFitMetric)->Arg(1000)->Arg(100000)->Unit(benchmark::kMillisecond);

void BM_IsotonicMiFitMetricUnimodal(benchmark::State& st) {
  auto s = synthetic(st.range(0));
  IsotonicMiParams p;
  p.unimodal_metric_batch = true;
  for (auto _ : st) {
    IsotonicMiMetricModel m(p, "isotonic-mi-unimodal");
    m.fit(s);
    benchmark::DoNotOptimize(m.predict(64, 4, 10));
  }
  st.SetItemsProcessed(st.iterations() * st.range(0));
}
BENCHMARK(BM_IsotonicMiFitMetricUnimodal)->Arg(100000)->Unit(benchmark::kMillisecond);

// PAVA alone on 10^5 distinct x (a noisy increasing sequence).
void BM_PavaDistinct(benchmark::State& st) {
  std::mt19937_64 rng(2);
  std::normal_distribution<double> noise(0, 1);
  std::vector<double> x(st.range(0)), y(st.range(0));
  for (size_t i = 0; i < x.size(); ++i) x[i] = double(i), y[i] = 1e-4 * i + noise(rng);
  for (auto _ : st) benchmark::DoNotOptimize(fit_isotonic(x, y, {}, Shape::kIncreasing).sse);
  st.SetItemsProcessed(st.iterations() * st.range(0));
}
BENCHMARK(BM_PavaDistinct)->Arg(100000)->Unit(benchmark::kMillisecond);

}  // namespace
