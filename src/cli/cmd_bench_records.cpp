// trainplan bench records: how the metric the co-configuration benchmark
// judges moves where its targets lie, in each run of the Pollux traces
// (experiments/curve_records.h).
#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "cli/shared_options.h"
#include "core/error.h"
#include "core/median.h"
#include "experiments/curve_records.h"
#include "io/json_text.h"
#include "io/pollux_trace.h"
#include "replay/replay_oracle.h"

namespace trainplan::cli {
namespace {

using nlohmann::json;

struct RecordsArgs {
  std::string data;
  experiments::RecordsParams window;
  bool json_out = false;
};

void run_records(const RecordsArgs& a) {
  if (!(a.window.from < a.window.to))
    throw InputError("", 0, "--from", fmt::format("must be below --to ({:g} >= {:g})", a.window.from, a.window.to));
  const auto dirs = io::find_pollux_traces(a.data);
  if (dirs.empty()) throw InputError(a.data, 0, "--data", "no Pollux trace directory (with placements.csv) under it");
  json doc;
  doc["traces"] = json::object();
  std::string text = fmt::format(
      "each validation curve where its best so far goes from {:.0f}% to {:.0f}% of the way from its first evaluation "
      "to its final best\n(where the benchmark's targets lie); the benchmark judges a run by its best metric so far, "
      "which moves only at records\n",
      100 * a.window.from, 100 * a.window.to);
  for (const auto& dir : dirs) {
    auto oracle = replay::ReplayOracle::from_dir(dir);
    if (oracle.time_only()) continue;
    json jt = {{"direction", to_string(oracle.direction())}, {"curves", json::array()}};
    std::vector<double> means, longest, worse;
    std::string rows;
    for (const auto& c : oracle.trace().curves) {
      if (c.rows.size() < experiments::kMinRecordsEvaluations) continue;  // bert: two evaluations a run
      auto r = experiments::curve_records(c, oracle.dataset_size(), oracle.direction(), a.window);
      jt["curves"].push_back({{"global_batch", r.global_batch}, {"last_epoch", r.last_epoch},
                              {"window_from", r.window_from}, {"window_to", r.window_to},
                              {"window_steps", r.window_steps}, {"window_records", r.window_records},
                              {"mean_flat_epochs", r.mean_flat_epochs},
                              {"longest_flat_epochs", r.longest_flat_epochs}, {"worse_steps", r.worse_steps}});
      means.push_back(r.mean_flat_epochs);
      longest.push_back(r.longest_flat_epochs);
      worse.push_back(r.worse_steps);
      rows += fmt::format("    B = {:<6} epochs {:>5.1f} to {:>5.1f}  {:>3} evaluations, {:>3} records  flat {:>4.1f} "
                          "epochs on average, {:>4.1f} at most  steps worse {:>3.0f}%\n",
                          r.global_batch, r.window_from, r.window_to, r.window_steps, r.window_records,
                          r.mean_flat_epochs, r.longest_flat_epochs, 100 * r.worse_steps);
    }
    if (means.empty()) continue;
    const double mean_flat = median(means), longest_flat = *std::max_element(longest.begin(), longest.end()),
                 worse_steps = median(worse);
    jt["median_mean_flat_epochs"] = mean_flat;
    jt["max_longest_flat_epochs"] = longest_flat;
    jt["median_worse_steps"] = worse_steps;
    text += fmt::format("\n  {} ({}): between records {:.1f} epochs on average (median over batches), up to {:.1f}; "
                        "{:.0f}% of steps worse (median)\n",
                        oracle.name(), to_string(oracle.direction()), mean_flat, longest_flat, 100 * worse_steps);
    text += rows;
    doc["traces"][oracle.name()] = jt;
  }
  if (doc["traces"].empty())
    throw InputError(a.data, 0, "--data",
                     fmt::format("no trace with validation curves of {} or more evaluations",
                                 experiments::kMinRecordsEvaluations));
  std::cout << (a.json_out ? io::json_text(doc) + "\n" : text);
}

void setup(CLI::App& root) {
  auto a = std::make_shared<RecordsArgs>();
  auto* cmd = bench_command(root)->add_subcommand(
      "records",
      "How the judged metric moves where the co-configuration benchmark's targets lie: the benchmark reads a\n"
      "run's metric as its best so far, which moves only at records; how far apart they are says to how many\n"
      "epochs any model can place the epoch at which such a target is met (experiments/curve_records.h).");
  add_pollux_data_option(cmd, a->data);
  cmd->add_option("--from", a->window.from, "The window opens where the best so far covers this share of its range")
      ->check(number_within(0, 1))
      ->capture_default_str();
  cmd->add_option("--to", a->window.to, "The window closes where the best so far covers this share of its range")
      ->check(number_within(0, 1))
      ->capture_default_str();
  cmd->add_flag("--json", a->json_out, "Print JSON");
  cmd->callback([a] { run_records(*a); });
}

CommandRegistrar reg(97, setup);

}  // namespace
}  // namespace trainplan::cli
