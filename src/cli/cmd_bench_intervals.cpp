// trainplan bench intervals: the coverage of the conformal intervals and
// one-sided bounds that --confidence plans on, checked on held-out samples.
// For each Pollux trace: draw the paper's samples (--seed), choose the models
// as `plan` does (auto: lowest CV MRE), wrap both in 5-fold conformal
// intervals, then score fresh samples drawn with --holdout-seed.
#include <fmt/format.h>

#include <filesystem>
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
  return {{"points", c.n}, {"two_sided", c.two_sided}, {"above_lower", c.above_lower}, {"below_upper", c.below_upper}};
}

// Pools per-trace coverages weighted by their point counts.
void pool(eval::Coverage& total, const eval::Coverage& c) {
  double n = double(total.n + c.n);
  if (n == 0) return;
  auto mix = [&](double a, double b) { return (a * double(total.n) + b * double(c.n)) / n; };
  total.two_sided = mix(total.two_sided, c.two_sided);
  total.above_lower = mix(total.above_lower, c.above_lower);
  total.below_upper = mix(total.below_upper, c.below_upper);
  total.n += c.n;
}

void run_intervals(const IntervalsArgs& a) {
  namespace fs = std::filesystem;
  if (!(a.confidence > 0 && a.confidence < 1)) throw InputError("--confidence must be strictly between 0 and 1");
  const uint64_t holdout = a.holdout_seed ? a.holdout_seed : a.seed + 1000;
  if (holdout == a.seed) throw InputError("--holdout-seed must differ from --seed (the held-out samples must be new)");
  std::string root = fs::exists(fs::path(a.data) / "pollux-t4") ? (fs::path(a.data) / "pollux-t4").string() : a.data;
  auto traces = io::list_pollux_traces(root);
  if (traces.empty())
    throw InputError(a.data, 0, "", "no Pollux trace directories (with placements.csv) found here or under pollux-t4/");
  json doc = {{"confidence", a.confidence}, {"seed", a.seed}, {"holdout_seed", holdout}};
  eval::Coverage all_time, all_metric;
  std::vector<std::string> lines;
  int k = 0;
  for (const auto& dir : traces) {
    ++k;
    auto oracle = replay::ReplayOracle::from_dir(dir);
    SampleSet train = replay::draw_samples(oracle, replay::named_plan("paper", a.seed)).samples;
    SampleSet test = replay::draw_samples(oracle, replay::named_plan("paper", holdout)).samples;
    std::string mname = oracle.time_only() ? "" : a.metric_model;
    auto choice = plan::choose_models(a.time_model, mname.empty() ? "auto" : mname, train);
    std::cerr << fmt::format("[{}/{}] {}: time {}{}\n", k, traces.size(), oracle.name(), choice.time_model,
                             oracle.time_only() ? "" : ", metric " + choice.metric_model);
    models::ConformalParams cp;
    cp.seed = a.seed;
    auto tm = models::conformal_time_model(choice.time_model, cp);
    tm->fit(train);
    auto tc = eval::time_coverage(*tm, test, a.confidence);
    pool(all_time, tc);
    json jt = {{"time_model", choice.time_model}, {"time", coverage_json(tc)}};
    std::string line = fmt::format("  {:<12} time   {:>4} points  {:.3f}  {:.3f}  {:.3f}", oracle.name(), tc.n,
                                   tc.two_sided, tc.above_lower, tc.below_upper);
    if (!oracle.time_only()) {
      auto mm = models::conformal_metric_model(choice.metric_model, cp);
      mm->fit(train);
      auto mc = eval::metric_coverage(*mm, test, a.confidence);
      pool(all_metric, mc);
      jt["metric_model"] = choice.metric_model;
      jt["metric"] = coverage_json(mc);
      line += fmt::format("\n  {:<12} metric {:>4} points  {:.3f}  {:.3f}  {:.3f}", "", mc.n, mc.two_sided,
                          mc.above_lower, mc.below_upper);
    }
    doc["traces"][oracle.name()] = jt;
    lines.push_back(line);
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
  for (const auto& l : lines) std::cout << l << "\n";
  std::cout << fmt::format("  {:<12} time   {:>4} points  {:.3f}  {:.3f}  {:.3f}\n", "all", all_time.n,
                           all_time.two_sided, all_time.above_lower, all_time.below_upper);
  std::cout << fmt::format("  {:<12} metric {:>4} points  {:.3f}  {:.3f}  {:.3f}\n", "all", all_metric.n,
                           all_metric.two_sided, all_metric.above_lower, all_metric.below_upper);
  std::cout << fmt::format("nominal: {:g} for each column (the one-sided bounds hold on their own side)\n",
                           a.confidence);
}

void setup(CLI::App& root) {
  auto a = std::make_shared<IntervalsArgs>();
  auto* cmd = bench_command(root)->add_subcommand(
      "intervals",
      "Coverage of the conformal intervals and one-sided bounds on held-out samples: for each Pollux trace,\n"
      "fit on the paper plan's samples, score fresh samples from the same trace (docs/MODELS-METRIC.md).");
  cmd->add_option("--data", a->data, "../shared/data (or a directory of Pollux-format trace directories)")->required();
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
