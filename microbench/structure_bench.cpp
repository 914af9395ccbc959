// Timings of the structure models (docs/lab/MODELS-TIME.md): fitting Justus's
// per-layer MLP and the boosted trees on the shipped layer timings, PALEO's
// step of a large graph, and the whole leave-one-network-out evaluation
// (`evaluate --cross-model`, which needs ../shared/data).
#include <benchmark/benchmark.h>

#include <filesystem>

#include "scoring/cross_model.h"
#include "io/layer_timing_csv.h"
#include "models/layer_time_model.h"
#include "structure/network_zoo.h"
#include "models/step_time_paleo.h"

using namespace trainplan;
using namespace trainplan::scoring;
using namespace trainplan::structure;

namespace {

const std::vector<io::LayerTiming>& shipped_timings() {
  static const auto t = io::read_layer_timings(std::string(TRAINPLAN_SOURCE_DIR) + "/examples/layer-timings-cpu.csv");
  return t;
}

void BM_FitLayerTimeModel(benchmark::State& state) {
  const auto learner = state.range(0) ? models::LayerLearner::kBoostedTrees : models::LayerLearner::kMlp;
  const auto& t = shipped_timings();
  const auto g = structure::lenet5();
  for (auto _ : state) {
    models::LayerTimeModel m(learner);
    m.fit(t);
    benchmark::DoNotOptimize(m.step_time(g, 64));
  }
  state.SetLabel(models::to_string(learner));
  state.counters["layers"] = static_cast<double>(t.size());
}
BENCHMARK(BM_FitLayerTimeModel)->Arg(0)->Arg(1)->ArgName("trees")->Unit(benchmark::kMillisecond);

void BM_PaleoStepYolov3(benchmark::State& state) {
  const auto g = structure::yolov3();
  const models::PaleoHardware hw;
  for (auto _ : state) benchmark::DoNotOptimize(models::paleo_step_terms(g, 16, 8, 2, hw).total());
  state.counters["layers"] = static_cast<double>(g.layers.size());
}
BENCHMARK(BM_PaleoStepYolov3)->Unit(benchmark::kMicrosecond);

void BM_CrossModelEvaluation(benchmark::State& state) {
  if (!std::filesystem::exists(std::string(TRAINPLAN_SHARED_DATA) + "/pollux-t4"))
    return state.SkipWithError("needs ../shared/data/pollux-t4");
  for (auto _ : state) benchmark::DoNotOptimize(scoring::evaluate_cross_model(TRAINPLAN_SHARED_DATA).traces.size());
}
BENCHMARK(BM_CrossModelEvaluation)->Unit(benchmark::kSecond)->Iterations(1);

}  // namespace
