// trainplan sample: draw a sampling plan from a replay workload (a public
// trace), or a synthetic store of any size (replay/synthetic_store.h).
#include <fmt/format.h>

#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include "cli/command.h"
#include "cli/shared_options.h"
#include "core/error.h"
#include "core/sample.h"
#include "io/output_path.h"
#include "io/sample_csv.h"
#include "replay/sampler.h"
#include "replay/synthetic_store.h"

namespace trainplan::cli {
namespace {

struct SampleArgs {
  std::string workload;
  std::string plan = "paper";
  long dataset_size = 0;
  uint64_t seed = 1;
  std::string out;
  std::string metric_direction;
  std::string metric_align = "data-epochs";
  std::string hardware = "T4";
  bool curves = false;
  long long synthetic_rows = 0;
  std::string synthetic_form = "curve";
};

void write_out(const SampleArgs& a, const SampleSet& s) {
  if (a.out.empty() || a.out == "-") std::cout << io::format_samples_csv(s);
  else io::write_samples_csv(a.out, s);
}

void run_synthetic(const SampleArgs& a) {
  replay::SyntheticStoreParams p;
  p.rows = static_cast<size_t>(a.synthetic_rows);
  p.seed = a.seed;
  if (a.dataset_size > 0) p.dataset_size = a.dataset_size;
  p.form = a.synthetic_form == "trials" ? replay::SyntheticStoreParams::Form::kTrials
                                        : replay::SyntheticStoreParams::Form::kCurve;
  const SampleSet s = replay::synthetic_store(p);
  write_out(a, s);
  std::cerr << fmt::format("drew {} trial rows and {} curve rows of a synthetic store (seed {}){}\n", s.size(),
                           s.curve.size(), a.seed, a.out.empty() || a.out == "-" ? "" : " -> " + a.out);
}

void run_sample(const SampleArgs& a, const CLI::App& cmd) {
  if (a.synthetic_rows > 0)
    for (const char* ignored : {"--plan", "--metric", "--curves", "--metric-align", "--hardware"})
      if (cmd.get_option(ignored)->count() > 0)
        throw InputError("", 0, ignored, "goes with --workload: --synthetic-rows draws its own closed form");
  if (!a.workload.empty() && cmd.get_option("--synthetic-form")->count() > 0)
    throw InputError("", 0, "--synthetic-form", "goes with --synthetic-rows, not --workload");
  if (!a.workload.empty()) io::check_output_path(a.out, "--out", {{a.workload, "--workload"}});
  else io::check_output_path(a.out, "--out");
  // Given, it is used: 0 would read as "not given" and the trace's own size taken silently.
  if (cmd.get_option("--dataset-size")->count() > 0 && a.dataset_size < 1)
    throw InputError("", 0, "--dataset-size", "must be >= 1 (not given: from the trace)");
  if (a.synthetic_rows > 0 && !a.workload.empty())
    throw InputError("", 0, "--synthetic-rows", "makes samples from a closed form, not from --workload: give one");
  if (a.synthetic_rows > 0) return run_synthetic(a);
  if (a.workload.empty()) throw InputError("sample: --workload (a trace directory) or --synthetic-rows is required");
  replay::OracleOptions opts;
  if (a.dataset_size > 0) opts.dataset_size = a.dataset_size;
  if (!a.metric_direction.empty()) opts.direction = parse_direction(a.metric_direction);
  if (a.metric_align == "progress") opts.metric_alignment = replay::MetricAlignment::kProgress;
  auto oracle = replay::ReplayOracle::from_dir(a.workload, opts);
  auto plan = replay::named_plan(a.plan, a.seed);
  plan.record_curves = a.curves;
  auto res = replay::draw_samples(oracle, plan);
  // What the file holds must read back: no sample file takes an epoch past kMostEpochSeconds.
  for (const auto* v : {&res.samples.samples, &res.samples.curve})
    for (const auto& x : *v)
      if (!(x.epoch_time_s <= kMostEpochSeconds))
        throw InputError("", 0, a.dataset_size > 0 ? "--dataset-size" : "--workload",
                         fmt::format("makes epochs of {:g} s (batch {}, {} workers), past the {:g} s any sample file "
                                     "takes",
                                     x.epoch_time_s, x.batch, x.workers, kMostEpochSeconds));
  for (auto* v : {&res.samples.samples, &res.samples.curve})
    for (auto& x : *v) x.hardware = a.hardware;
  write_out(a, res.samples);
  std::cerr << fmt::format("sampled {} trials from {} (plan '{}', seed {}, dataset size {}, metric {})", res.samples.size(),
                           oracle.name(), a.plan, a.seed, oracle.dataset_size(), to_string(oracle.direction()));
  if (!res.samples.curve.empty())
    std::cerr << fmt::format(", and {} points of their learning curves", res.samples.curve.size());
  if (res.skipped_time) std::cerr << fmt::format("; {} (batch, workers) outside the measured time region skipped", res.skipped_time);
  if (res.metric_missing) std::cerr << fmt::format("; {} samples have no metric (global batch outside the measured curves)", res.metric_missing);
  if (oracle.time_only()) std::cerr << "; time-only workload: metric column left empty";
  std::cerr << (a.out.empty() || a.out == "-" ? "\n" : fmt::format(" -> {}\n", a.out));
}

void setup(CLI::App& root) {
  auto args = std::make_shared<SampleArgs>();
  auto* cmd = root.add_subcommand("sample", "Draw profiling samples from a replay workload (a Pollux-format trace directory), "
                                  "or a synthetic store of any size");
  cmd->add_option("--workload", args->workload,
                  "Trace directory with placements.csv, scalability.csv, validation-<B>.csv; this or --synthetic-rows "
                  "is required");
  cmd->add_option("--synthetic-rows", args->synthetic_rows,
                  "Instead of a workload: this many rows of a synthetic learning-curve store, many trials on a grid "
                  "of (batch, workers) from a closed-form truth plus noise (for scale tests; at most 10^7)")
      ->check(CLI::Range(1LL, 10'000'000LL, "a row count from 1 to 10^7"));
  cmd->add_option("--synthetic-form", args->synthetic_form,
                  "With --synthetic-rows, how a trial of e epochs is written: curve (one trial row, its earlier "
                  "epochs as source=curve rows) or trials (every epoch a trial row)")
      ->check(CLI::IsMember({"curve", "trials"}))
      ->capture_default_str();
  cmd->add_option("--plan", args->plan, "Sampling plan: paper (240 trials), small (40), wide (576)")
      ->capture_default_str();
  cmd->add_option("--dataset-size", args->dataset_size, "Training examples per epoch (default: known or derived from the trace)");
  cmd->add_option("--metric", args->metric_direction, "Metric direction max|min (default: known for the application, else max)");
  cmd->add_option("--seed", args->seed, "Random seed")->capture_default_str()->check(seed_number());
  cmd->add_option("--hardware", args->hardware,
                  "What the trace was measured on, written in each sample's hardware column (T4: the Pollux traces'; "
                  "for another trace name its GPU, e.g. a100-40gb for the Sia artifact's)")
      ->capture_default_str();
  cmd->add_option("--metric-align", args->metric_align,
                  "How the metric between two measured global batches is read: data-epochs (blend the two curves at "
                  "equal data epochs) or progress (blend them row by row, at equal statistical progress, as Pollux's "
                  "simulator does)")
      ->check(CLI::IsMember({"data-epochs", "progress"}))
      ->capture_default_str();
  cmd->add_flag("--curves", args->curves,
                "Also record each configuration's learning curve up to its longest trial: the best metric after "
                "each earlier epoch count that is not a trial's own length, as rows with source=curve (what "
                "`trainplan profile` reads from a trial's epoch lines at no extra cost)");
  cmd->add_option("-o,--out", args->out, "Output CSV (default: stdout)");
  cmd->callback([args, cmd] { run_sample(*args, *cmd); });
}

CommandRegistrar reg(10, setup);

}  // namespace
}  // namespace trainplan::cli
