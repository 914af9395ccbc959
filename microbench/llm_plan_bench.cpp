// The LLM planner's exhaustive search (plan/llm_planner.h, `trainplan llm
// plan`): every configuration of GPT-3 175B on up to 1024 H100s, and of
// Llama-3 70B on up to 512, each predicted for memory and (when it fits)
// iteration time; and GPT-3 1.3B on up to 1024, where nearly every
// configuration fits and so is timed. The bar: at least 10^5 configurations
// in under 100 ms.
#include <benchmark/benchmark.h>

#include "plan/llm_planner.h"
#include "structure/gpu_catalog.h"

using namespace trainplan;

namespace {

void BM_LlmPlanExhaustive(benchmark::State& state) {
  // The last: Llama 3.1 405B with the uneven end-stage splits searched too.
  const char* names[] = {"gpt3-175b", "llama3-70b", "gpt3-1.3b", "llama3.1-405b"};
  auto s = *structure::find_transformer(names[state.range(0)]);
  models::LlmTimeModel tm(*structure::find_builtin_hardware("h100"));
  models::LlmMemoryModel mm;
  plan::LlmPlanOptions o;
  o.tokens = 300e9;
  const int batches[] = {1536, 1024, 3072, 1536};
  o.global_batch = batches[state.range(0)], o.max_gpus = int(state.range(1));
  o.uneven_end_stages = state.range(0) == 3;
  plan::LlmPlanResult r;
  for (auto _ : state) {
    r = plan::plan_llm(s, tm, mm, o);
    benchmark::DoNotOptimize(r.top.data());
  }
  state.SetLabel(s.name);
  state.counters["configurations"] = double(r.enumerated);
  state.counters["timed"] = double(r.fit);
  state.counters["configs_per_s"] = benchmark::Counter(double(r.enumerated), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_LlmPlanExhaustive)->Args({0, 1024})->Args({1, 512})->Args({2, 1024})->Args({3, 1024})->ArgNames({"model", "max_gpus"})->Unit(benchmark::kMillisecond);

}  // namespace
