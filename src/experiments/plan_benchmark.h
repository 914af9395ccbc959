// The co-configuration paper's experiment on replayed traces (`trainplan bench
// coconfig`): for each trace and (target, deadline) scenario, every method
// plans on models fitted to the sampled trials, and the trace itself judges the
// choice (true cost, constraints) against the true optimum. docs/PLANNING.md
// gives the rules and the document's fields.
#pragma once
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "structure/gpu_catalog.h"

namespace trainplan::experiments {

// Planning on a GPU never profiled (`bench coconfig --sample-from`). The
// judged traces were measured on `judged_hw` (whose node size places their
// runs). With `sample_from`, each one's samples are drawn from the trace of
// the same name there, measured on `sample_hw`, and moved to `judged_hw` by
// split-transfer fitted on those samples alone (no step measured on the
// judged GPU), or, with `as_measured`, planned on as if their times held
// there; `target_trials` of the samples' configurations, drawn by the seed
// and timed on the judged trace, correct the transfer. With `curves_from`, a judged trace without learning curves takes
// those of the trace of the same name there: how far an epoch at a global
// batch takes the training is not the GPU's.
struct CrossGpuOptions {
  std::string sample_from, curves_from;
  structure::HardwareProfile sample_hw, judged_hw;
  bool as_measured = false;
  int target_trials = 0;
};

struct PlanBenchmarkOptions {
  uint64_t seed = 1;                // sampling plan, tabu, bo and manual
  std::vector<std::string> models;  // NAME, TIME+METRIC, auto or oracle; empty: plan_benchmark_default_models()
  int scenarios = 3;                // per trace, from easy to tight (experiments::derive_scenarios)
  int max_workers = 8;              // workers 1..R in the candidate space
  std::string sampling = "paper";   // replay::named_plan
  int tabu_seeds = 5;               // tabu runs per scenario, each compared with exhaustive search
  double confidence = 0;            // in (0, 1): every method plans on the pessimistic side at this coverage
  std::string bounds = "two-sided";  // how `confidence` reads the intervals: two-sided or one-sided
  bool conformal = false;            // wrap the models in conformal intervals (implied by confidence > 0)
  bool early_stop = false;           // judge runs that stop at the target; add the method coconfig-early-stop
  std::string early_stop_budget = "deadline";  // coconfig-early-stop's budget rule: deadline or target
  bool measured_bounds = true;  // hold the planned side (point or pessimistic) to the sampled trials (uncertainty/measured_bounds.h)
  bool misfit_shift = true;     // with measured_bounds: shift by the point model's misfit at later trials
  bool pin_runs = false;        // with conformal: pin the metric model to each sampled run (ConformalParams::pin_runs)
  // Record each configuration's learning curve up to its longest trial (the
  // best metric after every epoch, replay::SamplingPlan::record_curves), as
  // `trainplan profile` does. Fits use the trials alone; with measured_bounds
  // the planned side is also held to the curve points. false: the paper's
  // samples, each trial's final metric only.
  bool curves = true;
  // Judged traces of another GPU; nullopt: the traces as they are, sampled themselves.
  std::optional<CrossGpuOptions> cross_gpu;
};

// The methods every model is planned with, in report order (coconfig-early-stop
// is appended with early_stop).
const std::vector<std::string>& plan_benchmark_methods();

// One spec per registered model, then "auto": a model with both parts by
// name, a time-only model T as "T+auto" and a metric-only model M as
// "auto+M" (the other part chosen by CV, as `plan` does).
std::vector<std::string> plan_benchmark_default_models();

// Runs the benchmark on the Pollux trace directories `trace_dirs`; a time-only
// trace is skipped. `progress`, when set, gets one line per trace and per fit.
// Returns the JSON document that `bench coconfig --json` prints. Throws
// InputError on bad options and on a model name the registry does not know.
nlohmann::json run_plan_benchmark(const std::vector<std::string>& trace_dirs, const PlanBenchmarkOptions& o,
                                  const std::function<void(const std::string&)>& progress = {});

// A regret (a fraction) from the document as a signed percentage, "+4.5%";
// null as a dash.
std::string format_regret(const nlohmann::json& v);

// The human-readable report of a document from run_plan_benchmark: per model,
// each method's median regret per trace and its counts; per scenario; the
// models' MRE; tabu against exhaustive.
std::string format_plan_benchmark(const nlohmann::json& doc);

}  // namespace trainplan::experiments
