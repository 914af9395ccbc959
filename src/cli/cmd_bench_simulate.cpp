// trainplan bench simulate: our policies on the eight Pollux workloads at four
// loads, against the results published by Pollux's own simulator.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "cli/shared_options.h"
#include "core/error.h"
#include "io/gnuplot.h"
#include "io/json_text.h"
#include "sim/experiment.h"
#include "sim/metrics.h"
#include "sim/policy.h"
#include "sim/workload.h"

namespace trainplan::cli {
namespace {

namespace fs = std::filesystem;

struct BenchSimArgs {
  std::string data = "../shared/data";
  std::string policies = "tiresias,optimus,pollux,coconfig,fifo";
  std::string loads = "0.5,1.0,1.5,2.0";
  std::string workloads = "1,2,3,4,5,6,7,8";
  std::string placement = "spread";
  std::string thresholds = "57600";
  double restart_delay = 30, interval = 60, min_gain = 0.5;
  bool fitted = false, json = false;
  bool min_gain_given = false;
  bool thresholds_given = false;
  std::string time_model;
  std::string plot;  // .png or .svg: mean JCT by load, ours and published
};

// Published average JCT per workload for one policy and load, or empty.
std::map<std::string, double> published(const std::string& root, const std::string& policy, const std::string& load) {
  std::map<std::string, double> out;
  fs::path p = fs::path(root) / "pollux-results" / fmt::format("{}-{}.json", policy, load);
  if (!fs::exists(p)) return out;
  std::ifstream in(p);
  nlohmann::json j;
  try {
    in >> j;
    for (auto& [k, v] : j.at("avgs").items()) out[k] = v.get<double>();
  } catch (const std::exception& e) {
    throw InputError(p.string(), 0, "avgs", std::string("cannot read published results: ") + e.what());
  }
  return out;
}

// The experiment the bench runs, from the options (defaults: the Pollux artifact's settings).
sim::ExperimentOptions experiment_options(const BenchSimArgs& a) {
  sim::ExperimentOptions eo;
  eo.sim.restart_delay = a.restart_delay;
  eo.sim.interval = a.interval;
  if (a.placement == "pack") eo.sim.placement = sim::PlacementMode::kPack;
  else if (a.placement == "spread") eo.sim.placement = sim::PlacementMode::kSpread;
  else throw InputError("", 0, "--placement", "must be pack or spread");
  eo.policy.tiresias_thresholds = parse_tiresias_thresholds(a.thresholds);
  sim::check_coconfig_min_gain(a.min_gain);
  eo.policy.coconfig_min_gain = a.min_gain;
  eo.oracle = !a.fitted;
  eo.time_model = a.time_model;
  return eo;
}

// Average JCT by policy, then by workload ("workload-N").
using JctTable = std::map<std::string, std::map<std::string, double>>;

// Our average JCT under each policy on each workload at one load (progress on stderr).
JctTable simulate_load(sim::Experiment& ex, const sim::AppSet& apps, const std::string& data, const std::string& load,
                       const std::vector<std::string>& policies, const std::vector<std::string>& wls) {
  JctTable ours;
  const bool tty = stderr_is_tty();  // a log file gets a line per run, not carriage returns
  for (const auto& w : wls) {
    fs::path file = fs::path(data) / "workloads" / ("pollux-" + load) / ("workload-" + w + ".csv");
    auto jobs = sim::jobs_from_workload(file.string(), apps, 1.0, 64);
    for (const auto& p : policies) {
      if (tty) std::cerr << fmt::format("\rload {} workload {} {}        ", load, w, p) << std::flush;
      else std::cerr << fmt::format("load {} workload {} {}\n", load, w, p);
      ours[p]["workload-" + w] = sim::summarize(ex.run(p, jobs)).avg_jct;
    }
  }
  if (tty) std::cerr << "\r" << std::string(40, ' ') << "\r";
  return ours;
}

// Per policy over a load's workloads: the mean of our JCTs, and the sum and
// count of the published ones.
struct LoadMeans {
  std::map<std::string, double> ours, theirs;
  std::map<std::string, int> n_theirs;
};

// One row per workload, ours / published for each policy (text unless
// --json; into jl["workloads"] always), summed into the means.
LoadMeans workload_rows(const BenchSimArgs& a, const std::vector<std::string>& policies,
                        const std::vector<std::string>& wls, JctTable& ours, JctTable& theirs, nlohmann::json& jl) {
  LoadMeans m;
  for (const auto& w : wls) {
    std::string key = "workload-" + w;
    if (!a.json) std::cout << fmt::format("{:<12}", key);
    for (const auto& p : policies) {
      double o = ours[p][key];
      m.ours[p] += o / wls.size();
      auto it = theirs[p].find(key);
      if (it != theirs[p].end()) {
        m.theirs[p] += it->second;
        ++m.n_theirs[p];
      }
      if (!a.json)
        std::cout << (it != theirs[p].end() ? fmt::format(" {:>9.0f} / {:>7.0f}", o, it->second)
                                            : fmt::format(" {:>9.0f} / {:>7}", o, "-"));
      jl["workloads"][key][p] = {{"ours", o}};
      if (it != theirs[p].end()) jl["workloads"][key][p]["published"] = it->second;
    }
    if (!a.json) std::cout << "\n";
  }
  return m;
}

// The row of means, ours / published, and each policy's ratio.
void mean_rows(const BenchSimArgs& a, const std::vector<std::string>& policies, LoadMeans& m, nlohmann::json& jl) {
  if (!a.json) std::cout << fmt::format("{:<12}", "mean");
  for (const auto& p : policies) {
    double t = m.n_theirs[p] ? m.theirs[p] / m.n_theirs[p] : 0;
    if (!a.json)
      std::cout << (m.n_theirs[p] ? fmt::format(" {:>9.0f} / {:>7.0f}", m.ours[p], t)
                                  : fmt::format(" {:>9.0f} / {:>7}", m.ours[p], "-"));
    jl["mean"][p] = {{"ours", m.ours[p]}};
    if (m.n_theirs[p]) {
      jl["mean"][p]["published"] = t;
      jl["mean"][p]["ratio"] = m.ours[p] / t;
    }
  }
  if (!a.json) std::cout << "\n";
  if (!a.json)
    for (const auto& p : policies)
      if (m.n_theirs[p]) std::cout << fmt::format("  {}: ours/published = {:.3f}\n", p, m.ours[p] / (m.theirs[p] / m.n_theirs[p]));
}

// Whether our tiresias/optimus ordering is the published one, and coconfig's
// mean JCT against theirs.
void policy_comparisons(const BenchSimArgs& a, LoadMeans& m, nlohmann::json& jl) {
  auto& mean_ours = m.ours;
  auto& mean_theirs = m.theirs;
  auto& n_theirs = m.n_theirs;
  if (mean_ours.count("tiresias") && mean_ours.count("optimus") && n_theirs["tiresias"] && n_theirs["optimus"]) {
    bool pub = mean_theirs["tiresias"] / n_theirs["tiresias"] < mean_theirs["optimus"] / n_theirs["optimus"];
    bool our = mean_ours["tiresias"] < mean_ours["optimus"];
    jl["ordering_reproduced"] = pub == our;
    if (!a.json)
      std::cout << fmt::format("  ordering: published {} ; ours {} -> {}\n", pub ? "tiresias < optimus" : "optimus < tiresias",
                               our ? "tiresias < optimus" : "optimus < tiresias", pub == our ? "reproduced" : "NOT reproduced");
  }
  if (mean_ours.count("coconfig")) {
    for (const char* other : {"tiresias", "optimus", "pollux"})
      if (mean_ours.count(other)) {
        double r = mean_ours["coconfig"] / mean_ours[other];
        jl["coconfig_vs"][other] = r;
        if (!a.json) std::cout << fmt::format("  coconfig / {} (ours) = {:.3f}{}\n", other, r, r < 1 ? "  (coconfig better)" : "");
      }
  }
}

// Each policy's mean JCT by load, ours a line and the published a hollow mark in
// the same colour; log time, as fifo's queue reaches ten times the others'.
void plot_means(const std::string& path, const std::vector<std::string>& policies, size_t workloads,
                const std::vector<std::pair<double, LoadMeans>>& by_load) {
  io::PlotPanel panel;
  panel.title = fmt::format("{} average JCT, 16 x 4 GPUs (lines: ours; circles: published by Pollux's simulator)",
                            workloads == 1 ? std::string("one workload's")
                                           : fmt::format("mean of {} workloads'", workloads));
  panel.xlabel = "load (x the workloads' arrival rate)";
  panel.ylabel = "average job completion time (hours)";
  panel.logy = true;
  panel.key = "top left";
  const auto& colours = io::plot_palette();
  for (size_t k = 0; k < policies.size(); ++k) {
    const std::string& p = policies[k];
    const std::string colour = colours[k % colours.size()];
    io::PlotSeries ours{p, {}, "linespoints lw 2 pt 7", colour};
    io::PlotSeries theirs{p + " (published)", {}, "points pt 6 ps 2 lw 2", colour};
    for (const auto& [load, m] : by_load) {
      ours.points.push_back({load, m.ours.at(p) / 3600});
      if (m.n_theirs.count(p) && m.n_theirs.at(p)) theirs.points.push_back({load, m.theirs.at(p) / m.n_theirs.at(p) / 3600});
    }
    panel.series.push_back(std::move(ours));
    if (!theirs.points.empty()) panel.series.push_back(std::move(theirs));
  }
  io::render_plot(path, {panel}, 1000, 650);
}

void run_bench(const BenchSimArgs& a) {
  if (!a.plot.empty()) {
    io::check_plot_path(a.plot);
    io::require_gnuplot();
  }
  sim::ExperimentOptions eo = experiment_options(a);
  if (std::error_code ec; !fs::is_directory(fs::path(a.data) / "pollux-t4", ec))
    throw InputError("", 0, "--data",
                     fmt::format("no folder pollux-t4 under '{}' (the shared data's root{}); give --data", a.data,
                                 a.data == BenchSimArgs{}.data ? ", by default relative to the current folder" : ""));
  sim::AppSet apps((fs::path(a.data) / "pollux-t4").string());
  sim::Experiment ex(apps.all(), eo);
  // A policy, load or workload named twice would run, and be summed, twice.
  // "all": every registered policy, as simulate reads it (those Pollux did not publish show "-").
  auto policies = a.policies == "all" ? sim::PolicyRegistry::instance().names()
                                      : distinct_comma_list(a.policies, "--policy");
  auto loads = distinct_comma_list(a.loads, "--loads");
  auto wls = distinct_comma_list(a.workloads, "--workloads");
  // Each load before the hours of simulation: a number naming a folder of workloads.
  const fs::path workload_root = fs::path(a.data) / "workloads";
  for (const auto& load : loads) {
    char* end = nullptr;
    const double v = std::strtod(load.c_str(), &end);
    const bool number = end != load.c_str() && *end == '\0' && std::isfinite(v) && v > 0;
    if (number && fs::is_directory(workload_root / ("pollux-" + load))) continue;
    std::vector<std::string> there;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(workload_root, ec))
      if (const std::string n = entry.path().filename().string(); entry.is_directory() && n.rfind("pollux-", 0) == 0)
        there.push_back(n.substr(7));
    std::sort(there.begin(), there.end());
    throw InputError("", 0, "--loads",
                     fmt::format("'{}' is not a load with workloads under {} ({}: the loads there, as written in "
                                 "their folders' names)",
                                 load, workload_root.string(),
                                 there.empty() ? std::string("none, or no such folder: --data") : fmt::format("{}", fmt::join(there, ", "))));
  }
  for (const auto& p : policies) sim::PolicyRegistry::instance().make(p, eo.policy);
  if (a.min_gain_given && std::find(policies.begin(), policies.end(), "coconfig") == policies.end())
    throw InputError("", 0, "--min-gain", "is read by coconfig only, which --policy does not run");
  if (a.thresholds_given && std::find(policies.begin(), policies.end(), "tiresias") == policies.end())
    throw InputError("", 0, "--tiresias-thresholds", "is read by tiresias only, which --policy does not run");

  nlohmann::json js;
  js["config"] = {{"cluster", "16x4"}, {"restart_delay_s", a.restart_delay}, {"interval_s", a.interval},
                  {"placement", a.placement}, {"tiresias_thresholds", a.thresholds}, {"oracle", !a.fitted}};
  auto t_start = std::chrono::steady_clock::now();
  std::vector<std::pair<double, LoadMeans>> by_load;
  for (const auto& load : loads) {
    JctTable theirs;
    for (const auto& p : policies) theirs[p] = published(a.data, p, load);
    JctTable ours = simulate_load(ex, apps, a.data, load, policies, wls);
    nlohmann::json jl;
    if (!a.json) {
      std::cout << fmt::format("\nload {}x: average JCT (s), ours / published by Pollux's simulator\n", load);
      std::cout << fmt::format("{:<12}", "workload");
      for (const auto& p : policies) std::cout << fmt::format(" {:>19}", p);
      std::cout << "\n";
    }
    LoadMeans means = workload_rows(a, policies, wls, ours, theirs, jl);
    mean_rows(a, policies, means, jl);
    policy_comparisons(a, means, jl);
    js["loads"][load] = jl;
    by_load.push_back({std::stod(load), means});
  }
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count();
  js["seconds"] = secs;
  if (!ex.note().empty()) js["note"] = ex.note();
  if (a.json) {
    std::cout << io::json_text(js) << "\n";
    note_json_answer_printed();  // a chart that fails after it adds no second document
  } else {
    if (!ex.note().empty()) std::cout << "\nnote: " << ex.note() << "\n";
    std::cout << fmt::format("({} policies x {} workloads x {} loads in {:.1f} s)\n", policies.size(), wls.size(),
                             loads.size(), secs);
  }
  if (!a.plot.empty()) {
    plot_means(a.plot, policies, wls.size(), by_load);
    std::cerr << "mean JCT by load -> " << a.plot << "\n";
  }
}

void setup(CLI::App& root) {
  auto a = std::make_shared<BenchSimArgs>();
  auto* cmd = bench_command(root)->add_subcommand(
      "simulate",
      "Run our policies on the 8 Pollux workloads x 4 loads (16 nodes x 4 GPUs) and compare the average JCT\n"
      "with the results published by Pollux's simulator (pollux-results/). Defaults follow the Pollux artifact:\n"
      "60 s scheduling interval, 30 s restarts, emptiest-node-first placement, one Tiresias threshold at 16 GPU-hours,\n"
      "and oracle speeds for optimus, pollux and coconfig (Pollux compared against Optimus+Oracle); --fitted uses\n"
      "fitted models.");
  cmd->add_option("--data", a->data, "Root of the shared data (pollux-t4/, workloads/, pollux-results/)")->capture_default_str();
  cmd->add_option("--policy", a->policies, "Comma-separated policies, or all")->capture_default_str();
  cmd->add_option("--loads", a->loads, "Comma-separated loads (directories workloads/pollux-<load>)")->capture_default_str();
  cmd->add_option("--workloads", a->workloads, "Comma-separated workload numbers")->capture_default_str();
  cmd->add_option("--placement", a->placement, "pack or spread")->capture_default_str();
  cmd->add_option("--tiresias-thresholds", a->thresholds, "Tiresias thresholds in GPU-seconds")
      ->capture_default_str()
      ->each([a](const std::string&) { a->thresholds_given = true; });
  cmd->add_option("--restart-delay", a->restart_delay, "Seconds per (re)allocation")->capture_default_str();
  cmd->add_option("--interval", a->interval, "Scheduling interval in seconds")->capture_default_str();
  cmd->add_option("--min-gain", a->min_gain, "coconfig's least marginal goodput per GPU")
      ->capture_default_str()
      ->each([a](const std::string&) { a->min_gain_given = true; });
  auto* time_model = cmd->add_option("--time-model", a->time_model,
                                      "With --fitted: the time model optimus, pollux and coconfig fit (default: "
                                      "allreduce-physical)");
  auto* fitted = cmd->add_flag("--fitted", a->fitted,
                               "optimus, pollux and coconfig use fitted time models instead of the oracle (the published "
                               "Optimus is Optimus+Oracle)");
  time_model->needs(fitted);  // read only by fitted models: refused, not ignored, without them
  cmd->add_flag("--json", a->json, "Print results as JSON");
  cmd->add_option("--plot", a->plot,
                  "Draw each policy's mean JCT by load, ours and the published, with gnuplot (.png or .svg)");
  cmd->callback([a] { run_bench(*a); });
}

CommandRegistrar reg(95, setup);

}  // namespace
}  // namespace trainplan::cli
