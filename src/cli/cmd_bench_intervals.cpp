// trainplan bench intervals: the coverage of the conformal intervals and
// one-sided bounds that --confidence plans on, checked on held-out samples.
// For each Pollux trace: draw the paper's samples (--seed), choose the models
// as `plan` does (auto: lowest CV MRE), wrap both in 5-fold conformal
// intervals, then score fresh samples drawn with --holdout-seed.
#include <fmt/format.h>

#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "core/error.h"
#include "eval/coverage.h"
#include "io/pollux_trace.h"
#include "models/conformal.h"
#include "plan/model_choice.h"
#include "replay/replay_oracle.h"
#include "replay/sampler.h"

namespace trainplan::cli {
namespace {

using nlohmann::json;

struct IntervalsArgs {
  std::string data;
  std::string time_model = "auto", metric_model = "auto";
  double confidence = 0.9;
  uint64_t seed = 1;
  uint64_t holdout_seed = 0;  // 0: seed + 1000
  bool json_out = false;
};

json coverage_json(const eval::Coverage& c) {
  return {{"points", c.n},
          {"two_sided", c.rate(c.two_sided)},
          {"above_lower", c.rate(c.above_lower)},
          {"below_upper", c.rate(c.below_upper)}};
}

// One line of the text table.
std::string row(const std::string& trace, const char* part, const eval::Coverage& c) {
  return fmt::format("  {:<12} {:<6} {:>4} points  {:.3f}  {:.3f}  {:.3f}", trace, part, c.n, c.rate(c.two_sided),
                     c.rate(c.above_lower), c.rate(c.below_upper));
}

void run_intervals(const IntervalsArgs& a) {
  if (!(a.confidence > 0 && a.confidence < 1)) throw InputError("--confidence must be strictly between 0 and 1");
  const uint64_t holdout = a.holdout_seed ? a.holdout_seed : a.seed + 1000;
  if (holdout == a.seed) throw InputError("--holdout-seed must differ from --seed (the held-out samples must be new)");
  auto traces = io::find_pollux_traces(a.data);
  json doc = {{"confidence", a.confidence}, {"seed", a.seed}, {"holdout_seed", holdout}};
  eval::Coverage all_time, all_metric;
  std::vector<std::string> lines;
  models::ConformalParams cp;
  cp.seed = a.seed;
  int k = 0;
  for (const auto& dir : traces) {
    ++k;
    auto oracle = replay::ReplayOracle::from_dir(dir);
    SampleSet train = replay::draw_samples(oracle, replay::named_plan("paper", a.seed)).samples;
    SampleSet test = replay::draw_samples(oracle, replay::named_plan("paper", holdout)).samples;
    auto choice = plan::choose_models(a.time_model, a.metric_model, train);  // no metric model on time-only traces
    std::cerr << fmt::format("[{}/{}] {}: time {}{}\n", k, traces.size(), oracle.name(), choice.time_model,
                             oracle.time_only() ? "" : ", metric " + choice.metric_model);
    auto tm = models::conformal_time_model(choice.time_model, cp);
    tm->fit(train);
    auto tc = eval::time_coverage(*tm, test, a.confidence);
    all_time += tc;
    json jt = {{"time_model", choice.time_model}, {"time", coverage_json(tc)}};
    lines.push_back(row(oracle.name(), "time", tc));
    if (!oracle.time_only()) {
      auto mm = models::conformal_metric_model(choice.metric_model, cp);
      mm->fit(train);
      auto mc = eval::metric_coverage(*mm, test, a.confidence);
      all_metric += mc;
      jt["metric_model"] = choice.metric_model;
      jt["metric"] = coverage_json(mc);
      lines.push_back(row("", "metric", mc));
    }
    doc["traces"][oracle.name()] = jt;
  }
  doc["all"] = {{"time", coverage_json(all_time)}, {"metric", coverage_json(all_metric)}};
  if (a.json_out) {
    std::cout << doc.dump(2) << "\n";
    return;
  }
  std::cout << fmt::format(
      "interval coverage at {:g}: models fitted on the paper plan's samples (seed {}), scored on new samples "
      "(seed {}); time: one point per distinct configuration\n",
      a.confidence, a.seed, holdout);
  std::cout << "  trace        part   points   two-sided  above lower bound  below upper bound\n";
  lines.push_back(row("all", "time", all_time));
  lines.push_back(row("all", "metric", all_metric));
  for (const auto& l : lines) std::cout << l << "\n";
  std::cout << fmt::format("nominal: {:g} for each column (the one-sided bounds hold on their own side)\n",
                           a.confidence);
}

void setup(CLI::App& root) {
  auto a = std::make_shared<IntervalsArgs>();
  auto* cmd = bench_command(root)->add_subcommand(
      "intervals",
      "Coverage of the conformal intervals and one-sided bounds on held-out samples: for each Pollux trace,\n"
      "fit on the paper plan's samples, score fresh samples from the same trace (docs/MODELS-METRIC.md).");
  add_pollux_data_option(cmd, a->data);
  cmd->add_option("--time-model", a->time_model, "Epoch-time model, or auto (lowest CV MRE, as plan does)")
      ->capture_default_str();
  cmd->add_option("--metric-model", a->metric_model, "Metric model, or auto")->capture_default_str();
  cmd->add_option("--confidence", a->confidence, "Coverage of the intervals, in (0, 1)")->capture_default_str();
  cmd->add_option("--seed", a->seed, "Seed of the fitted samples and the folds")->capture_default_str();
  cmd->add_option("--holdout-seed", a->holdout_seed, "Seed of the held-out samples (default: --seed + 1000)");
  cmd->add_flag("--json", a->json_out, "Print JSON");
  cmd->callback([a] { run_intervals(*a); });
}

CommandRegistrar reg(96, setup);

}  // namespace
}  // namespace trainplan::cli
