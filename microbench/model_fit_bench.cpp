// Fit time of the leaderboard's models on one trace's paper-plan samples
// (`trainplan evaluate` reports the same as fit_ms, once, on a shared machine;
// this is the timing to quote). Time models fit the distinct (batch, workers,
// nodes) configurations, metric models the samples with a metric, as
// evaluate does. Needs ../shared/data.
#include <benchmark/benchmark.h>

#include <filesystem>
#include <map>

#include "scoring/evaluate.h"
#include "uncertainty/conformal.h"
#include "models/registry.h"
#include "replay/replay_oracle.h"
#include "replay/sampler.h"

using namespace trainplan;
using namespace trainplan::scoring;
using namespace trainplan::uncertainty;

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

// Fits a fresh model from `make` on `data` per iteration; `third` is the
// nodes (time) or epochs (metric) of the prediction that keeps the fit alive.
template <class Make>
void time_fits(benchmark::State& state, const SampleSet& data, const Make& make, double third) {
  for (auto _ : state) {
    auto m = make();
    m->fit(data);
    benchmark::DoNotOptimize(m->predict(64, 8, third));
  }
  state.counters["samples"] = static_cast<double>(data.size());
}

void BM_FitTime(benchmark::State& state, const std::string& trace, const std::string& model) {
  const SampleSet* s = paper_samples(trace);
  if (!s) return state.SkipWithError("needs ../shared/data/pollux-t4");
  time_fits(state, scoring::distinct_time_configs(*s), [&] { return models::ModelRegistry::instance().make_time(model); }, 2);
}

void BM_FitMetric(benchmark::State& state, const std::string& trace, const std::string& model) {
  const SampleSet* s = paper_samples(trace);
  if (!s) return state.SkipWithError("needs ../shared/data/pollux-t4");
  SampleSet with_metric = *s;
  with_metric.samples = s->with_metric();
  time_fits(state, with_metric, [&] { return models::ModelRegistry::instance().make_metric(model); }, 10);
}

// The 5-fold conformal wrapper of the metric model (what plan --confidence
// fits), with the within-run rule (run_folds 3, the default) or without (0).
void BM_FitConformalMetric(benchmark::State& state, const std::string& trace, const std::string& model) {
  const SampleSet* s = paper_samples(trace);
  if (!s) return state.SkipWithError("needs ../shared/data/pollux-t4");
  uncertainty::ConformalParams p;
  p.run_folds = static_cast<int>(state.range(0));
  time_fits(state, *s, [&] { return uncertainty::conformal_metric_model(model, p); }, 10);
}

}  // namespace

BENCHMARK_CAPTURE(BM_FitConformalMetric, cifar10_global_batch_anchored, "cifar10", "global-batch-anchored")
    ->Arg(0)->Arg(3)->ArgName("run_folds")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_FitConformalMetric, deepspeech2_global_batch_anchored, "deepspeech2", "global-batch-anchored")
    ->Arg(0)->Arg(3)->ArgName("run_folds")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_FitTime, cifar10_isotonic_mi, "cifar10", "isotonic-mi")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_FitTime, cifar10_allreduce_physical, "cifar10", "allreduce-physical")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_FitTime, cifar10_allreduce_local, "cifar10", "allreduce-local")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_FitTime, cifar10_per_batch_extrapolation, "cifar10", "per-batch-extrapolation")
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_FitMetric, cifar10_isotonic_mi, "cifar10", "isotonic-mi")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_FitMetric, cifar10_optimus_curve, "cifar10", "optimus-curve")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_FitMetric, cifar10_global_batch, "cifar10", "global-batch")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_FitMetric, imagenet_global_batch, "imagenet", "global-batch")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_FitMetric, cifar10_global_batch_anchored, "cifar10", "global-batch-anchored")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_FitMetric, imagenet_global_batch_anchored, "imagenet", "global-batch-anchored")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_FitMetric, deepspeech2_global_batch_anchored, "deepspeech2", "global-batch-anchored")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_FitMetric, cifar10_global_batch_curve, "cifar10", "global-batch-curve")
    ->Unit(benchmark::kMillisecond);
