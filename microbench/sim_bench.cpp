// Simulator speed: the whole Philly trace (82k rigid jobs) under tiresias on
// a 2,000-GPU cluster, and the 8 Pollux workloads x all policies at 1.0x.
// Reports simulator events per second. Needs ../shared/data.
#include <benchmark/benchmark.h>

#include <filesystem>

#include "io/philly.h"
#include "sim/experiment.h"
#include "sim/workload.h"

using namespace trainplan;

namespace {

std::string data_dir() { return TRAINPLAN_SHARED_DATA; }

void BM_PhillyTiresias2000Gpus(benchmark::State& state) {
  std::string path = data_dir() + "/traces/philly.csv";
  if (!std::filesystem::exists(path)) {
    state.SkipWithError("needs ../shared/data/traces/philly.csv");
    return;
  }
  static auto rows = io::read_philly_csv(path);
  static auto jobs = sim::jobs_from_philly(path, rows, 1.0, 2000);
  sim::ExperimentOptions eo;
  eo.sim.nodes = 250;
  eo.sim.gpus_per_node = 8;
  eo.sim.interval = state.range(0);
  sim::Experiment ex({}, eo);
  long events = 0;
  for (auto _ : state) {
    auto r = ex.run("tiresias", jobs);
    events += r.events;
    benchmark::DoNotOptimize(r.jobs.data());
  }
  state.counters["jobs"] = static_cast<double>(jobs.size());
  state.counters["events_per_s"] = benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_PhillyTiresias2000Gpus)->Arg(0)->Arg(60)->ArgName("interval")->Unit(benchmark::kSecond)->Iterations(1);

void BM_PolluxAllPolicies1x(benchmark::State& state) {
  std::string root = data_dir();
  if (!std::filesystem::exists(root + "/pollux-t4")) {
    state.SkipWithError("needs ../shared/data/pollux-t4");
    return;
  }
  static sim::AppSet apps(root + "/pollux-t4");
  std::vector<std::vector<sim::JobSpec>> workloads;
  for (int w = 1; w <= 8; ++w)
    workloads.push_back(sim::jobs_from_workload(root + "/workloads/pollux-1.0/workload-" + std::to_string(w) + ".csv",
                                                apps, 1.0, 64));
  sim::ExperimentOptions eo;
  eo.oracle = state.range(0) != 0;
  eo.sim.placement = sim::PlacementMode::kSpread;
  eo.policy.tiresias_thresholds = {57600};
  sim::Experiment ex(apps.all(), eo);
  ex.scheduler_estimator();  // fit the models outside the timed loop
  long events = 0;
  for (auto _ : state) {
    for (const auto& jobs : workloads)
      for (const auto& p : sim::PolicyRegistry::instance().names()) {
        auto r = ex.run(p, jobs);
        events += r.events;
      }
  }
  state.SetLabel(ex.note().empty() ? "oracle" : ex.note());
  state.counters["events_per_s"] = benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_PolluxAllPolicies1x)->Arg(1)->Arg(0)->ArgName("oracle")->Unit(benchmark::kSecond)->Iterations(1);

}  // namespace
