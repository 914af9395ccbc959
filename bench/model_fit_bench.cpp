// Fit time of the leaderboard's models on one trace's paper-plan samples
// (`trainplan evaluate` reports the same as fit_ms, once, on a shared machine;
// this is the timing to quote). Time models fit the distinct (batch, workers,
// nodes) configurations, metric models the samples with a metric, as
// evaluate does. Needs ../shared/data.
#include <benchmark/benchmark.h>

#include <filesystem>
#include <map>

#include "eval/evaluate.h"
#include "models/registry.h"
#include "replay/replay_oracle.h"
#include "replay/sampler.h"

using namespace trainplan;

namespace {

// The paper plan's samples (seed 1) from pollux-t4/<trace>, or null without the data.
const SampleSet* paper_samples(const std::string& trace) {
  static std::map<std::string, SampleSet> cache;
  if (auto it = cache.find(trace); it != cache.end()) return &it->second;
  const std::string dir = std::string(TRAINPLAN_SHARED_DATA) + "/pollux-t4/" + trace;
  if (!std::filesystem::exists(dir)) return nullptr;
  auto oracle = replay::ReplayOracle::from_dir(dir);
  return &(cache[trace] = replay::draw_samples(oracle, replay::named_plan("paper", 1)).samples);
}

void BM_FitTime(benchmark::State& state, const std::string& trace, const std::string& model) {
  const SampleSet* s = paper_samples(trace);
  if (!s) return state.SkipWithError("needs ../shared/data/pollux-t4");
  SampleSet configs = eval::distinct_time_configs(*s);
  const auto& entry = models::ModelRegistry::instance().get(model);
  for (auto _ : state) {
    auto m = entry.make_time();
    m->fit(configs);
    benchmark::DoNotOptimize(m->predict(64, 8, 2));
  }
  state.counters["samples"] = static_cast<double>(configs.size());
}

void BM_FitMetric(benchmark::State& state, const std::string& trace, const std::string& model) {
  const SampleSet* s = paper_samples(trace);
  if (!s) return state.SkipWithError("needs ../shared/data/pollux-t4");
  SampleSet with_metric = *s;
  with_metric.samples = s->with_metric();
  const auto& entry = models::ModelRegistry::instance().get(model);
  for (auto _ : state) {
    auto m = entry.make_metric();
    m->fit(with_metric);
    benchmark::DoNotOptimize(m->predict(64, 8, 10));
  }
  state.counters["samples"] = static_cast<double>(with_metric.size());
}

}  // namespace

BENCHMARK_CAPTURE(BM_FitTime, cifar10_isotonic_mi, "cifar10", "isotonic-mi")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_FitTime, cifar10_allreduce_physical, "cifar10", "allreduce-physical")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_FitTime, cifar10_allreduce_local, "cifar10", "allreduce-local")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_FitTime, cifar10_per_batch_extrapolation, "cifar10", "per-batch-extrapolation")
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_FitMetric, cifar10_isotonic_mi, "cifar10", "isotonic-mi")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_FitMetric, cifar10_optimus_curve, "cifar10", "optimus-curve")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_FitMetric, cifar10_global_batch, "cifar10", "global-batch")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_FitMetric, imagenet_global_batch, "imagenet", "global-batch")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_FitMetric, cifar10_global_batch_curve, "cifar10", "global-batch-curve")
    ->Unit(benchmark::kMillisecond);
