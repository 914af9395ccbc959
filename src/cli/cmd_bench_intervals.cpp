// trainplan bench intervals: the coverage of the conformal intervals and
// one-sided bounds that --confidence plans on, checked on held-out samples.
// For each Pollux trace: draw the paper's samples (--seed), choose the models
// as `plan` does (auto: lowest CV MRE), wrap both in 5-fold conformal
// intervals, then score fresh samples drawn with --holdout-seed, or (--points
// runs) the truth at every epoch of the sampled configurations, which is
// where `bench coconfig` plans.
#include <fmt/format.h>

#include <iostream>
#include <map>
#include <set>
#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "cli/shared_options.h"
#include "core/error.h"
#include "experiments/interval_coverage.h"
#include "io/json_text.h"
#include "io/pollux_trace.h"
#include "uncertainty/conformal.h"
#include "scoring/model_choice.h"
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
  std::string points = "new";  // new: fresh samples; runs: every epoch of the sampled configurations
};

// The truth at every whole epoch 1..max_epochs of each (batch, workers) that
// `train` measured: the points a plan over the sampled configurations asks about.
SampleSet epochs_of_measured_runs(const replay::ReplayOracle& oracle, const SampleSet& train, int max_epochs) {
  SampleSet out;
  out.direction = train.direction;
  out.dataset_size = train.dataset_size;
  out.source = train.source;
  std::set<std::pair<double, int>> runs;
  for (const auto& s : train.with_metric()) runs.insert({s.batch, s.workers});
  for (const auto& [b, r] : runs) {
    auto t = oracle.epoch_time(b, r);
    if (!t) continue;
    for (int e = 1; e <= max_epochs; ++e)
      if (auto y = oracle.metric(b * r, e)) {
        Sample s;
        s.batch = b, s.workers = r, s.epochs = e, s.epoch_time_s = *t, s.metric = *y;
        out.samples.push_back(s);
      }
  }
  return out;
}

json coverage_json(const experiments::Coverage& c) {
  return {{"points", c.n},
          {"two_sided", c.rate(c.two_sided)},
          {"above_lower", c.rate(c.above_lower)},
          {"below_upper", c.rate(c.below_upper)}};
}

// The metric interval's coverage in one region, its ends named by what they
// mean for the metric's direction, so that traces of both directions pool.
struct RegionCoverage {
  size_t n = 0, two_sided = 0, pessimistic = 0, optimistic = 0;
  void add(const experiments::Coverage& c, MetricDirection d) {
    const bool max = d == MetricDirection::kMax;
    n += c.n, two_sided += c.two_sided;
    pessimistic += max ? c.interval_lo : c.interval_hi;
    optimistic += max ? c.interval_hi : c.interval_lo;
  }
  double rate(size_t hits) const { return n ? double(hits) / double(n) : 0.0; }
  json to_json() const {
    return {{"points", n},
            {"two_sided", rate(two_sided)},
            {"pessimistic_end", rate(pessimistic)},
            {"optimistic_end", rate(optimistic)}};
  }
};

// One line of the text table.
std::string row(const std::string& trace, const char* part, const experiments::Coverage& c) {
  return fmt::format("  {:<12} {:<6} {:>4} points  {:.3f}  {:.3f}  {:.3f}", trace, part, c.n, c.rate(c.two_sided),
                     c.rate(c.above_lower), c.rate(c.below_upper));
}

void run_intervals(const IntervalsArgs& a) {
  if (!(a.confidence > 0 && a.confidence < 1)) throw InputError("--confidence must be strictly between 0 and 1");
  const uint64_t holdout = a.holdout_seed ? a.holdout_seed : a.seed + 1000;
  if (holdout == a.seed) throw InputError("--holdout-seed must differ from --seed (the held-out samples must be new)");
  auto traces = io::find_pollux_traces(a.data);
  json doc = {{"confidence", a.confidence}, {"seed", a.seed}, {"points", a.points}};
  if (a.points == "new") doc["holdout_seed"] = holdout;
  experiments::Coverage all_time, all_metric;
  std::map<experiments::EpochRegion, RegionCoverage> all_regions;  // --points runs
  std::vector<std::string> lines;
  uncertainty::ConformalParams cp;
  cp.seed = a.seed;
  int k = 0;
  for (const auto& dir : traces) {
    ++k;
    auto oracle = replay::ReplayOracle::from_dir(dir);
    SampleSet train = replay::draw_samples(oracle, replay::named_plan("paper", a.seed)).samples;
    SampleSet test = a.points == "runs"
                         ? epochs_of_measured_runs(oracle, train, oracle.epoch_limit_or(100))
                         : replay::draw_samples(oracle, replay::named_plan("paper", holdout)).samples;
    auto choice = scoring::choose_models(a.time_model, a.metric_model, train);  // no metric model on time-only traces
    std::cerr << fmt::format("[{}/{}] {}: time {}{}\n", k, traces.size(), oracle.name(), choice.time_model,
                             oracle.time_only() ? "" : ", metric " + choice.metric_model);
    auto tm = uncertainty::conformal_time_model(choice.time_model, cp);
    tm->fit(train);
    auto tc = experiments::time_coverage(*tm, test, a.confidence);
    all_time += tc;
    json jt = {{"time_model", choice.time_model}, {"time", coverage_json(tc)}};
    lines.push_back(row(oracle.name(), "time", tc));
    if (!oracle.time_only()) {
      auto mm = uncertainty::conformal_metric_model(choice.metric_model, cp);
      mm->fit(train);
      auto mc = experiments::metric_coverage(*mm, test, a.confidence);
      all_metric += mc;
      jt["metric_model"] = choice.metric_model;
      jt["metric"] = coverage_json(mc);
      lines.push_back(row("", "metric", mc));
      if (a.points == "runs") {
        for (const auto& [region, c] : experiments::metric_coverage_by_region(*mm, experiments::EpochRegions(train), test,
                                                                       a.confidence)) {
          RegionCoverage one;
          one.add(c, train.direction);
          all_regions[region].add(c, train.direction);
          jt["metric_by_region"][experiments::to_string(region)] = one.to_json();
        }
      }
    }
    doc["traces"][oracle.name()] = jt;
  }
  doc["all"] = {{"time", coverage_json(all_time)}, {"metric", coverage_json(all_metric)}};
  for (const auto& [region, c] : all_regions) doc["all"]["metric_by_region"][experiments::to_string(region)] = c.to_json();
  if (a.json_out) {
    std::cout << io::json_text(doc) << "\n";
    return;
  }
  std::cout << fmt::format(
      "interval coverage at {:g}: models fitted on the paper plan's samples (seed {}), scored {}; time: one point "
      "per distinct configuration\n",
      a.confidence, a.seed,
      a.points == "new" ? fmt::format("on new samples (seed {})", holdout)
                        : std::string("on the trace's metric at every whole epoch, up to the application's limit, "
                                      "of each sampled configuration"));
  std::cout << "  trace        part   points   two-sided  above lower bound  below upper bound\n";
  lines.push_back(row("all", "time", all_time));
  lines.push_back(row("all", "metric", all_metric));
  for (const auto& l : lines) std::cout << l << "\n";
  std::cout << fmt::format("nominal: {:g} for each column (the one-sided bounds hold on their own side)\n",
                           a.confidence);
  if (all_regions.empty()) return;
  // Where the conformal rules differ (uncertainty/conformal.h), all traces pooled.
  std::cout << fmt::format(
      "\nmetric interval at {:g} by where the epoch lies, all traces (pessimistic end: the lower for a metric to "
      "maximise, the upper for one to minimise; each end alone holds about {:.3g} for symmetric errors)\n",
      a.confidence, (1 + a.confidence) / 2);
  std::cout << "  region                            points  two-sided  pessimistic end  optimistic end\n";
  for (const auto& [region, c] : all_regions)
    std::cout << fmt::format("  {:<32} {:>7}  {:>9.3f}  {:>15.3f}  {:>14.3f}\n", experiments::to_string(region), c.n,
                             c.rate(c.two_sided), c.rate(c.pessimistic), c.rate(c.optimistic));
}

void setup(CLI::App& root) {
  auto a = std::make_shared<IntervalsArgs>();
  auto* cmd = bench_command(root)->add_subcommand(
      "intervals",
      "Coverage of the conformal intervals and one-sided bounds on held-out samples: for each Pollux trace,\n"
      "fit on the paper plan's samples, score fresh samples from the same trace (docs/lab/MODELS-METRIC.md).");
  add_pollux_data_option(cmd, a->data);
  cmd->add_option("--time-model", a->time_model, "Epoch-time model, or auto (lowest CV MRE, as plan does)")
      ->capture_default_str();
  cmd->add_option("--metric-model", a->metric_model, "Metric model, or auto")->capture_default_str();
  cmd->add_option("--confidence", a->confidence, "Coverage of the intervals, in (0, 1)")->capture_default_str();
  cmd->add_option("--seed", a->seed, "Seed of the fitted samples and the folds")->capture_default_str()->check(seed_number());
  cmd->add_option("--holdout-seed", a->holdout_seed, "Seed of the held-out samples (default: --seed + 1000)")
      ->check(non_negative_number());
  cmd->add_option("--points", a->points,
                  "Where to score: new (fresh samples from --holdout-seed) or runs (the metric at every epoch up to "
                  "the application's limit of each sampled configuration, where bench coconfig plans)")
      ->check(CLI::IsMember({"new", "runs"}))
      ->capture_default_str();
  cmd->add_flag("--json", a->json_out, "Print JSON");
  cmd->callback([a] { run_intervals(*a); });
}

CommandRegistrar reg(96, setup);

}  // namespace
}  // namespace trainplan::cli
