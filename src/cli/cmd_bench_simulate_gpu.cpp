// trainplan bench simulate-gpu: how well `simulate --gpu` predicts a cluster
// of GPUs nobody profiled. The same workloads run on the same cluster three
// ways: with the step times measured on that GPU (the truth), with the
// source GPU's steps moved there by split-transfer (no step of the target, or
// K of each application drawn by each seed), and with the source GPU's steps
// as measured (what a simulation that ignores the change would say). Jobs
// whose requested configuration one of them cannot run are left out of all.
#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "cli/bench_workloads.h"
#include "cli/command.h"
#include "cli/shared_options.h"
#include "core/error.h"
#include "core/median.h"
#include "experiments/plan_benchmark_seeds.h"
#include "io/gnuplot.h"
#include "io/hardware_file.h"
#include "io/json_text.h"
#include "sim/experiment.h"
#include "sim/metrics.h"
#include "sim/workload.h"

namespace trainplan::cli {
namespace {

namespace fs = std::filesystem;

struct BenchSimGpuArgs {
  TracePair traces;
  int nodes = 2, gpus_per_node = 8;
  double load_scale = 0.5;
  std::string policies = "fifo,tiresias,optimus,pollux,coconfig";
  std::string workloads = "1,2,3,4,5,6,7,8";
  int target_trials = 3;
  std::string seeds = "1-4";
  bool json = false;
  std::string plot;  // .png or .svg: each arm's figures against the measured ones
};

// One way of timing the applications, and its applications.
struct Arm {
  std::string name;  // "measured", "moved, no trial", "moved, 3 trials, seed 2", "unmoved"
  std::string kind;  // measured | moved-0 | moved-k | unmoved
  std::unique_ptr<sim::AppSet> apps;
  // By policy: the mean over workloads of the average JCT and of the GPU-hours.
  std::map<std::string, double> jct, gpu_hours;
};

double relative(double v, double truth) { return truth > 0 ? v / truth - 1 : 0; }

// Two panels, mean JCT (log-log) and GPU-hours: each policy of each arm at
// (measured, simulated), beside the diagonal where a simulation is right.
void plot_arms(const std::string& path, const std::vector<Arm>& arms, const std::vector<std::string>& policies,
               const std::string& gpu, const std::string& from_gpu) {
  std::vector<io::PlotPanel> panels;
  for (const bool jct : {true, false}) {
    io::PlotPanel panel;
    panel.title = jct ? "each policy's mean JCT (hours)" : "each policy's GPU-hours";
    panel.xlabel = "with the steps measured on " + gpu;
    panel.ylabel = "simulated from " + from_gpu + "'s steps";
    panel.logx = panel.logy = jct;  // FIFO's queue puts its JCT ten times the others'
    panel.key = "bottom right";
    auto value = [&](const Arm& arm, const std::string& p) { return jct ? arm.jct.at(p) / 3600 : arm.gpu_hours.at(p); };
    double lo = INFINITY, hi = 0;
    for (const auto& arm : arms)
      for (const auto& p : policies) lo = std::min(lo, value(arm, p)), hi = std::max(hi, value(arm, p));
    panel.series.push_back({"simulated = measured", {{lo, lo}, {hi, hi}}, "lines dt 2 lw 1", "#808080"});
    const auto& colours = io::plot_palette();
    size_t colour = 0;
    for (const char* kind : {"moved-0", "moved-k", "unmoved"}) {
      io::PlotSeries s{"", {}, "points pt 7 ps 1.5", colours[colour++ % colours.size()]};
      for (const auto& arm : arms)
        if (arm.kind == kind) {
          if (s.title.empty()) s.title = arm.kind == "moved-k" ? arm.name.substr(0, arm.name.find(", seed")) : arm.name;
          for (const auto& p : policies) s.points.push_back({value(arms.front(), p), value(arm, p)});
        }
      if (!s.points.empty()) panel.series.push_back(std::move(s));
    }
    panels.push_back(std::move(panel));
  }
  io::render_plot(path, panels, 650, 600);
}

void run_bench(const BenchSimGpuArgs& a) {
  if (!a.plot.empty()) {  // before any work: a chart that cannot be drawn fails at once
    io::check_plot_path(a.plot);
    io::require_gnuplot();
  }
  const fs::path root(a.traces.data);
  const std::string from_dir = a.traces.from_dir(), measured_dir = a.traces.measured_dir();
  a.traces.check();
  sim::check_cluster(a.nodes, a.gpus_per_node);
  if (!(std::isfinite(a.load_scale) && a.load_scale > 0))
    throw InputError("", 0, "--load-scale", fmt::format("must be a finite number > 0, got {:g}", a.load_scale));
  const auto t0 = std::chrono::steady_clock::now();
  const auto policies = distinct_comma_list(a.policies, "--policy");
  const auto wls = pollux_workload_numbers(root, a.workloads);  // before any simulation: a wrong number is found at once
  const auto seeds = experiments::parse_seed_list(a.seeds);

  sim::ExperimentOptions eo;
  eo.sim.nodes = a.nodes, eo.sim.gpus_per_node = a.gpus_per_node;
  eo.oracle = true;  // every arm's schedulers see that arm's own speeds: the arms differ in the speeds alone
  for (const auto& p : policies) sim::PolicyRegistry::instance().make(p, eo.policy);

  sim::StepTimeSource base;
  base.gpus_per_node = a.gpus_per_node, base.nodes = a.nodes, base.max_gpus = a.nodes * a.gpus_per_node;
  std::vector<Arm> arms;
  auto add = [&](std::string name, std::string kind, sim::StepTimeSource st) {
    arms.push_back({std::move(name), std::move(kind), std::make_unique<sim::AppSet>(from_dir, st), {}, {}});
  };
  {
    sim::StepTimeSource st = base;
    st.kind = sim::StepTimeSource::Kind::kOtherTraces, st.other_traces = measured_dir;
    add("measured on " + a.traces.gpu, "measured", st);
  }
  sim::StepTimeSource moved = base;
  moved.kind = sim::StepTimeSource::Kind::kTransfer;
  moved.from = io::resolve_hardware(a.traces.from_gpu, "--from-gpu");
  moved.to = io::resolve_hardware(a.traces.gpu, "--gpu");
  add("moved, no trial", "moved-0", moved);
  if (a.target_trials > 0)
    for (uint64_t seed : seeds) {
      sim::StepTimeSource st = moved;
      st.trials = measured_dir, st.target_trials = a.target_trials, st.seed = seed;
      add(fmt::format("moved, {} trials, seed {}", a.target_trials, seed), "moved-k", st);
    }
  add(a.traces.from_gpu + "'s steps unmoved", "unmoved", base);

  nlohmann::json js;
  js["config"] = {{"from", a.traces.from},           {"from_gpu", a.traces.from_gpu},   {"measured", a.traces.measured},
                  {"gpu", a.traces.gpu},             {"cluster", fmt::format("{}x{}", a.nodes, a.gpus_per_node)},
                  {"load_scale", a.load_scale}, {"target_trials", a.target_trials},
                  {"seeds", a.target_trials > 0 ? nlohmann::json(seeds) : nlohmann::json::array()},
                  {"workloads", wls},          {"oracle", true},          {"placement", "pack"}};
  const bool tty = stderr_is_tty();
  size_t kept_jobs = 0, left_out = 0;
  for (const auto& w : wls) {
    const fs::path file = pollux_workload_file(root, w);
    std::vector<std::vector<sim::JobSpec>> jobs(arms.size());
    std::vector<std::vector<sim::JobSpec>*> each;
    size_t listed = 0;
    for (size_t i = 0; i < arms.size(); ++i) {
      std::vector<InputError> skipped;
      jobs[i] = sim::jobs_from_workload(file.string(), *arms[i].apps, a.load_scale, a.nodes * a.gpus_per_node, &skipped);
      listed = std::max(listed, jobs[i].size() + skipped.size());
      each.push_back(&jobs[i]);
    }
    const size_t common = keep_jobs_every_arm_runs(each, file.string());
    kept_jobs += common, left_out += listed - common;
    for (size_t i = 0; i < arms.size(); ++i) {
      const std::vector<sim::JobSpec>& kept = jobs[i];
      sim::Experiment ex(arms[i].apps->all(), eo);
      for (const auto& p : policies) {
        // Off a terminal a line each, as bench simulate prints: a long run is never silent.
        if (tty) std::cerr << fmt::format("\rworkload {} {} {}          ", w, arms[i].name, p) << std::flush;
        else std::cerr << fmt::format("workload {} {} {}\n", w, arms[i].name, p);
        const auto s = sim::summarize(ex.run(p, kept));
        arms[i].jct[p] += s.avg_jct / wls.size();
        arms[i].gpu_hours[p] += s.gpu_hours / wls.size();
      }
    }
  }
  if (tty) std::cerr << "\r" << std::string(60, ' ') << "\r";
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  const Arm& truth = arms.front();
  auto best = [&](const Arm& arm) {
    std::string b = policies.front();
    for (const auto& p : policies)
      if (arm.jct.at(p) < arm.jct.at(b)) b = p;
    return b;
  };
  // Per arm kind: each policy's error of mean JCT and GPU-hours (for moved-k, the median over seeds).
  struct KindErrors {
    std::map<std::string, std::vector<double>> jct, gpu_hours;
    int best_agrees = 0, arms = 0;
  };
  std::map<std::string, KindErrors> by_kind;
  for (size_t i = 1; i < arms.size(); ++i) {
    auto& k = by_kind[arms[i].kind];
    for (const auto& p : policies) {
      k.jct[p].push_back(relative(arms[i].jct[p], truth.jct.at(p)));
      k.gpu_hours[p].push_back(relative(arms[i].gpu_hours[p], truth.gpu_hours.at(p)));
    }
    k.best_agrees += best(arms[i]) == best(truth);
    ++k.arms;
  }

  for (const auto& arm : arms) {
    nlohmann::json ja;
    for (const auto& p : policies) ja[p] = {{"avg_jct_s", arm.jct.at(p)}, {"gpu_hours", arm.gpu_hours.at(p)}};
    js["arms"].push_back({{"arm", arm.name}, {"kind", arm.kind}, {"policies", ja}, {"best_policy", best(arm)}});
  }
  const std::vector<std::pair<std::string, std::string>> kinds = {
      {"moved-0", "moved, no trial"},
      {"moved-k", fmt::format("moved, {} trials (median over {} seed{})", a.target_trials, seeds.size(),
                              seeds.size() == 1 ? "" : "s")},
      {"unmoved", a.traces.from_gpu + "'s steps unmoved"}};
  for (const auto& [kind, label] : kinds) {
    if (!by_kind.count(kind)) continue;
    auto& k = by_kind[kind];
    nlohmann::json jk;
    // Pooled over policies and seeds: how far one simulation may be off.
    std::vector<double> abs_jct, abs_gh;
    for (const auto& p : policies) {
      jk["policies"][p] = {{"avg_jct_error", median(k.jct[p])},
                           {"gpu_hours_error", median(k.gpu_hours[p])},
                           {"avg_jct_error_by_arm", k.jct[p]},
                           {"gpu_hours_error_by_arm", k.gpu_hours[p]}};
      for (double e : k.jct[p]) abs_jct.push_back(std::fabs(e));
      for (double e : k.gpu_hours[p]) abs_gh.push_back(std::fabs(e));
    }
    jk["median_abs_avg_jct_error"] = median(abs_jct);
    jk["median_abs_gpu_hours_error"] = median(abs_gh);
    jk["worst_abs_avg_jct_error"] = *std::max_element(abs_jct.begin(), abs_jct.end());
    jk["worst_abs_gpu_hours_error"] = *std::max_element(abs_gh.begin(), abs_gh.end());
    jk["best_policy_agrees"] = fmt::format("{} of {}", k.best_agrees, k.arms);
    js["errors"][kind] = jk;
  }
  js["jobs"] = kept_jobs, js["jobs_left_out"] = left_out, js["seconds"] = secs;
  if (!a.plot.empty()) {
    plot_arms(a.plot, arms, policies, a.traces.gpu, a.traces.from_gpu);
    std::cerr << "each arm against the measured -> " << a.plot << "\n";
  }
  if (a.json) {
    std::cout << io::json_text(js) << "\n";
    return;
  }
  std::cout << fmt::format(
      "{} workload{} at load x{} on {} x {} GPUs ({} jobs; {} left out that some arm cannot run at their requested "
      "size), policies with the true speeds of each arm\n",
      wls.size(), wls.size() == 1 ? "" : "s", a.load_scale, a.nodes, a.gpus_per_node, kept_jobs, left_out);
  std::cout << fmt::format("mean of the workloads' average JCT (s) / GPU-hours\n{:<34}", "step times");
  for (const auto& p : policies) std::cout << fmt::format(" {:>17}", p);
  std::cout << "\n";
  for (const auto& arm : arms) {
    std::cout << fmt::format("{:<34}", arm.name);
    for (const auto& p : policies) std::cout << fmt::format(" {:>9.0f} / {:>5.1f}", arm.jct.at(p), arm.gpu_hours.at(p));
    std::cout << "\n";
  }
  std::cout << fmt::format("\nerror against the measured {} (average JCT / GPU-hours)\n", a.traces.gpu);
  for (const auto& [kind, label] : kinds) {
    if (!by_kind.count(kind)) continue;
    const auto& jk = js["errors"][kind];
    std::cout << fmt::format("{:<34}", label);
    for (const auto& p : policies)
      std::cout << fmt::format(" {:>+8.1f}% /{:>+5.0f}%", 100 * jk["policies"][p]["avg_jct_error"].get<double>(),
                               100 * jk["policies"][p]["gpu_hours_error"].get<double>());
    std::cout << fmt::format(
        "\n{:<34} |error| over policies{}: median {:.1f}% / {:.1f}%, worst {:.1f}% / {:.1f}%; the best policy "
        "agrees in {}\n",
        "", kind == "moved-k" ? " and seeds" : "", 100 * jk["median_abs_avg_jct_error"].get<double>(),
        100 * jk["median_abs_gpu_hours_error"].get<double>(), 100 * jk["worst_abs_avg_jct_error"].get<double>(),
        100 * jk["worst_abs_gpu_hours_error"].get<double>(), jk["best_policy_agrees"].get<std::string>());
  }
  std::cout << fmt::format("({} arms x {} policies x {} workloads in {:.1f} s)\n", arms.size(), policies.size(),
                           wls.size(), secs);
}

void setup(CLI::App& root) {
  auto a = std::make_shared<BenchSimGpuArgs>();
  auto* cmd = bench_command(root)->add_subcommand(
      "simulate-gpu",
      "How well simulate --gpu predicts a cluster of a GPU nobody profiled: the Pollux workloads on one cluster,\n"
      "timed by the steps measured on that GPU (the truth), by the source GPU's steps moved there by split-transfer\n"
      "(no target step, then --target-trials of each application per seed), and by the source's steps unmoved.\n"
      "Prints each policy's mean JCT and GPU-hours and their errors against the truth (docs/SIMULATOR.md).");
  add_trace_pair_options(cmd, a->traces);
  cmd->add_option("--nodes", a->nodes, "Nodes in the cluster")->capture_default_str();
  cmd->add_option("--gpus-per-node", a->gpus_per_node, "GPUs per node")->capture_default_str();
  cmd->add_option("--load-scale", a->load_scale, "Divide the workloads' arrival times by this")->capture_default_str();
  cmd->add_option("--policy", a->policies, "Comma-separated policies")->capture_default_str();
  cmd->add_option("--workloads", a->workloads, "Comma-separated numbers of workloads/pollux-1.0/workload-N.csv")
      ->capture_default_str();
  cmd->add_option("--target-trials", a->target_trials,
                  "Steps of each application measured on --gpu that correct the move (0: only the move without)")
      ->check(CLI::Range(0, 1000))
      ->capture_default_str();
  cmd->add_option("--seeds", a->seeds, "With --target-trials above 0: which steps are drawn, one run per seed (e.g. 1-4)")
      ->capture_default_str();
  cmd->add_flag("--json", a->json, "Print results as JSON");
  cmd->add_option("--plot", a->plot,
                  "Draw each policy's mean JCT and GPU-hours, simulated from the moved or unmoved steps against "
                  "those with the measured ones, with gnuplot (.png or .svg)");
  cmd->callback([a] { run_bench(*a); });
}

CommandRegistrar reg(95, setup);

}  // namespace
}  // namespace trainplan::cli
