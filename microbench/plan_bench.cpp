// Planner timings on large spaces. The model is a cheap analytic one defined
// here (not a fitted model), so the numbers measure the search itself:
// epoch time = N/(b r) (compute + all-reduce), metric rising in epochs and
// falling with global batch.
#include <benchmark/benchmark.h>

#include <cmath>

#include "plan/exhaustive.h"
#include "plan/tabu.h"

namespace {

using namespace trainplan;
using namespace trainplan::plan;

class AnalyticModel : public models::PerformanceModel {
 public:
  std::optional<double> epoch_time(int b, int r, int nodes) const override {
    double steps = 1.28e6 / (double(b) * r);
    return steps * (0.01 + 0.0004 * b + 0.002 * std::log2(double(r)) + (nodes > 1 ? 0.01 : 0.0));
  }
  std::optional<double> metric(int b, int r, double e) const override {
    double gb = double(b) * r;
    return 0.95 - 0.05 * std::log2(1 + gb / 65536.0) - 0.85 * std::exp(-e / (2.0 + gb / 4096.0));
  }
  MetricDirection direction() const override { return MetricDirection::kMax; }
  std::string name() const override { return "bench-analytic"; }
};

PlanProblem big_problem(int workers) {
  PlanProblem p;
  for (int i = 1; i <= 64; ++i) p.space.batches.push_back(8 * i);  // 64 batch values
  p.space.max_workers = workers;
  p.space.max_epochs = 1000;
  p.space.workers_per_node = 8;
  p.target = 0.8;
  p.deadline_s = 2e5;
  return p;
}

void BM_ExhaustivePlan(benchmark::State& st) {
  AnalyticModel m;
  auto p = big_problem(static_cast<int>(st.range(0)));
  for (auto _ : st) benchmark::DoNotOptimize(exhaustive_search(m, p));
  st.counters["cells"] = 64.0 * st.range(0);
}
BENCHMARK(BM_ExhaustivePlan)->Arg(8)->Arg(64)->Arg(1024)->Unit(benchmark::kMillisecond);

void BM_TabuPlan(benchmark::State& st) {
  AnalyticModel m;
  auto p = big_problem(1024);
  TabuParams tp;
  tp.iterations = static_cast<int>(st.range(0));
  for (auto _ : st) benchmark::DoNotOptimize(tabu_search(m, p, tp));
}
BENCHMARK(BM_TabuPlan)->Arg(50)->Arg(500)->Unit(benchmark::kMillisecond);

}  // namespace
