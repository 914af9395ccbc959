// Scaling with the size of the profile store (docs/lab/SCALING.md): the fit
// of every registered model, and the default `plan` (auto model choice,
// fit, search), on synthetic stores of 10^3, 10^4 and 10^5 rows; and the
// planner's search alone over 10^6 configurations. Targets (the issue):
// plan under 2 s and 500 MB at 10^5 rows, any fit under 1 s, the search
// under 50 ms.
//
// The store (replay/synthetic_store.h, seed 1) writes every epoch of every
// trial as a trial row (Form::kTrials), the heavier form for the models,
// which fit the trials alone: 6 batches x 8 workers x 30 epoch counts, so at
// most 1,440 distinct configurations, repeated as the rows grow.
#include <benchmark/benchmark.h>

#include <map>
#include <string>

#include "app/model_source.h"
#include "app/plan_request.h"
#include "models/metric_global_batch.h"
#include "models/performance_model.h"
#include "models/registry.h"
#include "plan/exhaustive.h"
#include "plan/planner.h"
#include "replay/synthetic_store.h"

using namespace trainplan;

namespace {

const SampleSet& store(size_t rows) {
  static std::map<size_t, SampleSet> cache;
  auto it = cache.find(rows);
  if (it == cache.end()) {
    replay::SyntheticStoreParams p;
    p.rows = rows;
    p.form = replay::SyntheticStoreParams::Form::kTrials;
    it = cache.emplace(rows, replay::synthetic_store(p)).first;
  }
  return it->second;
}

void BM_ScaleFitTime(benchmark::State& state, const std::string& model) {
  const SampleSet& s = store(static_cast<size_t>(state.range(0)));
  for (auto _ : state) {
    auto m = models::ModelRegistry::instance().make_time(model);
    m->fit(s);
    benchmark::DoNotOptimize(m->predict(64, 8, 2));
  }
  state.counters["rows"] = static_cast<double>(s.size());
}

// Every iteration times a cold fit: the global-batch models' trend-search
// cache (metric_global_batch.h) is emptied first, outside the timing.
void BM_ScaleFitMetric(benchmark::State& state, const std::string& model) {
  const SampleSet& s = store(static_cast<size_t>(state.range(0)));
  for (auto _ : state) {
    state.PauseTiming();
    models::GlobalBatchModel::clear_trend_cache();
    state.ResumeTiming();
    auto m = models::ModelRegistry::instance().make_metric(model);
    m->fit(s);
    benchmark::DoNotOptimize(m->predict(64, 8, 10));
  }
  state.counters["rows"] = static_cast<double>(s.size());
}

// What `trainplan plan --samples S --target 0.9 --deadline 10m` computes
// after reading the file: the auto choice (5-fold CV of every candidate),
// the fit of the chosen models, the search, the nearest trials. Its CV fits
// run on every core (scoring/evaluate.cpp): "real" is the wall time.
void BM_ScalePlan(benchmark::State& state) {
  const SampleSet& s = store(static_cast<size_t>(state.range(0)));
  app::PlanQuery q;
  q.target = 0.9;
  q.deadline = 600;
  for (auto _ : state) {
    state.PauseTiming();
    models::GlobalBatchModel::clear_trend_cache();
    state.ResumeTiming();
    app::ModelSource src(s);
    benchmark::DoNotOptimize(app::make_plan(src, q).result.best.cost);
  }
  state.counters["rows"] = static_cast<double>(s.size());
}

// The model the default plan chooses on the 10^4-row store, fitted once.
std::shared_ptr<const models::FittedPerformanceModel> fitted_default() {
  static auto m = [] {
    app::ModelSource src(store(10000));
    const auto& c = src.choose("auto", "auto");
    return src.performance(c.time_model, c.metric_model);
  }();
  return m;
}

// The search alone over 10^6 configurations (batch, workers, epochs): 20
// batches x 50 workers x 1,000 epochs, exhaustive (each of the 1,000
// cells' fewest feasible epochs by binary search), on the fitted model.
void BM_PlanSearchMillionConfigurations(benchmark::State& state) {
  const auto m = fitted_default();
  plan::PlanProblem p;
  for (int i = 0; i < 20; ++i) p.space.batches.push_back(16 + 25 * i);
  p.space.max_workers = 50;
  p.space.max_epochs = 1000;
  p.space.workers_per_node = 4;
  p.target = 0.9;
  p.deadline_s = 1e6;
  const auto planner = plan::make_planner("coconfig", {.search = "exhaustive"});
  for (auto _ : state) benchmark::DoNotOptimize(planner->plan(*m, p).best.cost);
  state.counters["configurations"] = 20.0 * 50 * 1000;
}

// The same search over 2^20 (batch, workers) cells (1,024 x 1,024, epochs up
// to 1,000 each): the most that "auto" still searches exhaustively.
void BM_PlanSearchMillionCells(benchmark::State& state) {
  const auto m = fitted_default();
  plan::PlanProblem p;
  for (int i = 0; i < 1024; ++i) p.space.batches.push_back(16 + i);
  p.space.max_workers = 1024;
  p.space.max_epochs = 1000;
  p.space.workers_per_node = 4;
  p.target = 0.9;
  p.deadline_s = 1e7;
  const auto planner = plan::make_planner("coconfig", {.search = "exhaustive"});
  for (auto _ : state) benchmark::DoNotOptimize(planner->plan(*m, p).best.cost);
  state.counters["cells"] = 1024.0 * 1024;
}

void rows(benchmark::internal::Benchmark* b) {
  b->Arg(1000)->Arg(10000)->Arg(100000)->ArgName("rows")->Unit(benchmark::kMillisecond);
}

}  // namespace

BENCHMARK_CAPTURE(BM_ScaleFitTime, isotonic_mi, "isotonic-mi")->Apply(rows);
BENCHMARK_CAPTURE(BM_ScaleFitTime, per_batch_extrapolation, "per-batch-extrapolation")->Apply(rows);
BENCHMARK_CAPTURE(BM_ScaleFitTime, paleo, "paleo")->Apply(rows);
BENCHMARK_CAPTURE(BM_ScaleFitTime, paleo_fit, "paleo-fit")->Apply(rows);
BENCHMARK_CAPTURE(BM_ScaleFitTime, allreduce_physical, "allreduce-physical")->Apply(rows);
BENCHMARK_CAPTURE(BM_ScaleFitTime, allreduce_local, "allreduce-local")->Apply(rows);
BENCHMARK_CAPTURE(BM_ScaleFitMetric, isotonic_mi, "isotonic-mi")->Apply(rows);
BENCHMARK_CAPTURE(BM_ScaleFitMetric, isotonic_mi_unimodal, "isotonic-mi-unimodal")->Apply(rows);
BENCHMARK_CAPTURE(BM_ScaleFitMetric, optimus_curve, "optimus-curve")->Apply(rows);
BENCHMARK_CAPTURE(BM_ScaleFitMetric, optimus_curve_shared, "optimus-curve-shared")->Apply(rows);
BENCHMARK_CAPTURE(BM_ScaleFitMetric, global_batch, "global-batch")->Apply(rows);
BENCHMARK_CAPTURE(BM_ScaleFitMetric, global_batch_anchored, "global-batch-anchored")->Apply(rows);
BENCHMARK_CAPTURE(BM_ScaleFitMetric, global_batch_curve, "global-batch-curve")->Apply(rows);
BENCHMARK(BM_ScalePlan)->Apply(rows);
BENCHMARK(BM_PlanSearchMillionConfigurations)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_PlanSearchMillionCells)->Unit(benchmark::kMillisecond);
