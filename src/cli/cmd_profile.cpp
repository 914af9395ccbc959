// trainplan profile: run real training trials over a sampling plan and keep
// each result in a crash-safe SQLite store (docs/PROFILING.md).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "cli/shared_options.h"
#include "core/error.h"
#include "io/json_text.h"
#include "io/output_path.h"
#include "io/sample_csv.h"
#include "profile/builtin_workload.h"
#include "profile/command_check.h"
#include "profile/trainer_fork_server.h"
#include "profile/interrupt.h"
#include "profile/machine_probe.h"
#include "profile/process_group.h"
#include "profile/profile_plan.h"
#include "profile/profiler.h"
#include "profile/live_log.h"

namespace trainplan::cli {
namespace {

// The shortest per-trial limit a --budget sets without --trial-timeout (seconds).
constexpr double kLeastBudgetTrialTimeoutS = 60;

using namespace trainplan::profile;

struct ProfileArgs {
  std::string cmd;
  std::string workload;
  std::string trainer;
  std::string data_dir;
  long train_subset = 0;
  long test_subset = 0;
  long seed = 1;
  std::string store = "trainplan-samples.db";
  std::string launcher = "local";
  std::vector<std::string> srun_args;
  std::string master_addr = "127.0.0.1";
  int workers_per_node = 0;
  std::string batches = "16,32,64,128";
  std::string workers;  // empty: 1,2, without counts that would oversubscribe this machine
  std::string epochs = "1,2";
  bool paper_grid = false;
  std::string budget;
  std::string trial_timeout = "10m";
  bool retry_failed = false;
  bool dry_run = false;
  std::string out;
  bool json = false;
  bool quiet = false;
  std::string timing = "auto";
  std::string step_clock = "auto";
  std::string time_cmd;
  int time_repeats = 2;
  double time_trial_s = 0;  // seconds of timed steps per batch per run at most (built-in workloads); 0: none
  bool repeats_back_to_back = false;
  bool time_batches_apart = false;  // each time trial in runs of its own
  int threads_per_worker = 1;
  bool no_pin = false;
  std::string hardware;
  std::string name;  // the samples' model column for --cmd
  std::vector<std::string> argv;  // as given, for the resume hint
};

nlohmann::json record_json(const TrialRecord& r) {
  nlohmann::json j = {{"batch", r.key.batch},     {"workers", r.key.workers},   {"epochs", r.key.epochs},
                      {"status", to_string(r.status)}, {"reason", r.reason},    {"wall_s", r.wall_s},
                      {"metric_name", r.metric_name}, {"started_at", r.started_at}, {"finished_at", r.finished_at}};
  j["epoch_time_s"] = r.epoch_time_s ? nlohmann::json(*r.epoch_time_s) : nlohmann::json(nullptr);
  j["metric"] = r.metric ? nlohmann::json(*r.metric) : nlohmann::json(nullptr);
  if (r.status != TrialStatus::kOk) j["stderr_tail"] = r.stderr_tail;
  if (r.timing) {
    j["step_time_s"] = r.timing->step_time_s;
    j["steps_per_epoch"] = r.timing->steps_per_epoch;
    j["time_spread"] = r.timing->spread;
    if (!r.timing->repeats.empty()) j["repeats_step_time_s"] = r.timing->repeats;
    j["step_outliers"] = r.timing->outliers;
    if (r.timing->probe_s > 0) j["machine_probe_s"] = r.timing->probe_s;
  }
  if (r.oversubscribed) j["oversubscribed"] = true;
  if (!r.note.empty()) j["note"] = r.note;
  return j;
}

// A line when the machine probes of the plan's time trials (profile/machine_probe.h)
// differ: the machine changed speed while the grid was timed.
std::string probe_range_line(const std::vector<TrialRecord>& records) {
  std::vector<double> probes;
  for (const auto& r : records)
    if (r.timing && r.timing->probe_s > 0) probes.push_back(r.timing->probe_s);
  if (probes.empty()) return "";
  const auto [lo, hi] = std::minmax_element(probes.begin(), probes.end());
  if (!probes_differ(*lo, *hi)) return "";
  return fmt::format("  note: the machine probe took {:.3f} to {:.3f} ms across the time trials (x{:.2f}): the machine "
                     "changed speed while the grid was timed, so their step times are not all at one speed "
                     "(docs/PROFILING.md)", 1e3 * *lo, 1e3 * *hi, *hi / *lo);
}

int run_profile_cmd(const ProfileArgs& a) {
  if (a.cmd.empty() == a.workload.empty())
    throw InputError("", 0, "--cmd", "give exactly one of --cmd TEMPLATE or --workload NAME");
  if (a.timing != "auto" && a.timing != "steps" && a.timing != "epochs")
    throw InputError("", 0, "--timing", "must be auto, steps or epochs, got '" + a.timing + "'");
  if (a.train_subset < 0) throw InputError("", 0, "--train-subset", "must be >= 0 (0: the whole training set)");
  if (a.test_subset < 0) throw InputError("", 0, "--test-subset", "must be >= 0 (0: the whole test set)");
  BuiltinWorkloadOptions builtin{a.trainer, a.data_dir, a.train_subset, a.test_subset, a.seed, a.threads_per_worker};
  std::string text = a.cmd;
  if (!a.workload.empty()) text = builtin_template(a.workload, builtin);
  CommandTemplate tmpl(text);
  check_data_parallel_template(tmpl);  // before the store is made
  ProfileOptions opts;
  const bool can_time = !a.workload.empty() || !a.time_cmd.empty();
  if (a.timing == "steps" && !can_time)
    throw InputError("", 0, "--timing", "steps needs --time-cmd TEMPLATE (a command that prints step_timing lines) "
                                        "or a built-in --workload");
  if (!a.time_cmd.empty() && !a.workload.empty())
    throw InputError("", 0, "--time-cmd", "the built-in workloads have their own time trials; use it with --cmd");
  const auto clock = parse_step_clock(a.step_clock);
  if (!clock) throw InputError("", 0, "--step-clock", "must be auto, wall or cpu, got '" + a.step_clock + "'");
  opts.step_clock = *clock;
  builtin.step_clock = to_string(*clock);  // the trainer resolves auto per trial, as the profiler reads it
  if (a.time_trial_s > 0 && a.workload.empty())
    throw InputError("", 0, "--time-trial-s",
                     "caps the built-in workloads' time trials; a --time-cmd program sets its own limits");
  if (a.time_trial_s > 0 && a.timing == "epochs")
    throw InputError("", 0, "--time-trial-s", "--timing epochs runs no time trials to cap");
  if (can_time && a.timing != "epochs") {
    builtin.time_only = true;
    builtin.max_timed_s = a.time_trial_s;
    opts.time_template = CommandTemplate(a.workload.empty() ? a.time_cmd : builtin_template(a.workload, builtin));
    check_data_parallel_template(*opts.time_template, "--time-cmd");
  }
  opts.epoch_times_from_epochs = a.timing == "epochs";
  opts.time_repeats = a.time_repeats;
  opts.time_rounds = !a.repeats_back_to_back;
  opts.time_batches_together = !a.time_batches_apart;
  opts.threads_per_worker = a.threads_per_worker;
  opts.pin = !a.no_pin;

  std::vector<int> worker_counts;
  if (a.workers.empty()) {
    // 1 and 2, but never more workers than CPUs for them: an oversubscribed
    // trial measures the contention, not the program.
    for (int r : {1, 2})
      if (r == 1 || !oversubscribes(r, a.threads_per_worker)) worker_counts.push_back(r);
  } else {
    worker_counts = parse_int_list(a.workers, "--workers");
  }
  GridSpec grid = a.paper_grid ? paper_grid()
                               : GridSpec{parse_int_list(a.batches, "--batches"), worker_counts,
                                          parse_int_list(a.epochs, "--epochs")};
  grid = normalise(grid);
  // Every value of the grid must reach the command, or the trials all measure the same run.
  for (const auto* t : {&tmpl, opts.time_template ? &*opts.time_template : nullptr}) {
    if (!t) continue;
    const std::string which = t == &tmpl ? "--cmd" : "--time-cmd";
    // A time command may take every batch of a worker count at once ({batches}).
    const bool all_batches = t != &tmpl && t->uses("batches");
    if (grid.batches.size() > 1 && !all_batches && !t->uses("batch") && !t->uses("global_batch") &&
        !t->uses("micro_batch"))
      throw InputError("", 0, which,
                       fmt::format("the grid has {} batches, but the command never receives {{batch}}: every trial "
                                   "would run the same batch",
                                   grid.batches.size()));
    if (grid.workers.size() > 1 && !t->uses("workers") && !t->uses("dp") && !t->uses("nodes"))
      throw InputError("", 0, which,
                       fmt::format("the grid has {} worker counts, but the command never receives {{workers}} (or "
                                   "{{dp}} or {{nodes}}): {}",
                                   grid.workers.size(),
                                   t->uses("rank") ? "one process a rank is started, but none learns how many ranks "
                                                     "there are"
                                                   : "every trial would run the same number of ranks"));
    // Each trial checks that its program ran the epochs asked for; a program that never learns
    // them would fail all but one epoch count's trials, after running them. (One count it may
    // run of itself.)
    if (t == &tmpl && !t->uses("epochs") && grid.epochs.size() > 1)
      throw InputError("", 0, which,
                       fmt::format("the grid has {} epoch counts ({}), but the command never receives {{epochs}}: "
                                   "each trial must run the epochs asked for, and print an epoch line for each",
                                   grid.epochs.size(), fmt::join(grid.epochs, ",")));
  }
  opts.launch.kind = parse_launcher(a.launcher);
  // What the shell would refuse fails every trial alike, each after starting: said before any.
  // The program is looked up only where it will run (here, not on Slurm's nodes), and not for
  // a dry run, which may list commands for another machine.
  if (a.workload.empty())
    for (const auto* t : {&tmpl, opts.time_template ? &*opts.time_template : nullptr})
      if (t)
        if (auto problem = command_problem(*t, opts.launch.kind == LauncherKind::kLocal && !a.dry_run))
          throw InputError("", 0, t == &tmpl ? "--cmd" : "--time-cmd", *problem);
  // A template without {rank} is started once per trial, as a launcher of its ranks: said where
  // some trial has several, since a program that is one rank would wait for peers never started.
  if (a.workload.empty() && !tmpl.per_rank() && !a.quiet &&
      std::any_of(grid.workers.begin(), grid.workers.end(), [](int r) { return r > 1; }))
    std::cerr << "note: --cmd has no {rank}: each trial starts it once (under Slurm, once a node), as a launcher "
                 "(torchrun, mpirun) that starts its {workers} ranks itself; a program that is one rank takes {rank} "
                 "(and {master_port}), and is then started once per rank\n";
  profile::check_host_address(a.master_addr);
  opts.launch.master_addr = a.master_addr;
  opts.launch.workers_per_node = a.workers_per_node;
  opts.launch.srun_args = a.srun_args;
  opts.trial_timeout_s = parse_duration(a.trial_timeout, "--trial-timeout");
  opts.retry_failed = a.retry_failed;
  if (!a.budget.empty()) opts.budget_s = parse_duration(a.budget, "--budget");
  // A trial that hangs must not spend ten budgets: without --trial-timeout, none runs past the
  // whole budget (at least a minute, as the demo's), which no trial that fits it needs.
  if (opts.budget_s && std::find(a.argv.begin(), a.argv.end(), "--trial-timeout") == a.argv.end()) {
    const double limit = std::max(kLeastBudgetTrialTimeoutS, *opts.budget_s);
    if (limit < opts.trial_timeout_s) {
      opts.trial_timeout_s = limit;
      opts.trial_timeout_from = "--budget, no --trial-timeout given";
      if (!a.quiet)
        std::cerr << fmt::format("note: --budget {} without --trial-timeout: a trial still running after {:g} s is "
                                 "killed (--trial-timeout sets another limit)\n",
                                 a.budget, limit);
    }
  }
  std::vector<TrialKey> order = opts.budget_s ? budget_order(grid) : grid_trials(grid);
  if (opts.time_template) order = with_time_trials(order);
  std::vector<int> crowded;
  for (int r : grid.workers)
    if (opts.launch.kind == LauncherKind::kLocal && oversubscribes(r, a.threads_per_worker)) crowded.push_back(r);

  if (a.dry_run) {
    // As the run would go: trials a store already holds are left out, and the time trials of a
    // worker count timed together show as the one command that times them.
    std::set<TrialKey> done;
    std::error_code ec;
    // What the run would refuse, the plan of it refuses too.
    if (std::filesystem::is_directory(a.store, ec))
      throw InputError(a.store, 0, "--store", "is a folder, not a sample store: give a file's path");
    // An empty file is no store yet: the run makes it one, as it makes a missing file.
    if (std::filesystem::exists(a.store, ec) && std::filesystem::file_size(a.store, ec) > 0 && !ec) {
      SampleStore existing(a.store, SampleStore::Open::kExisting);
      for (const auto& r : existing.trials())
        if (r.status == TrialStatus::kOk || !a.retry_failed) done.insert(r.key);
    }
    std::vector<TrialKey> left;
    for (const auto& k : order)
      if (!done.count(k)) left.push_back(k);
    const bool together = opts.time_batches_together && opts.time_template && opts.time_template->uses("batches");
    std::map<int, std::vector<int>> timed_together;  // workers -> batches
    for (const auto& k : left)
      if (together && k.epochs == 0) timed_together[k.workers].push_back(k.batch);
    if (!crowded.empty())
      std::cerr << fmt::format("warning: {} worker(s) x {} thread(s) exceed this machine's {} CPUs: those trials "
                               "would measure contention as much as the program\n",
                               fmt::join(crowded, ","), a.threads_per_worker, allowed_cpus().size());
    // Each launch the run would make, once; printed as JSON or as text.
    nlohmann::json launches = nlohmann::json::array();
    std::vector<std::string> lines;
    std::set<int> shown;
    for (const auto& k : left) {
      if (together && k.epochs == 0) {
        if (!shown.insert(k.workers).second) continue;
        const auto& batches = timed_together.at(k.workers);
        const std::string command = plan_launch(*opts.time_template, k, opts.launch, 29500, batches).display;
        launches.push_back({{"kind", "time"}, {"batches", batches}, {"workers", k.workers}, {"command", command}});
        lines.push_back(fmt::format("time b in {{{}}} r={}\t{}", fmt::join(batches, ","), k.workers, command));
        continue;
      }
      const std::string command = plan_launch(k.epochs == 0 ? *opts.time_template : tmpl, k, opts.launch, 29500).display;
      launches.push_back({{"kind", k.epochs == 0 ? "time" : "training"},
                          {"batch", k.batch},
                          {"workers", k.workers},
                          {"epochs", k.epochs},
                          {"command", command}});
      lines.push_back(fmt::format("{}\t{}", to_string(k), command));
    }
    if (a.json) {
      nlohmann::json j = {{"store", a.store},
                          {"trials", left.size()},
                          {"already_done", order.size() - left.size()},
                          {"order", opts.budget_s ? "budget priority" : "grid"},
                          {"launches", launches}};
      if (opts.budget_s) j["budget_s"] = *opts.budget_s;
      if (!crowded.empty()) j["oversubscribed_workers"] = crowded;
      std::cout << io::json_text(j) << "\n";
      return kExitOk;
    }
    fmt::print("# {} trials ({} order){}{}\n", left.size(), opts.budget_s ? "budget priority" : "grid",
               done.empty() ? "" : fmt::format("; {} of {} already in {}", order.size() - left.size(), order.size(), a.store),
               opts.budget_s ? fmt::format("; run while the estimated cost fits {}", format_duration(*opts.budget_s)) : "");
    for (const auto& line : lines) fmt::print("{}\n", line);
    return kExitOk;
  }

  // Before the trials, not after them.
  io::check_output_path(a.out, "--out",
                        {{a.store, "--store"}, {profile::live_log_path(a.store), "--store's live log"}});
  if (opts.launch.kind == LauncherKind::kSlurm) {
    check_slurm_reachable();
    if (a.hardware.empty())
      std::cerr << "note: --launcher slurm without --hardware: the trials run on the cluster's nodes, not on this "
                   "host, so a new store labels the samples' hardware 'Slurm nodes (unnamed: --hardware names them)'; "
                   "--hardware NAME names them\n";
  }
  SampleStore store(a.store);
  store.lock_for_profiling();
  bind_store(store, text, !a.workload.empty() ? a.workload : a.name.empty() ? "custom" : a.name, opts.launch,
             a.hardware, opts.time_template ? opts.time_template->text() : "");
  opts.cancel = &install_interrupt_handler();
  Progress progress(stderr, stderr_is_tty(), a.quiet);
  if (!crowded.empty())
    progress.note(fmt::format("warning: {} worker(s) x {} thread(s) exceed this machine's {} CPUs: those trials "
                              "measure contention as much as the program (recorded as oversubscribed)",
                              fmt::join(crowded, ","), a.threads_per_worker, allowed_cpus().size()));
  LiveLog live(live_log_path(a.store));
  opts.live_log = &live;
  progress.note(fmt::format("profiling {} planned trials ({}), store {}{}", order.size(),
                            fmt::format("b in {{{}}} x r in {{{}}} x e in {{{}}}", fmt::join(grid.batches, ","),
                                        fmt::join(grid.workers, ","), fmt::join(grid.epochs, ",")),
                            a.store, opts.budget_s ? ", budget " + format_duration(*opts.budget_s) : ""));
  progress.note(fmt::format("follow the running trial: {} watch --store {} --target METRIC", program_path(),
                            shell_word(a.store)));
  // The built-in trainer's runs fork from one loaded trainer (no libtorch load per launch).
  std::optional<TrainerForkServer> forks;
  if (!a.workload.empty() && opts.launch.kind == LauncherKind::kLocal) {
    forks.emplace(builtin.trainer);
    opts.launch.wrap = forks->wrap();
  }
  ProfileSummary s = run_profile(tmpl, order, store, opts, progress);
  forks.reset();
  if (!s.store_error.empty()) {
    std::string resume = program_path();
    for (const auto& w : a.argv) resume += " " + shell_word(w);
    throw ExternalError(fmt::format("{}; the trials stored before it are kept, and once the store can be written "
                                    "again (free some space), resume with:\n  {}",
                                    s.store_error, resume));
  }

  // The records of this plan, from the store (this run's and earlier runs').
  std::vector<TrialRecord> records;
  int not_ok = 0;
  for (const auto& k : order)
    if (auto r = store.find(k)) {
      records.push_back(*r);
      if (r->status != TrialStatus::kOk) ++not_ok;
    }
  std::cerr << fmt::format("ran {} trials in {}: {} ok, {} failed, {} timeout, {} bad-output", s.ran,
                           format_duration(s.wall_s), s.ok, s.failed, s.timeout, s.bad_output);
  if (s.already_done) std::cerr << fmt::format("; {} already in the store", s.already_done);
  if (s.over_budget) std::cerr << fmt::format("; {} left out to keep within the budget", s.over_budget);
  std::cerr << "\n";
  for (const auto& r : records)
    if (r.status == TrialStatus::kOk && !r.note.empty())
      std::cerr << fmt::format("  {}: note: {}\n", to_string(r.key), r.note);
  if (auto line = probe_range_line(records); !line.empty()) std::cerr << line << "\n";
  for (const auto& r : records) {
    if (r.status == TrialStatus::kOk) continue;
    std::cerr << fmt::format("  {}: {}: {}", to_string(r.key), to_string(r.status), r.reason);
    if (auto l = stderr_last_line(r.stderr_tail); !l.empty()) std::cerr << fmt::format("\n      stderr: {}", l);
    std::cerr << "\n";
  }
  if (not_ok > 0)
    std::cerr << fmt::format("  (full stderr tails: trainplan samples list --store {} --failed; rerun them with --retry-failed)\n",
                             shell_word(a.store));
  if (!a.out.empty()) {
    // Again: another profile may have made a store of that path while these trials ran.
    io::check_output_path(a.out, "--out",
                          {{a.store, "--store"}, {profile::live_log_path(a.store), "--store's live log"}});
    SampleSet set = store.samples();
    // A file of a header alone is one no verb reads (samples export refuses to write one).
    if (set.empty()) {
      std::cerr << fmt::format("no ok trial in {}: {} not written\n", a.store, a.out);
    } else {
      io::write_samples_csv(a.out, set);
      std::cerr << fmt::format("wrote {} samples to {}\n", set.size(), a.out);
    }
  }
  if (a.json) {
    nlohmann::json j = {{"store", a.store},        {"planned", s.planned},     {"already_done", s.already_done},
                        {"ran", s.ran},            {"ok", s.ok},               {"failed", s.failed},
                        {"timeout", s.timeout},    {"bad_output", s.bad_output}, {"over_budget", s.over_budget},
                        {"interrupted", s.interrupted}, {"wall_s", s.wall_s}};
    j["trials"] = nlohmann::json::array();
    for (const auto& r : records) j["trials"].push_back(record_json(r));
    std::cout << io::json_text(j) << "\n";
  }
  if (s.interrupted) {
    std::string resume = program_path();
    for (const auto& w : a.argv) resume += " " + shell_word(w);
    const auto kept = store.trials();
    const auto ok = std::count_if(kept.begin(), kept.end(), [](const TrialRecord& r) { return r.status == TrialStatus::kOk; });
    std::cerr << fmt::format("interrupted: a trial still running was killed and is not kept; {} keeps {} finished "
                             "trial{} ({} ok).\nresume with:\n  {}\n",
                             a.store, kept.size(), kept.size() == 1 ? "" : "s", ok, resume);
    return 130;
  }
  return not_ok > 0 ? kExitFailure : kExitOk;
}

void setup(CLI::App& root) {
  auto args = std::make_shared<ProfileArgs>();
  auto* cmd = root.add_subcommand(
      "profile",
      "Run short training trials over a sampling plan and store each result (crash-safe SQLite; resumable)");
  cmd->footer(
      "The program prints one JSON line per epoch on rank 0's stdout:\n"
      "  {\"event\":\"epoch\",\"epoch\":1,\"epoch_time_s\":2.5,\"metric\":0.91,\"metric_name\":\"accuracy\"}\n"
      "A template with {rank} is started once per rank (r processes); one without {rank} is started\n"
      "once per trial as a launcher (torchrun, mpirun) that starts the ranks itself.\n"
      "Placeholders: {batch} {workers} {epochs} {rank} {master_port} {master_addr} {nodes}; for a\n"
      "transformer's layout also {tp} {pp} {dp} {micro_batch} {global_batch} (see `trainplan llm profile`).\n"
      "Write {{ and }} for literal braces (a JSON line printed by the command itself).\n"
      "A trial that exits non-zero, outlives --trial-timeout or prints no valid JSON is recorded with\n"
      "its reason and stderr tail, and the run goes on. Rerunning the same command resumes: trials\n"
      "already in the store are skipped. Ctrl-C kills the running trial and keeps the finished ones.\n"
      "Exit: 0 every planned trial ok, 1 some trial not ok, 2 bad input, 130 interrupted.\n\n"
      "Examples:\n"
      "  trainplan profile --workload lenet-mnist --train-subset 6000 --store lenet.db\n"
      "  trainplan profile --cmd 'python train.py --bs {batch} --world {workers} --rank {rank} --epochs {epochs}\n"
      "      --port {master_port}' --workers 1,2 --batches 32,64,128 --epochs 1,3 --budget 10m\n"
      "  trainplan profile --workload lenet-mnist --launcher slurm --store lenet.db\n"
      "  trainplan samples export --store lenet.db -o lenet.csv");
  auto* c = cmd->add_option("--cmd", args->cmd, "Command template of the training program (see below)");
  auto* w = cmd->add_option("--workload", args->workload,
                            "Built-in workload run by trainplan-train: lenet-mnist or mlp-fashion (instead of --cmd)");
  c->excludes(w);
  cmd->add_option("--trainer", args->trainer, "Path of trainplan-train (default: next to trainplan, else on PATH)");
  cmd->add_option("--data-dir", args->data_dir, "--workload: dataset directory (default: the trainer's)");
  // Options of the built-in workloads only: with --cmd they would be ignored without a word.
  c->excludes(cmd->add_option("--train-subset", args->train_subset,
                              "--workload: train on the first N images only (0: all); shorter trials"));
  c->excludes(cmd->add_option("--test-subset", args->test_subset,
                              "--workload: evaluate on the first N test images only (0: all); shorter trials, noisier "
                              "metric"));
  cmd->add_option("--seed", args->seed, "--workload: random seed")->capture_default_str()->check(seed_number());
  cmd->add_option("--store", args->store, "SQLite sample store; created if missing, resumed if present")
      ->capture_default_str();
  cmd->add_option("--launcher", args->launcher, "local (processes on this machine) or slurm (one srun per trial)")
      ->capture_default_str();
  cmd->add_option("--srun-arg", args->srun_args, "Extra srun argument, e.g. --srun-arg=--partition=debug (repeatable)");
  cmd->add_option("--master-addr", args->master_addr, "Rendezvous address for {master_addr}")->capture_default_str();
  cmd->add_option("--workers-per-node", args->workers_per_node, "Workers per node, for {nodes} (0: one node)")
      ->capture_default_str();
  auto* grid_batches = cmd->add_option("--batches", args->batches, "Per-worker batches to try")->capture_default_str();
  auto* grid_workers = cmd->add_option("--workers", args->workers,
                                       "Worker counts to try [default: 1,2, leaving out counts that would need more "
                                       "CPUs than this machine has]");
  auto* grid_epochs = cmd->add_option("--epochs", args->epochs, "Epoch counts to try")->capture_default_str();
  cmd->add_flag("--paper-grid", args->paper_grid,
                "The paper's plan instead: r=1..8, 10 batches over [16,256], epochs 1,20,40 (240 trials)")
      ->excludes(grid_batches)
      ->excludes(grid_workers)
      ->excludes(grid_epochs);
  cmd->add_option("--budget", args->budget,
                  "Time budget (e.g. 180s, 10m): run the plan in priority order (corners of (b,r) first, then the\n"
                  "epoch axis, then the farthest remaining point) and skip trials whose estimated cost no longer fits");
  cmd->add_option("--trial-timeout,--timeout", args->trial_timeout, "Kill a trial running longer than this (under Slurm: counted from when its job left the queue, "
                  "and the queue's wait bounded by as much)")->capture_default_str();
  cmd->add_flag("--retry-failed", args->retry_failed, "Rerun trials recorded as failed, timeout or bad-output");
  cmd->add_flag("--dry-run", args->dry_run, "Print the planned trials and their commands; run nothing");
  cmd->add_option("--timing", args->timing,
                  "How epoch time is measured. steps: a time trial per (batch, workers) first (warm-up, then "
                  "steady-state steps until the median is known to +-2%, repeated), and epoch time = steps per "
                  "epoch x median step time + per-epoch overhead; epochs: the mean of the trials' epoch times. "
                  "auto: steps for a built-in --workload or with --time-cmd, else epochs")
      ->capture_default_str();
  cmd->add_option("--step-clock", args->step_clock,
                  "How a step is timed: cpu (the step's CPU time, from step_cpu_median_s: what other processes on a "
                  "busy machine barely change; it leaves out waiting, for peers in the all-reduce too, so it "
                  "stands for wall time only for CPU training by one worker with one thread), wall, or auto (cpu "
                  "for one worker where a line says device cpu and threads 1, else wall)")
      ->capture_default_str();
  cmd->add_option("--time-cmd", args->time_cmd,
                  "With --cmd: the template of a time trial, which prints one "
                  "{\"event\":\"step_timing\",\"step_time_median_s\":...,\"steps_per_epoch\":...} line "
                  "(docs/PROFILING.md)");
  cmd->add_option("--time-trial-s", args->time_trial_s,
                  "With --workload: seconds of timed steps per batch in a time-trial run at most (each batch runs "
                  "until its median is known to +-2%, or the trainer's step cap, or this; 0: no limit in seconds). "
                  "Bounds what noisy or oversubscribed cells cost, whose medians may never come within +-2%")
      ->capture_default_str()
      ->check(number_within(0, 3600));
  add_time_repeats_option(cmd, args->time_repeats, args->repeats_back_to_back, args->time_batches_apart);
  cmd->add_option("--threads-per-worker", args->threads_per_worker,
                  "CPU threads each worker uses (--workload passes it to the trainer): the oversubscription check "
                  "and the pinning")
      ->capture_default_str()
      ->check(CLI::Range(1, 1024));
  cmd->add_flag("--no-pin", args->no_pin,
                "Do not pin each local rank to its own CPUs (pinning is skipped anyway when they do not fit)");
  cmd->add_option("--hardware", args->hardware,
                  "What the trials run on, for the samples' hardware column [default: this machine's CPU, and its "
                  "GPUs when the NVIDIA driver lists any; with --launcher slurm, 'Slurm nodes (unnamed ...)']");
  cmd->add_option("--name", args->name, "With --cmd: the workload's name in the samples' model column [default: custom]");
  cmd->add_option("-o,--out", args->out, "Also write the store's samples to this CSV at the end");
  cmd->add_flag("--json", args->json, "Print a JSON summary with every planned trial's record on stdout");
  cmd->add_flag("-q,--quiet", args->quiet, "No progress output");
  cmd->callback([args, cmd] {
    args->argv = {"profile"};
    for (const auto* opt : cmd->get_options()) {
      if (opt->count() == 0 || opt->get_name() == "--help") continue;
      std::string first = opt->get_name();
      if (opt->get_type_size() == 0 || opt->get_expected_max() == 0) {  // a flag: no value to repeat
        args->argv.push_back(first);
      } else {
        for (const auto& v : opt->results()) {
          args->argv.push_back(first);
          args->argv.push_back(v);
        }
      }
    }
    int rc = run_profile_cmd(*args);
    // main() knows no other exit codes than its own; every resource is closed by now.
    if (rc != 0) {
      std::cout.flush();
      std::exit(rc);
    }
  });
}

CommandRegistrar reg(40, setup);

}  // namespace
}  // namespace trainplan::cli
