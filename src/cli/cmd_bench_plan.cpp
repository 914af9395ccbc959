// trainplan bench coconfig: the co-configuration paper's experiment on real
// traces. For each Pollux model and scenario, every method plans on a model
// fitted to the paper's samples, and the oracle (the trace itself) judges the
// choice against the true optimum. docs/PLANNING.md gives the rules.
#include <filesystem>
#include <iostream>

#include "cli/command.h"
#include "cli/shared_options.h"
#include "core/error.h"
#include "experiments/plan_benchmark.h"
#include "experiments/plan_benchmark_seeds.h"
#include "io/hardware_file.h"
#include "io/json_text.h"
#include "io/pollux_trace.h"

namespace trainplan::cli {
namespace {

struct BenchArgs {
  std::string data;
  bool json_out = false;
  experiments::PlanBenchmarkOptions o;
  bool confidence_given = false;
  std::string seeds;          // empty: one run at o.seed
  std::string sample_from, curves_from, sample_gpu, gpu;  // planning on a GPU never profiled
  bool as_measured = false;
  // The --no-... flags, turned into the options' switches when the command runs.
  bool no_measured_bounds = false, no_misfit_shift = false, no_curves = false;
  int target_trials = 0;
  double regret_limit = 0.03;  // with seeds: the median regret the summary counts seeds against
};

void run_bench(const BenchArgs& a) {
  // 0 means "plan on the point predictions" in the options; given on the
  // command line it is out of range like any other value outside (0, 1).
  if (a.confidence_given && !(a.o.confidence > 0 && a.o.confidence < 1))
    throw InputError("--confidence must be strictly between 0 and 1");
  experiments::PlanBenchmarkOptions o = a.o;
  if (!a.gpu.empty()) {
    experiments::CrossGpuOptions x;
    x.judged_hw = io::resolve_hardware(a.gpu, "--gpu");
    x.curves_from = a.curves_from, x.sample_from = a.sample_from, x.as_measured = a.as_measured;
    x.target_trials = a.target_trials;
    if (a.target_trials > 0 && (a.sample_from.empty() || a.as_measured))
      throw InputError("", 0, "--target-trials", "corrects a transfer: it needs --sample-from without --as-measured");
    if (!a.sample_from.empty()) {
      if (a.sample_gpu.empty()) throw InputError("", 0, "--sample-gpu", "--sample-from needs the GPU its traces were measured on");
      x.sample_hw = io::resolve_hardware(a.sample_gpu, "--sample-gpu");
    } else if (!a.sample_gpu.empty() || a.as_measured) {
      throw InputError("", 0, "--sample-from", "--sample-gpu and --as-measured go with --sample-from");
    }
    for (const auto& [folder, option] : {std::pair{a.curves_from, "--curves-from"}, std::pair{a.sample_from, "--sample-from"}})
      if (!folder.empty() && !std::filesystem::is_directory(folder))
        throw InputError(folder, 0, option, "is not a folder of traces");
    o.cross_gpu = x;
  } else if (!a.sample_from.empty() || !a.curves_from.empty() || !a.sample_gpu.empty() || a.as_measured ||
             a.target_trials > 0) {
    throw InputError("", 0, "--gpu",
                     "--sample-from, --curves-from, --sample-gpu, --as-measured and --target-trials need --gpu (what "
                     "--data's traces were measured on)");
  }
  auto traces = io::find_pollux_traces(a.data);
  auto say = [](const std::string& line) { std::cerr << line << "\n"; };
  if (!a.seeds.empty()) {
    if (!(a.regret_limit >= 0)) throw InputError("--regret-limit must be >= 0");
    auto doc = experiments::run_plan_benchmark_seeds(traces, o, experiments::parse_seed_list(a.seeds), say);
    if (a.json_out) std::cout << io::json_text(doc) << "\n";
    else std::cout << experiments::format_plan_benchmark_seeds(doc, a.regret_limit);
    return;
  }
  auto doc = experiments::run_plan_benchmark(traces, o, say);
  if (a.json_out) std::cout << io::json_text(doc) << "\n";
  else std::cout << experiments::format_plan_benchmark(doc);
}

void setup(CLI::App& root) {
  auto a = std::make_shared<BenchArgs>();
  auto* cmd = bench_command(root)->add_subcommand(
      "coconfig",
      "The co-configuration paper's experiment on the six Pollux traces: each method plans on models fitted to\n"
      "the paper's samples; the trace itself judges the choice (true cost, constraints) against the true optimum.");
  add_pollux_data_option(cmd, a->data);
  cmd->add_option("--models", a->o.models,
                  "Fitted models, one column each: NAME, TIME+METRIC, auto (lowest CV MRE per part) or oracle "
                  "(default: one per registered model, the other part of a part-only model auto: T+auto, auto+M; then auto)")
      ->delimiter(',');
  cmd->add_option("--scenarios", a->o.scenarios, "Scenarios per trace, from easy to tight")->capture_default_str();
  cmd->add_option("--max-workers", a->o.max_workers, "Workers 1..R in the candidate space (the paper's plan samples 1..8)")
      ->capture_default_str();
  cmd->add_option("--plan", a->o.sampling, "Sampling plan: paper, small, wide")->capture_default_str();
  cmd->add_option("--tabu-seeds", a->o.tabu_seeds, "Tabu runs per scenario for the tabu/exhaustive agreement")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000, "a run count from 1 to 1000"));
  auto* seed = cmd->add_option("--seed", a->o.seed, "Seed for sampling, tabu, bo and manual")->capture_default_str()->check(seed_number());
  cmd->add_option("--seeds", a->seeds,
                  "Run once per seed (e.g. 1-8 or 1,3,5) and report each method's median regret and true-constraint "
                  "misses on every seed, then every plan of the coconfig methods that misses (--json: every run's "
                  "document and the summary across seeds)")
      ->excludes(seed);
  // An option that qualifies another is refused without it, as `plan` refuses
  // its own, rather than accepted and ignored.
  auto* seeds_option = cmd->get_option("--seeds");
  cmd->add_option("--regret-limit", a->regret_limit,
                  "With --seeds: the median regret (a fraction) that the summary counts the seeds against")
      ->capture_default_str()
      ->needs(seeds_option);
  auto* conf = cmd->add_option("--confidence", a->o.confidence,
                  "Every method (coconfig and the baselines alike, so they differ only in search) plans on the "
                  "pessimistic side of the models' prediction intervals at this coverage (0<P<1): upper epoch time, "
                  "metric bound on the wrong side of the target. Implies --conformal. The judge is unchanged (the "
                  "trace; regret against the true optimum). The oracle model is planned on as is");
  cmd->add_option("--bounds", a->o.bounds,
                  "How --confidence reads the intervals: two-sided or one-sided (as in `trainplan plan --bounds`)")
      ->check(CLI::IsMember({"two-sided", "one-sided"}))
      ->capture_default_str()
      ->needs(conf);
  cmd->add_flag("--conformal", a->o.conformal,
                "Wrap both chosen models in 5-fold conformal prediction intervals (point predictions unchanged)");
  auto* early_stop = cmd->add_flag("--early-stop", a->o.early_stop,
                "Judge every plan as a run that stops when the true metric meets the target (its epochs a "
                "budget), and add the method coconfig-early-stop (budget from the planned side, cost from the "
                "point predictions; `plan --early-stop`)");
  cmd->add_option("--early-stop-budget", a->o.early_stop_budget,
                  "Budget rule of coconfig-early-stop: deadline or target (as in `trainplan plan --early-stop-budget`)")
      ->check(CLI::IsMember({"target", "deadline"}))
      ->capture_default_str()
      ->needs(early_stop);
  cmd->add_flag("--no-measured-bounds", a->no_measured_bounds,
                "Plan on the models alone, without holding them to the sampled trials of each configuration (the "
                "point predictions, or with --confidence the pessimistic side)");
  cmd->add_flag("--no-misfit-shift", a->no_misfit_shift,
                "With measured bounds, do not shift the pessimistic side at a measured configuration by the point "
                "model's optimistic misfit at its later trials (uncertainty/measured_bounds.h)");
  cmd->add_flag("--no-curves", a->no_curves,
                "Record only each trial's final metric, as the paper's samples do. By default each configuration's learning curve is also recorded up to its "
                "longest trial (the best metric after every epoch, as `trainplan profile` reads a trial's epoch "
                "lines); models are fitted on the trials alone either way, and with --confidence the planned side "
                "is also held to the curve points");
  cmd->add_flag("--pin-runs", a->o.pin_runs,
                "With intervals, pin the metric model to each sampled run's own trials (uncertainty/metric_run_pinned.h)");
  cmd->add_option("--gpu", a->gpu,
                  "What --data's traces were measured on (a catalog name or a hardware file); its node places their runs");
  cmd->add_option("--curves-from", a->curves_from,
                  "With --gpu: a trace of --data without learning curves takes those of the trace of the same name here "
                  "(the metric after an epoch at a global batch is the training's, not the GPU's)");
  cmd->add_option("--sample-from", a->sample_from,
                  "With --gpu, planning on a GPU never profiled: draw the samples from the traces of the same names "
                  "here (measured on --sample-gpu), move them to --gpu as `transfer --samples` does (no step measured "
                  "there), and judge the plans on --data's traces");
  cmd->add_option("--sample-gpu", a->sample_gpu, "With --sample-from: the GPU its traces were measured on");
  cmd->add_option("--target-trials", a->target_trials,
                  "With --sample-from: this many of the samples' configurations, drawn by the seed, are timed on "
                  "--data's traces and correct the transfer (as `transfer --trials` does)")
      ->check(non_negative_number());
  cmd->add_flag("--as-measured", a->as_measured,
                "With --sample-from: plan on the samples as if their times held on --gpu (no transfer), for comparison");
  cmd->add_flag("--json", a->json_out, "Print every scenario, choice and judgement as JSON");
  cmd->callback([a, conf] {
    a->confidence_given = conf->count() > 0;
    a->o.measured_bounds = a->o.measured_bounds && !a->no_measured_bounds;
    a->o.misfit_shift = a->o.misfit_shift && !a->no_misfit_shift;
    a->o.curves = a->o.curves && !a->no_curves;
    run_bench(*a);
  });
}

CommandRegistrar reg(90, setup);

}  // namespace
}  // namespace trainplan::cli
