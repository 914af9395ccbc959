// trainplan simulate: run scheduling policies on a workload over a simulated GPU cluster.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

#include "app/simulate_request.h"
#include "cli/command.h"
#include "cli/shared_options.h"
#include "core/error.h"
#include "io/gnuplot.h"
#include "io/hardware_file.h"
#include "io/json_text.h"
#include "io/output_path.h"
#include "io/philly.h"
#include "sim/experiment.h"
#include "sim/metrics.h"
#include "sim/workload.h"

namespace trainplan::cli {
namespace {

struct SimulateArgs {
  std::string workload, philly;
  long philly_limit = 0;
  std::string policies = "tiresias";
  std::string data = "../shared/data/pollux-t4";
  std::string step_times, gpu, from_gpu = "t4", trials, price, cluster;
  std::string pollux_types = "aware";
  bool skip_unrunnable = false;
  int target_trials = -1;
  uint64_t seed = 1;
  int nodes = 16, gpus_per_node = 4;
  double load_scale = 1.0, restart_delay = 30, interval = 60;
  std::string placement = "pack";
  std::string thresholds = "3250,7200";
  bool gittins = false, oracle = false, json = false;
  std::string time_model;
  double min_gain = 0.5;
  double pollux_p = -1;
  std::string plot, jobs_csv;
};

// The query the options stand for (app/simulate_request.h).
app::SimulateQuery simulate_query(const SimulateArgs& a) {
  app::SimulateQuery q;
  q.workload = a.workload;
  q.philly = a.philly;
  q.philly_limit = a.philly_limit;
  // "all": every registered policy, in the listing's order.
  q.policies = a.policies == "all" ? sim::PolicyRegistry::instance().names() : sim::split_list(a.policies);
  q.data = a.data;
  q.step_times = a.step_times;
  q.gpu = a.gpu;
  q.from_gpu = a.from_gpu;
  q.trials = a.trials;
  q.skip_unrunnable = a.skip_unrunnable;
  q.target_trials = a.target_trials;
  q.seed = a.seed;
  q.nodes = a.nodes;
  q.gpus_per_node = a.gpus_per_node;
  if (!a.cluster.empty()) {
    q.groups = app::parse_cluster(a.cluster);
    // With --cluster, --step-times and --trials name each GPU's folder.
    auto folders = [](const std::string& text, const char* option) {
      std::vector<std::pair<std::string, std::string>> out;
      if (text.empty()) return out;
      for (const std::string& item : comma_list(text, option)) {
        const size_t eq = item.find('=');
        if (eq == std::string::npos || eq == 0 || eq + 1 == item.size())
          throw InputError("", 0, option,
                           fmt::format("with --cluster, each item is GPU=FOLDER (e.g. a100-40gb=../shared/data/sia-a100), "
                                       "got '{}'",
                                       item));
        out.emplace_back(item.substr(0, eq), item.substr(eq + 1));
      }
      return out;
    };
    q.group_step_times = folders(a.step_times, "--step-times");
    q.group_trials = folders(a.trials, "--trials");
    q.step_times.clear(), q.trials.clear();
  }
  if (a.pollux_types != "aware" && a.pollux_types != "blind")
    throw InputError("", 0, "--pollux-types", "must be aware or blind, got '" + a.pollux_types + "'");
  q.pollux_types = a.pollux_types == "aware";
  q.load_scale = a.load_scale;
  q.restart_delay = a.restart_delay;
  q.interval = a.interval;
  q.placement = a.placement;
  q.thresholds = parse_tiresias_thresholds(a.thresholds);
  q.gittins = a.gittins;
  q.oracle = a.oracle;
  q.time_model = a.time_model;
  q.min_gain = a.min_gain;
  q.pollux_p = a.pollux_p;
  return q;
}

// A run's progress on stderr, once it has lasted long enough to be worth a
// word: a run of a few hundred jobs under pollux can take minutes, one of
// 100,000 under fifo seconds, so the time says when, not the job count.
struct RunProgress {
  using Clock = std::chrono::steady_clock;
  static constexpr double kQuietS = 2;     // no line before the run has lasted this long
  static constexpr double kLogEveryS = 5;  // a log file's lines at most this often
  bool tty = false;
  Clock::time_point start, last_line;
  bool said = false;

  void begin() { start = Clock::now(), said = false; }
  void done_of(size_t done, size_t n) {
    const auto now = Clock::now();
    if (std::chrono::duration<double>(now - start).count() < kQuietS) return;
    if (!tty && said && std::chrono::duration<double>(now - last_line).count() < kLogEveryS) return;
    std::cerr << fmt::format("\r  {}/{} jobs done", done, n) << (tty ? "" : "\n") << std::flush;
    said = true, last_line = now;
  }
  void end() {
    if (said && tty) std::cerr << "\n";
  }
};

// Simulates the jobs under each policy in turn, timing each run (on stderr).
std::vector<sim::SimResult> run_policies(sim::Experiment& ex, const std::vector<std::string>& policies,
                                         const app::JobSource& in, const std::string& cluster, RunProgress& progress) {
  std::vector<sim::SimResult> runs;
  for (const auto& p : policies) {
    std::cerr << fmt::format("simulating {} jobs from {} under {} on {}...\n", in.jobs.size(), in.source, p, cluster);
    auto t0 = std::chrono::steady_clock::now();
    progress.begin();
    runs.push_back(ex.run(p, in.jobs));
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    progress.end();
    std::cerr << fmt::format("  {}: {} events in {:.2f} s\n", p, runs.back().events, secs);
  }
  return runs;
}

// One row per policy; a deadlines column when any run has jobs with deadlines.
void print_table(const std::vector<sim::SimResult>& runs) {
  std::cout << fmt::format("{:<18} {:>10} {:>10} {:>10} {:>10} {:>10} {:>6} {:>9}", "policy", "avg JCT s", "median s",
                           "p99 s", "makespan s", "GPU-hours", "util", "restarts");
  bool any_deadline = false;
  for (const auto& r : runs) any_deadline |= sim::summarize(r).deadlines > 0;
  if (any_deadline) std::cout << fmt::format(" {:>9}", "deadlines");
  std::cout << "\n";
  for (const auto& r : runs) {
    auto s = sim::summarize(r);
    std::cout << fmt::format("{:<18} {:>10.0f} {:>10.0f} {:>10.0f} {:>10.0f} {:>10.1f} {:>5.0f}% {:>9}", r.policy,
                             s.avg_jct, s.median_jct, s.p99_jct, s.makespan, s.gpu_hours, 100 * s.utilisation,
                             s.restarts);
    if (s.deadlines) std::cout << fmt::format(" {:>8.0f}%", 100 * s.deadline_met);
    std::cout << "\n";
  }
  if (runs.empty() || runs.front().groups.size() < 2) return;
  std::cout << "GPU-hours by node group:\n";
  for (const auto& r : runs) {
    std::cout << fmt::format("{:<18}", r.policy);
    for (size_t k = 0; k < r.groups.size(); ++k)
      std::cout << fmt::format(" {} {:.1f}", r.groups[k].gpu, r.gpu_seconds_by_group[k] / 3600);
    std::cout << "\n";
  }
}

// The GPUs of --gpu side by side: each policy's mean JCT and GPU-hours on
// each, and their cost where --price gives one.
void print_gpu_comparison(const std::vector<std::string>& gpus, const std::vector<double>& prices,
                          const std::vector<app::SimulateOutcome>& outcomes) {
  const bool priced = std::any_of(prices.begin(), prices.end(), [](double p) { return p > 0; });
  size_t width = 3;
  for (const auto& g : gpus) width = std::max(width, g.size());
  std::cout << fmt::format("\nby GPU: average JCT (s) / GPU-hours{}\n{:<{}}", priced ? " / cost" : "", "GPU", width);
  for (const auto& r : outcomes.front().runs) std::cout << fmt::format(" {:>{}}", r.policy, priced ? 26 : 24);
  std::cout << "\n";
  for (size_t i = 0; i < gpus.size(); ++i) {
    std::cout << fmt::format("{:<{}}", gpus[i], width);
    for (const auto& r : outcomes[i].runs) {
      const auto s = sim::summarize(r);
      std::cout << (priced ? fmt::format(" {:>8.0f} / {:>6.1f} / {:>6.0f}", s.avg_jct, s.gpu_hours, s.gpu_hours * prices[i])
                           : fmt::format(" {:>14.0f} / {:>7.1f}", s.avg_jct, s.gpu_hours));
    }
    std::cout << "\n";
  }
}

void run_simulate(const SimulateArgs& a) {
  {
    // Before the simulations, not after them; and never over what they read.
    std::vector<std::pair<std::string, std::string>> inputs = {{a.workload, "--workload"}, {a.philly, "--philly"},
                                                               {a.data, "--data"},         {a.step_times, "--step-times"},
                                                               {a.trials, "--trials"},
                                                               hardware_file_input(a.from_gpu, "--from-gpu")};
    if (!a.gpu.empty())
      for (const auto& g : comma_list(a.gpu, "--gpu")) inputs.push_back(hardware_file_input(g, "--gpu"));
    // With --cluster: GPU=NODESxGPUS, and GPU=FOLDER in --step-times and --trials; a GPU may be a hardware file.
    for (const auto& [text, option] : {std::pair{&a.cluster, "--cluster"}, std::pair{&a.step_times, "--step-times"},
                                       std::pair{&a.trials, "--trials"}})
      if (!a.cluster.empty() && !text->empty())
        for (const std::string& item : comma_list(*text, option))
          if (const size_t eq = item.find('='); eq != std::string::npos) {
            inputs.push_back(hardware_file_input(item.substr(0, eq), option));
            if (std::string(option) != "--cluster") inputs.emplace_back(item.substr(eq + 1), option);
          }
    io::check_output_path(a.jobs_csv, "--jobs-csv", inputs);
  }
  if (!a.plot.empty()) io::check_plot_path(a.plot), io::require_gnuplot();  // fail before the simulations, not after
  if (a.workload.empty() == a.philly.empty()) throw InputError("", 0, "", "give exactly one of --workload or --philly");
  {
    // The default is relative to where the command runs: a run from elsewhere gets told so.
    std::error_code ec;
    if (!a.workload.empty() && !std::filesystem::is_directory(a.data, ec))
      throw InputError("", 0, "--data",
                       fmt::format("no such folder: '{}' (the application traces, Pollux's format{}); give --data", a.data,
                                   a.data == SimulateArgs{}.data ? ", by default relative to the current folder" : ""));
    for (const auto& [dir, option] : {std::pair{a.step_times, "--step-times"}, std::pair{a.trials, "--trials"}})
      if (!dir.empty() && a.cluster.empty() && !std::filesystem::is_directory(dir, ec))
        throw InputError("", 0, option, fmt::format("no such folder: '{}'", dir));
  }
  // split_list drops empty items; a stray comma is more likely a policy left out than meant.
  distinct_comma_list(a.policies, "--policy");
  const app::SimulateQuery q = simulate_query(a);
  {
    std::error_code ec;
    for (const auto& [given, option] : {std::pair{&q.group_step_times, "--step-times"}, std::pair{&q.group_trials, "--trials"}})
      for (const auto& [gpu, dir] : *given)
        if (!std::filesystem::is_directory(dir, ec))
          throw InputError("", 0, option, fmt::format("{}: no such folder: '{}'", gpu, dir));
  }
  sim::ExperimentOptions eo = app::experiment_options(q);
  // What the cluster is, for the progress lines and the plot's title.
  std::string cluster = fmt::format("{}x{}", a.nodes, a.gpus_per_node);
  if (!q.groups.empty()) {
    cluster.clear();
    for (const auto& g : q.groups) cluster += fmt::format("{}{}x{} {}", cluster.empty() ? "" : " + ", g.nodes, g.gpus_per_node, g.gpu);
  }
  const auto& policies = q.policies;
  if (policies.empty()) throw InputError("", 0, "--policy", "no policy given");
  for (const auto& p : policies) sim::PolicyRegistry::instance().make(p, eo.policy);  // validate names first
  // --gpu a,b,c: the same jobs on a cluster of each, compared (and priced with --price), each
  // named by its hardware's name; all resolved, and their jobs loaded, before any simulation.
  std::vector<std::string> items = a.gpu.empty() ? std::vector<std::string>{} : comma_list(a.gpu, "--gpu");
  std::vector<structure::HardwareProfile> hws;
  for (const auto& g : items) {
    hws.push_back(io::resolve_hardware(g, "--gpu"));
    for (size_t k = 0; k + 1 < hws.size(); ++k)
      if (hws[k].name == hws.back().name)
        throw InputError("", 0, "--gpu", fmt::format("'{}' and '{}' are the same GPU", items[k], g));
  }
  if (items.size() > 1 && !a.trials.empty())
    throw InputError("", 0, "--trials", "the steps of --trials correct the move to one GPU: give one --gpu with them");
  if (!a.price.empty() && items.empty() && q.groups.empty())
    throw InputError("", 0, "--price", "prices the GPU-hours of each --gpu or --cluster group: give --gpu or --cluster");
  std::vector<double> prices(std::max<size_t>(1, items.size()), 0.0);
  if (!a.price.empty() && !items.empty()) prices = prices_for(a.price, items, hws);
  // --cluster: each group's GPU-hour price, and a policy's cost on the cluster at them.
  std::vector<double> group_prices;
  auto cluster_cost = [&](const sim::SimResult& r) {
    double cost = 0;
    for (size_t k = 0; k < group_prices.size() && k < r.gpu_seconds_by_group.size(); ++k)
      cost += r.gpu_seconds_by_group[k] / 3600 * group_prices[k];
    return cost;
  };
  const std::string from = items.empty() ? "" : io::resolve_hardware(a.from_gpu, "--from-gpu").name;
  std::vector<std::string> gpus;   // each cluster's label: its GPU's name ("" without --gpu)
  std::vector<std::string> moved;  // the GPUs whose steps are moved (not the traces' own)
  std::vector<app::JobSource> sources;
  std::vector<app::SimulateQuery> queries;
  for (size_t i = 0; i < std::max<size_t>(1, items.size()); ++i) {
    app::SimulateQuery qg = q;
    qg.gpu = items.empty() ? "" : items[i];
    gpus.push_back(items.empty() ? "" : hws[i].name);
    // The GPU the traces were measured on runs on their own steps, not on a move onto itself.
    if (!items.empty() && hws[i].name == from) {
      if (!a.trials.empty())
        throw InputError("", 0, "--trials", fmt::format("{} is the GPU the traces of --data were measured on: there is "
                                                        "no move for --trials to correct",
                                                        from));
      qg.gpu.clear();
    } else if (!items.empty()) {
      moved.push_back(hws[i].name);
    }
    sources.push_back(app::load_jobs(qg));
    queries.push_back(qg);
  }
  // --cluster: a price for each group's GPU (load_jobs has refused a GPU named by two groups).
  if (!a.price.empty() && !q.groups.empty()) {
    std::vector<std::string> names;
    std::vector<structure::HardwareProfile> group_hws;
    for (const auto& g : q.groups) names.push_back(g.gpu), group_hws.push_back(io::resolve_hardware(g.gpu, "--cluster"));
    group_prices = prices_for(a.price, names, group_hws, "--cluster group's GPU");
  }

  RunProgress progress;
  progress.tty = stderr_is_tty();
  eo.sim.on_progress = [&](size_t done, size_t n) { progress.done_of(done, n); };
  std::vector<app::SimulateOutcome> outcomes;
  for (size_t i = 0; i < sources.size(); ++i) {
    const app::JobSource& in = sources[i];
    if (!in.step_times.empty()) std::cerr << "note: " << in.step_times << "\n";
    if (!in.left_out.empty())
      std::cerr << fmt::format("note: {}{} of {} jobs left out (--skip-unrunnable), the first: {}\n",
                               gpus[i].empty() ? "" : gpus[i] + ": ", in.left_out.size(),
                               in.left_out.size() + in.jobs.size(), in.left_out.front().what());
    if (in.step_times.empty() && !gpus[i].empty())
      std::cerr << "note: " << gpus[i] << ": the traces' own steps (the GPU they were measured on)\n";
    sim::Experiment ex(in.all_apps(), eo);
    std::vector<sim::SimResult> runs =
        run_policies(ex, policies, in, gpus[i].empty() ? cluster : fmt::format("{} {}", cluster, gpus[i]), progress);
    if (!ex.note().empty() && outcomes.empty()) std::cerr << "note: " << ex.note() << "\n";
    outcomes.push_back(
        app::SimulateOutcome{queries[i], in.source, in.step_times, in.left_out.size(), ex.note(), std::move(runs)});
  }
  const bool several = gpus.size() > 1 || (!a.price.empty() && q.groups.empty());
  if (a.json) {
    if (!several) {
      nlohmann::json one = app::to_json(outcomes.front());
      if (!gpus.front().empty()) one["gpu"] = gpus.front();
      if (!group_prices.empty()) {
        for (size_t k = 0; k < q.groups.size(); ++k) one["cluster"]["groups"][k]["price_per_gpu_hour"] = group_prices[k];
        for (size_t i = 0; i < outcomes.front().runs.size(); ++i)
          one["policies"][i]["cost"] = cluster_cost(outcomes.front().runs[i]);
      }
      std::cout << io::json_text(one) << "\n";
      note_json_answer_printed();  // a chart that fails after it adds no second document
    } else {
      nlohmann::json js;
      for (size_t i = 0; i < outcomes.size(); ++i) {
        nlohmann::json one = app::to_json(outcomes[i]);
        one["gpu"] = gpus[i];
        if (prices[i] > 0) {
          one["price_per_gpu_hour"] = prices[i];
          for (auto& p : one["policies"]) p["cost"] = p["gpu_hours"].get<double>() * prices[i];
        }
        js["by_gpu"].push_back(one);
      }
      std::cout << io::json_text(js) << "\n";
      note_json_answer_printed();
    }
  } else {
    for (size_t i = 0; i < outcomes.size(); ++i) {
      if (several) std::cout << fmt::format("{}on {}:\n", i ? "\n" : "", gpus[i]);
      print_table(outcomes[i].runs);
    }
    if (!group_prices.empty()) {
      std::cout << "cost (each group's GPU-hours at its --price):\n";
      for (const auto& r : outcomes.front().runs) std::cout << fmt::format("{:<18} {:.2f}\n", r.policy, cluster_cost(r));
    }
    if (several) print_gpu_comparison(gpus, prices, outcomes);
    // The GPUs moved with no step measured on them: their figures carry the move's error.
    std::vector<std::string> unmeasured;
    for (const auto& src : sources) unmeasured.insert(unmeasured.end(), src.unmeasured.begin(), src.unmeasured.end());
    if (!unmeasured.empty()) {
      std::string list;
      for (const auto& m : unmeasured) list += (list.empty() ? "" : ", ") + m;
      std::cout << "(no step was measured on " << list << ": " << (unmeasured.size() > 1 ? "their" : "its")
                << " figures carry the move's error, which docs/SIMULATOR.md measures; --trials corrects it)\n";
    }
  }
  // With several GPUs, each run is named by its GPU too.
  std::vector<sim::SimResult> all;
  for (size_t i = 0; i < outcomes.size(); ++i)
    for (auto r : outcomes[i].runs) {
      if (gpus.size() > 1) r.policy = gpus[i] + "/" + r.policy;
      all.push_back(std::move(r));
    }
  if (!a.jobs_csv.empty()) {
    sim::write_jobs_csv(a.jobs_csv, all);
    std::cerr << "per-job results -> " << a.jobs_csv << "\n";
  }
  if (!a.plot.empty()) {
    std::string on;
    for (const auto& g : gpus) on += (on.empty() ? "" : ", ") + g;
    if (!moved.empty()) on += ", moved from " + from;
    if (!a.step_times.empty() && q.groups.empty()) on = "timed by " + a.step_times;
    const std::string source = std::filesystem::path(outcomes.front().source).filename().string();
    sim::plot_jct_cdf(a.plot, all,
                      fmt::format("JCT CDF: {}, {} GPUs{}, load x{}", source, cluster,
                                  on.empty() ? "" : " (" + on + ")", a.load_scale));
    std::cerr << "JCT CDF plot -> " << a.plot << "\n";
  }
}

void setup(CLI::App& root) {
  auto a = std::make_shared<SimulateArgs>();
  auto* cmd = root.add_subcommand(
      "simulate",
      "Simulate a GPU cluster shared by many training jobs under scheduling policies.\n"
      "Jobs come from a Pollux-format workload (name,time,application,num_replicas,batch_size[,deadline]) whose\n"
      "applications are replayed from --data, or from the Philly trace (rigid jobs: their GPU count, their duration).\n"
      "Policies: " + [] {
        std::string s;
        for (const auto* e : sim::PolicyRegistry::instance().all()) s += "\n  " + e->name + ": " + e->summary;
        return s;
      }() + "\nSee docs/SIMULATOR.md for the job model.");
  cmd->add_option("--workload", a->workload, "Workload CSV (Pollux format); this or --philly is required");
  cmd->add_option("--philly", a->philly, "Philly trace CSV (timestamp,duration,num_gpus,...); this or --workload is required");
  cmd->add_option("--philly-limit", a->philly_limit, "Use only the first N Philly jobs by arrival (0: all)");
  cmd->add_option("--policy", a->policies, "Comma-separated policies to compare, or all")->capture_default_str();
  cmd->add_option("--data", a->data, "With --workload: the folder of application traces (pollux-t4 format), relative to the current folder")->capture_default_str();
  cmd->add_option("--step-times", a->step_times,
                  "With --workload: take the applications' step times from this folder of the same applications' traces "
                  "measured on other GPUs (e.g. ../shared/data/sia-a100); their learning curves stay those of --data. "
                  "With --cluster: GPU=FOLDER for each group's GPU measured so (comma-separated)")
      ->excludes("--philly");
  cmd->add_option("--gpu", a->gpu,
                  "With --workload: simulate a cluster of this GPU (a catalog name or a hardware file; several, "
                  "comma-separated, are simulated in turn and compared; --from-gpu's own runs on the traces' steps), each "
                  "application's step times moved from --from-gpu by split-transfer (docs/TRANSFER.md), with no step "
                  "measured on it unless --trials gives some")
      ->excludes("--philly")
      ->excludes("--step-times");
  cmd->add_option("--price", a->price,
                  "With --gpu: a GPU-hour's price, one for all or NAME=PRICE for each (e.g. a100-40gb=2.9,h100=4.8): "
                  "each policy's GPU-hours costed side by side (--json then answers by_gpu). With --cluster: each "
                  "policy's cost, every group's GPU-hours at its GPU's price (a cost per policy in the JSON)");
  auto* from_gpu = cmd->add_option("--from-gpu", a->from_gpu,
                                   "With --gpu or --cluster: the GPU the traces of --data were measured on")
                       ->capture_default_str();
  auto* trials = cmd->add_option("--trials", a->trials,
                                 "With --gpu: a folder of the applications' steps measured on that GPU (a trace folder "
                                 "per application, as --data), which correct the move as transfer --trials does (one "
                                 "--gpu); nothing checks which GPU they were measured on. With --cluster: GPU=FOLDER for "
                                 "each moved group's GPU measured so (comma-separated)");
  cmd->add_option("--target-trials", a->target_trials,
                  "With --trials: use this many of each application's measured steps, drawn by --seed (default: all; "
                  "at most all)")
      ->check(CLI::Range(1, 1000000))
      ->needs("--trials");
  cmd->add_option("--seed", a->seed, "With --target-trials: which steps are drawn")
      ->capture_default_str()
      ->needs("--target-trials");
  cmd->add_flag("--skip-unrunnable", a->skip_unrunnable,
                "With --workload: leave out (and count) each job whose requested configuration the step times cannot run, "
                "instead of refusing the workload: another GPU's traces (--step-times) time other placements and batches");
  cmd->add_option("--nodes", a->nodes, "Nodes in the cluster")->capture_default_str();
  cmd->add_option("--gpus-per-node", a->gpus_per_node, "GPUs per node")->capture_default_str();
  cmd->add_option("--cluster", a->cluster,
                  "With --workload: a cluster of several GPU types, GPU=NODESxGPUS for each node group (e.g. "
                  "t4=4x4,a100-40gb=2x8). A job runs within one group at a time; --from-gpu's group on the traces' own "
                  "steps, a group --step-times names on those measured traces, any other on steps moved by "
                  "split-transfer. pollux (--pollux-types) and coconfig choose each job's group; the other policies are "
                  "blind to GPU types, a job going to its own group, else the first with room, in this order")
      ->excludes("--philly")
      ->excludes("--gpu")
      ->excludes("--nodes")
      ->excludes("--gpus-per-node");
  cmd->add_option("--load-scale", a->load_scale, "Divide arrival times by this (2 = twice the load)")->capture_default_str();
  cmd->add_option("--restart-delay", a->restart_delay, "Seconds without progress after any (re)allocation")
      ->capture_default_str();
  cmd->add_option("--interval", a->interval, "Scheduling interval in seconds (0: at every arrival/completion)")
      ->capture_default_str();
  cmd->add_option("--placement", a->placement, "pack (best-fit, fewest nodes) or spread (emptiest node first, as Pollux's Tiresias)")
      ->capture_default_str();
  cmd->add_option("--tiresias-thresholds", a->thresholds, "Tiresias queue thresholds in attained GPU-seconds")
      ->capture_default_str();
  cmd->add_flag("--gittins", a->gittins, "Tiresias orders each queue by Gittins index over the workload's job sizes");
  cmd->add_flag("--oracle", a->oracle, "optimus, pollux and coconfig see the true speeds instead of fitted models");
  cmd->add_option("--time-model", a->time_model,
                  "Registered time model that optimus, pollux and coconfig fit (default: allreduce-physical)");
  cmd->add_option("--min-gain", a->min_gain, "coconfig: least goodput a further GPU must add, as a share of per-GPU goodput")
      ->capture_default_str();
  auto* pollux_types = cmd->add_option("--pollux-types", a->pollux_types,
                  "pollux on a --cluster of several GPU types: aware (choose each job's group and GPU count together, "
                  "as Sia) or blind (GPU counts alone, as Pollux as published)")
      ->capture_default_str();
  cmd->add_option("--pollux-p", a->pollux_p,
                  "pollux: exponent of the power mean of the jobs' speedups it maximises, from -10 to 1 (-1 "
                  "favours the slowest jobs, 0 is the geometric mean, 1 the sum)")
      ->capture_default_str();
  cmd->add_flag("--json", a->json,
                "Print results as JSON ({\"by_gpu\": [...]}, one answer per GPU, with several --gpu or a --price)");
  cmd->add_option("--plot", a->plot,
                  "Draw the JCT CDF per policy with gnuplot (.png or .svg); with several --gpu, per GPU/policy");
  cmd->add_option("--jobs-csv", a->jobs_csv,
                  "Write per-job results to this CSV; with several --gpu, its policy column is GPU/policy");
  cmd->callback([a, from_gpu, pollux_types, trials, cmd] {
    // An option no simulation of this run reads is refused, as a typo or a misplaced option would otherwise be.
    const auto given = [&](const char* option) { return cmd->get_option(option)->count() > 0; };
    if (given("--philly-limit") && a->philly.empty())
      throw InputError("", 0, "--philly-limit", "keeps the first N jobs of --philly: give --philly");
    if (given("--data") && !a->philly.empty())
      throw InputError("", 0, "--data", "holds the applications of --workload's jobs; --philly's jobs have none");
    const auto policies = distinct_comma_list(a->policies, "--policy");
    const auto runs = [&](const std::vector<std::string>& names) {
      return std::any_of(policies.begin(), policies.end(), [&](const std::string& p) {
        return p == "all" || std::find(names.begin(), names.end(), p) != names.end();
      });
    };
    struct PolicyOption {
      const char* option;
      std::vector<std::string> readers;
      const char* which;
    };
    for (const PolicyOption& o : std::vector<PolicyOption>{
             {"--gittins", {"tiresias"}, "tiresias"},
             {"--pollux-p", {"pollux"}, "pollux"},
             {"--min-gain", {"coconfig"}, "coconfig"},
             {"--oracle", {"optimus", "pollux", "coconfig"}, "optimus, pollux or coconfig"},
             {"--time-model", {"optimus", "pollux", "coconfig"}, "optimus, pollux or coconfig (as the model they fit)"},
             {"--tiresias-thresholds", {"tiresias"}, "tiresias"},
             {"--pollux-types", {"pollux"}, "pollux"}})
      if (given(o.option) && !runs(o.readers))
        throw InputError("", 0, o.option, fmt::format("is read by {} only, which --policy does not run", o.which));
    if (given("--time-model") && a->oracle)
      throw InputError("", 0, "--time-model", "is the model the policies fit; with --oracle they fit none");
    if (given("--time-model") && !a->philly.empty())
      throw InputError("", 0, "--time-model", "is fitted on the applications' traces; --philly's jobs are rigid durations");
    if (given("--placement") && !a->philly.empty())
      throw InputError("", 0, "--placement", "has no effect on --philly's jobs, which carry no placement-dependent step times");
    if (given("--philly-limit") && a->philly_limit < 0)
      throw InputError("", 0, "--philly-limit", fmt::format("must be >= 0 (0: all), got {}", a->philly_limit));
    if (!(std::isfinite(a->load_scale) && a->load_scale > 0))
      throw InputError("", 0, "--load-scale", fmt::format("must be a finite number > 0, got {:g}", a->load_scale));
    if (trials->count() && a->gpu.empty() && a->cluster.empty())
      throw InputError("", 0, "--trials", "corrects the move to another GPU: give --gpu or --cluster");
    if (from_gpu->count() && a->gpu.empty() && a->cluster.empty())
      throw InputError("", 0, "--from-gpu", "says which GPU the traces were measured on: give --gpu or --cluster");
    if (pollux_types->count() && a->cluster.empty())
      throw InputError("", 0, "--pollux-types", "says how pollux treats a cluster of several GPU types: give --cluster");
    run_simulate(*a);
  });
}

CommandRegistrar reg(60, setup);

}  // namespace
}  // namespace trainplan::cli
