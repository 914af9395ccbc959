// trainplan bench simulate-types: the Pollux workloads on a cluster of two
// GPU types, each group timed by its own measured traces (the T4 traces'
// steps on the T4 nodes, the A100 traces' on the A100 nodes), under every
// policy: those blind to GPU types (a job goes to the first group with room),
// coconfig, and pollux both blind and aware of them (choosing each job's
// group, as Sia does). Schedulers see the true speeds, so the policies differ
// in their decisions alone. Then the same with the second group's steps moved
// from the first GPU's (no step of it measured, then --target-trials of each
// network per seed): how well a cluster that adds GPUs nobody profiled is
// predicted. Jobs that some arm cannot run at their requested size are left
// out of all.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "app/simulate_request.h"
#include "cli/bench_workloads.h"
#include "cli/command.h"
#include "cli/shared_options.h"
#include "core/error.h"
#include "core/median.h"
#include "experiments/plan_benchmark_seeds.h"
#include "io/hardware_file.h"
#include "io/json_text.h"
#include "sim/metrics.h"

namespace trainplan::cli {
namespace {

namespace fs = std::filesystem;

struct BenchSimTypesArgs {
  TracePair traces;
  std::string cluster = "t4=4x4,a100-40gb=2x8";
  double load_scale = 0.5;
  std::string policies = "fifo,tiresias,optimus,coconfig,pollux-blind,pollux";
  std::string workloads = "1,2,3,4,5,6,7,8";
  int target_trials = 3;
  std::string seeds = "1-4";
  bool fitted = false;  // the schedulers fit time models to samples of each group's steps instead of the truth
  bool json = false;
};

// A policy of the list: "pollux-blind" is pollux with pollux_types off.
struct Entry {
  std::string label, policy;
  bool types = true;
  std::vector<double> jct, gpu_hours, measured_share;  // per workload
};

// One way of timing the second group, and each policy's runs under it.
struct Arm {
  std::string name, kind;  // kind: measured | moved-0 | moved-k
  app::SimulateQuery q;
  std::vector<Entry> entries;
};

double mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return v.empty() ? 0.0 : s / double(v.size());
}

void run_bench(const BenchSimTypesArgs& a) {
  const fs::path root(a.traces.data);
  const std::string from_dir = a.traces.from_dir(), measured_dir = a.traces.measured_dir();
  a.traces.check();
  if (!(std::isfinite(a.load_scale) && a.load_scale > 0))
    throw InputError("", 0, "--load-scale", fmt::format("must be a finite number > 0, got {:g}", a.load_scale));
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<Entry> entries;
  for (const auto& p : distinct_comma_list(a.policies, "--policy")) {
    const bool blind = p == "pollux-blind";
    entries.push_back({p, blind ? "pollux" : p, !blind, {}, {}, {}});
    sim::PolicyRegistry::instance().make(entries.back().policy, {});  // an unknown name fails before any work
  }
  const auto wls = pollux_workload_numbers(root, a.workloads);
  const auto seeds = experiments::parse_seed_list(a.seeds);

  app::SimulateQuery base;
  base.data = from_dir;
  base.from_gpu = a.traces.from_gpu;
  base.groups = app::parse_cluster(a.cluster);
  // The two GPUs the traces were measured on are the cluster's: the truth moves no group's steps.
  std::vector<std::string> in_cluster;
  for (const auto& g : base.groups) in_cluster.push_back(io::resolve_hardware(g.gpu, "--cluster").name);
  for (const auto& [gpu, option] : {std::pair{a.traces.from_gpu, "--from-gpu"}, std::pair{a.traces.gpu, "--gpu"}})
    if (std::find(in_cluster.begin(), in_cluster.end(), io::resolve_hardware(gpu, option).name) == in_cluster.end())
      throw InputError("", 0, "--cluster",
                       fmt::format("has no group of {} ({}): each group is timed by its measured traces", gpu, option));
  if (in_cluster.size() != 2) throw InputError("", 0, "--cluster", "two groups: one of --from-gpu's GPU, one of --gpu's");
  base.skip_unrunnable = true;
  base.load_scale = a.load_scale;
  base.oracle = !a.fitted;
  const std::string measured_gpu = io::resolve_hardware(a.traces.gpu, "--gpu").name;

  std::vector<Arm> arms;
  {
    app::SimulateQuery q = base;
    q.group_step_times = {{a.traces.gpu, measured_dir}};
    arms.push_back({"measured on " + measured_gpu, "measured", q, entries});
    arms.push_back({"moved from " + a.traces.from_gpu + ", no trial", "moved-0", base, entries});
    if (a.target_trials > 0)
      for (uint64_t seed : seeds) {
        q = base;
        q.group_trials = {{a.traces.gpu, measured_dir}};
        q.target_trials = a.target_trials, q.seed = seed;
        arms.push_back({fmt::format("moved, {} trials, seed {}", a.target_trials, seed), "moved-k", q, entries});
      }
  }

  size_t kept_jobs = 0, left_out = 0;
  const bool tty = stderr_is_tty();
  std::string step_times;
  for (const auto& w : wls) {
    std::vector<app::JobSource> sources;
    std::vector<std::vector<sim::JobSpec>*> each;
    size_t listed = 0;
    for (auto& arm : arms) {
      arm.q.workload = pollux_workload_file(root, w).string();
      sources.push_back(app::load_jobs(arm.q));
      listed = std::max(listed, sources.back().jobs.size() + sources.back().left_out.size());
    }
    for (auto& src : sources) each.push_back(&src.jobs);
    step_times = sources.front().step_times;
    const size_t common = keep_jobs_every_arm_runs(each, arms.front().q.workload);
    kept_jobs += common, left_out += listed - common;
    for (size_t i = 0; i < arms.size(); ++i) {
      const std::vector<sim::JobSpec>& jobs = sources[i].jobs;
      for (auto& e : arms[i].entries) {
        // Off a terminal a line each, as bench simulate prints: a long run is never silent.
        if (tty) std::cerr << fmt::format("\rworkload {} {} {}          ", w, arms[i].name, e.label) << std::flush;
        else std::cerr << fmt::format("workload {} {} {}\n", w, arms[i].name, e.label);
        app::SimulateQuery qe = arms[i].q;
        qe.pollux_types = e.types;
        sim::Experiment ex(sources[i].all_apps(), app::experiment_options(qe));
        const sim::SimResult r = ex.run(e.policy, jobs);
        const auto s = sim::summarize(r);
        e.jct.push_back(s.avg_jct);
        e.gpu_hours.push_back(s.gpu_hours);
        double measured = 0, all = 0;
        for (size_t k = 0; k < r.groups.size(); ++k) {
          all += r.gpu_seconds_by_group[k];
          if (in_cluster[k] == measured_gpu) measured += r.gpu_seconds_by_group[k];
        }
        e.measured_share.push_back(all > 0 ? measured / all : 0);
      }
    }
  }
  if (tty) std::cerr << "\r" << std::string(70, ' ') << "\r";
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  // The truth's policies, each against the last one listed (pollux aware of types, by default),
  // workload by workload.
  const std::vector<Entry>& truth = arms.front().entries;
  const Entry& ref = truth.back();
  nlohmann::json js;
  js["config"] = {{"from", a.traces.from},
                  {"from_gpu", a.traces.from_gpu},
                  {"measured", a.traces.measured},
                  {"gpu", a.traces.gpu},
                  {"cluster", a.cluster},
                  {"load_scale", a.load_scale},
                  {"workloads", wls},
                  {"target_trials", a.target_trials},
                  {"seeds", a.target_trials > 0 ? nlohmann::json(seeds) : nlohmann::json::array()},
                  {"oracle", !a.fitted},
                  {"placement", "pack"}};
  js["jobs"] = kept_jobs;
  js["jobs_left_out"] = left_out;
  js["step_times"] = step_times;
  js["reference"] = ref.label;
  for (const auto& e : truth) {
    std::vector<double> ratio;
    for (size_t i = 0; i < e.jct.size(); ++i) ratio.push_back(ref.jct[i] > 0 ? e.jct[i] / ref.jct[i] : 0);
    js["policies"].push_back({{"policy", e.label},
                              {"mean_avg_jct_s", mean(e.jct)},
                              {"mean_gpu_hours", mean(e.gpu_hours)},
                              {"share_of_gpu_hours_on_" + measured_gpu, mean(e.measured_share)},
                              {"avg_jct_by_workload_s", e.jct},
                              {"avg_jct_over_reference_median", median(ratio)},
                              {"avg_jct_over_reference_min", *std::min_element(ratio.begin(), ratio.end())},
                              {"avg_jct_over_reference_max", *std::max_element(ratio.begin(), ratio.end())}});
  }
  // The moved arms against the truth: each policy's mean JCT (over workloads) and its relative
  // error; for several seeds, the median and worst over them.
  auto best = [](const std::vector<Entry>& es) {
    const Entry* b = &es.front();
    for (const auto& e : es)
      if (mean(e.jct) < mean(b->jct)) b = &e;
    return b->label;
  };
  const std::string truth_best = best(truth);
  for (const char* kind : {"moved-0", "moved-k"}) {
    nlohmann::json jk;
    int agree = 0, count = 0;
    for (size_t p = 0; p < truth.size(); ++p) {
      std::vector<double> errors, jcts;
      for (const auto& arm : arms)
        if (arm.kind == kind) {
          jcts.push_back(mean(arm.entries[p].jct));
          errors.push_back(jcts.back() / mean(truth[p].jct) - 1);
        }
      if (errors.empty()) continue;
      std::vector<double> abs_errors;
      for (double x : errors) abs_errors.push_back(std::abs(x));
      jk["policies"].push_back({{"policy", truth[p].label},
                                {"mean_avg_jct_s_median", median(jcts)},
                                {"avg_jct_error_median", median(errors)},
                                {"abs_avg_jct_error_worst", *std::max_element(abs_errors.begin(), abs_errors.end())}});
    }
    for (const auto& arm : arms)
      if (arm.kind == kind) ++count, agree += best(arm.entries) == truth_best;
    if (count == 0) continue;
    jk["arms"] = count;
    jk["best_policy_agrees"] = fmt::format("{} of {}", agree, count);
    js["moved"][kind] = jk;
  }
  js["best_policy"] = truth_best;
  js["seconds"] = secs;
  if (a.json) {
    std::cout << io::json_text(js) << "\n";
    return;
  }
  std::cout << fmt::format("{} workloads at load x{} on {} ({}), schedulers on {}: {} jobs, {} left out (some "
                           "arm cannot run their request)\n",
                           wls.size(), a.load_scale, a.cluster, step_times,
                           a.fitted ? "time models fitted to each group's sampled steps" : "true speeds", kept_jobs,
                           left_out);
  std::cout << fmt::format("{:<14} {:>12} {:>10} {:>10}   {}\n", "policy", "mean JCT s", "GPU-hours",
                           measured_gpu + " share", "mean JCT / " + ref.label + "'s, median (min-max) over workloads");
  for (const auto& p : js["policies"])
    std::cout << fmt::format("{:<14} {:>12.0f} {:>10.1f} {:>9.0f}%   {:.2f}x ({:.2f}-{:.2f})\n",
                             p["policy"].get<std::string>(), p["mean_avg_jct_s"].get<double>(),
                             p["mean_gpu_hours"].get<double>(),
                             100 * p["share_of_gpu_hours_on_" + measured_gpu].get<double>(),
                             p["avg_jct_over_reference_median"].get<double>(),
                             p["avg_jct_over_reference_min"].get<double>(), p["avg_jct_over_reference_max"].get<double>());
  if (js.contains("moved")) {
    std::cout << fmt::format("\nthe {} group's steps moved from {} by split-transfer: each policy's mean JCT, and its "
                             "error against the measured\n",
                             measured_gpu, a.traces.from_gpu);
    std::cout << fmt::format("{:<14} {:>24}", "policy", "no trial");
    if (js["moved"].contains("moved-k"))
      std::cout << fmt::format(" {:>38}", fmt::format("{} trials, median (worst) over {} seeds", a.target_trials,
                                                      js["moved"]["moved-k"]["arms"].get<int>()));
    std::cout << "\n";
    for (size_t p = 0; p < truth.size(); ++p) {
      const auto& m0 = js["moved"]["moved-0"]["policies"][p];
      std::cout << fmt::format("{:<14} {:>14.0f} s {:>+6.1f}%", truth[p].label, m0["mean_avg_jct_s_median"].get<double>(),
                               100 * m0["avg_jct_error_median"].get<double>());
      if (js["moved"].contains("moved-k")) {
        const auto& mk = js["moved"]["moved-k"]["policies"][p];
        std::cout << fmt::format(" {:>20.0f} s {:>+6.1f}% ({:.1f}%)", mk["mean_avg_jct_s_median"].get<double>(),
                                 100 * mk["avg_jct_error_median"].get<double>(),
                                 100 * mk["abs_avg_jct_error_worst"].get<double>());
      }
      std::cout << "\n";
    }
    std::cout << fmt::format("the measured best policy ({}) is the moved arms' best: no trial {}{}\n", truth_best,
                             js["moved"]["moved-0"]["best_policy_agrees"].get<std::string>(),
                             js["moved"].contains("moved-k")
                                 ? fmt::format(", {} trials {}", a.target_trials,
                                               js["moved"]["moved-k"]["best_policy_agrees"].get<std::string>())
                                 : "");
  }
  std::cout << fmt::format("({} arms x {} policies x {} workloads in {:.1f} s)\n", arms.size(), entries.size(),
                           wls.size(), secs);
}

void setup(CLI::App& root) {
  auto a = std::make_shared<BenchSimTypesArgs>();
  auto* cmd = bench_command(root)->add_subcommand(
      "simulate-types",
      "The Pollux workloads on a cluster of two GPU types, each group timed by its own measured traces, under\n"
      "policies blind to GPU types, coconfig and pollux aware of them (simulate --cluster): each policy's mean JCT,\n"
      "GPU-hours and share of them on the --gpu group, against the last policy listed; then the same with the --gpu\n"
      "group's steps moved from --from-gpu's (no trial, then --target-trials per seed) against it (docs/SIMULATOR.md).");
  add_trace_pair_options(cmd, a->traces);
  cmd->add_option("--cluster", a->cluster, "The node groups, GPU=NODESxGPUS, of --from-gpu and --gpu")
      ->capture_default_str();
  cmd->add_option("--load-scale", a->load_scale, "Divide the workloads' arrival times by this")->capture_default_str();
  cmd->add_option("--policy", a->policies, "Comma-separated policies; pollux-blind is pollux blind to GPU types")
      ->capture_default_str();
  cmd->add_option("--workloads", a->workloads, "Comma-separated numbers of workloads/pollux-1.0/workload-N.csv")
      ->capture_default_str();
  cmd->add_option("--target-trials", a->target_trials,
                  "Steps of each application measured on --gpu that correct the move (0: only the move without)")
      ->check(CLI::Range(0, 1000))
      ->capture_default_str();
  cmd->add_option("--seeds", a->seeds, "With --target-trials above 0: which steps are drawn, one run per seed (e.g. 1-4)")
      ->capture_default_str();
  cmd->add_flag("--fitted", a->fitted,
                "optimus, coconfig and pollux decide on time models fitted to samples of each group's steps (the "
                "paper's plan), not on the true speeds");
  cmd->add_flag("--json", a->json, "Print results as JSON");
  cmd->callback([a] { run_bench(*a); });
}

CommandRegistrar reg(95, setup);

}  // namespace
}  // namespace trainplan::cli
