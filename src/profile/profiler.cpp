#include "profile/profiler.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <limits>
#include <map>
#include <optional>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/median.h"
#include "core/valid_utf8.h"
#include "profile/host_info.h"
#include "profile/machine_probe.h"
#include "profile/process_group.h"
#include "profile/profile_plan.h"
#include "profile/trial_log_line.h"

namespace trainplan::profile {

namespace {

// The label of samples measured by Slurm on nodes --hardware did not name:
// this host's processor is not theirs.
constexpr const char* kUnnamedSlurmNodes = "Slurm nodes (unnamed: --hardware names them)";

// The samples' hardware when --hardware is not given: this host's processor
// where the trials run here; under Slurm the nodes', which this host cannot
// name, unless the store already holds trials under a label of its own
// (one written before, this host's: kept, so that the store resumes).
std::string default_hardware_label(const SampleStore& store, const LaunchSettings& launch) {
  if (launch.kind != LauncherKind::kSlurm) return valid_utf8(host_description());
  if (auto was = store.meta("hardware"); was && !store.trials().empty()) return *was;
  return kUnnamedSlurmNodes;
}

// --srun-arg's words as a store label (a partition or GPU request changes
// what a trial measures).
std::string srun_args_text(const std::vector<std::string>& args) {
  std::string out;
  for (const auto& a : args) out += (out.empty() ? "" : " ") + shell_word(a);
  return out;
}

}  // namespace

void bind_store(SampleStore& store, const std::string& template_text, const std::string& workload,
                const LaunchSettings& launch, const std::string& hardware, const std::string& time_template_text) {
  auto old = store.meta("command_template");
  const auto trials = store.trials();
  const bool has_trials = !trials.empty();
  const bool any_ok = std::any_of(trials.begin(), trials.end(), [](const TrialRecord& t) { return t.status == TrialStatus::kOk; });
  if (old && *old != template_text && has_trials)
    throw InputError(store.path(), 0, "",
                     fmt::format("this store holds trials of another command:\n  {}\nnot of:\n  {}\n{}",
                                 *old, template_text,
                                 any_ok ? "use another --store (mixing two programs' samples would be wrong)"
                                        : fmt::format("none of its {} trial(s) ran ok, so it holds no sample: "
                                                      "remove it ({}) to start again with this command, or use "
                                                      "another --store",
                                                      trials.size(), shell_word(store.path()))));
  // The labels are the store's, not each trial's: a run that gave others would relabel the trials
  // already there (their model, machine or nodes), or mix two time commands' measurements.
  struct Label {
    const char* key;
    std::string value;
    const char* option;
  };
  const Label labels[] = {{"time_command_template", time_template_text, "--time-cmd"},
                          {"workload", workload, "--name"},
                          {"launcher", to_string(launch.kind), "--launcher"},
                          {"workers_per_node", std::to_string(launch.workers_per_node), "--workers-per-node"},
                          {"srun_args", srun_args_text(launch.srun_args), "--srun-arg"},
                          {"hardware", !hardware.empty() ? hardware : default_hardware_label(store, launch),
                           "--hardware"}};
  // The workload's and the machine's names label every sample and JSON answer: text, not bytes.
  for (const auto& [value, option] : {std::pair{&workload, "--name"}, std::pair{&hardware, "--hardware"}})
    if (valid_utf8(*value) != *value)
      throw InputError("", 0, option, "is not valid UTF-8 text: give the label in UTF-8");
  for (const Label& l : labels)
    if (auto was = store.meta(l.key); was && *was != l.value && has_trials)
      throw InputError(store.path(), 0, l.option,
                       fmt::format("this store's trials were measured with {} '{}', not '{}': give it as they were, "
                                   "or use another --store (relabelling its trials would be wrong)",
                                   l.key, *was, l.value));
  store.set_meta("command_template", template_text);
  for (const Label& l : labels) store.set_meta(l.key, l.value);
}

namespace {

// `note` appended to a trial's notes, "; " between them.
void append_note(std::string& notes, const std::string& note) { notes += (notes.empty() ? "" : "; ") + note; }

// One launch of a trial's processes and what rank 0 printed.
struct Launched {
  LaunchPlan plan;
  ProcessGroupResult result;
  TrialOutput output;
  size_t stdout_cap_bytes = 0;  // what of rank 0's JSON lines was kept at most
};

// Watches rank 0's protocol lines for {"event":"done"} and, once `grace_s`
// have passed since, sets end() for the process group (ProcessGroupOptions::end).
class DoneWatch {
 public:
  explicit DoneWatch(double grace_s) : grace_s_(grace_s) {}

  // A whole line the process group kept of rank 0's (ProcessGroupOptions::on_json_line0;
  // srun's label, if any, is a prefix the protocol reads past).
  void line(const std::string& line) {
    if (done_at_ || line.find("done") == std::string::npos) return;
    const size_t start = protocol_object_start(line);
    if (start == std::string::npos) return;
    std::vector<std::string> nonfinite;
    const auto j = parse_protocol_json(line, start, nonfinite);
    if (j.is_object() && j.value("event", nlohmann::json()) == "done") done_at_ = std::chrono::steady_clock::now();
  }

  // Called about once a second while the group runs.
  void tick() {
    if (done_at_ && std::chrono::duration<double>(std::chrono::steady_clock::now() - *done_at_).count() >= grace_s_)
      end_ = true;
  }

  const std::atomic<bool>* end() const { return &end_; }

 private:
  double grace_s_;
  std::optional<std::chrono::steady_clock::time_point> done_at_;
  std::atomic<bool> end_{false};
};

// `follow`: what rank 0 prints goes to opts.live_log as it prints it.
// `batches`: {batches} (empty: key.batch).
Launched launch_once(const CommandTemplate& tmpl, const TrialKey& key, const ProfileOptions& opts,
                     const std::function<void(double)>& on_tick, bool follow = true,
                     const std::vector<int>& batches = {}) {
  Launched l;
  l.plan = plan_launch(tmpl, key, opts.launch, free_loopback_port(), batches);
  ProcessGroupOptions po;
  po.timeout_s = opts.trial_timeout_s;
  po.timeout_restarts_at = l.plan.timeout_restarts_at;
  po.cancel = opts.cancel;
  const bool labelled = l.plan.label_filter;
  DoneWatch done(opts.done_grace_s);
  po.end = done.end();
  po.on_tick = [&](double elapsed_s) {
    done.tick();
    if (on_tick) on_tick(elapsed_s);
  };
  po.on_json_line0 = [&done](const std::string& line) { done.line(line); };
  if (opts.live_log && follow)
    po.on_stdout0 = [&opts, labelled](const char* data, size_t n) { opts.live_log->output(data, n, labelled); };
  if (opts.pin && opts.launch.kind == LauncherKind::kLocal && l.plan.commands.size() == size_t(key.workers))
    po.cpus = pin_plan(key.workers, opts.threads_per_worker);
  po.stdout_json_lines_only = true;
  po.stdout_rank0_labelled_only = labelled;
  l.stdout_cap_bytes = po.stdout_max_bytes;
  l.result = run_process_group(l.plan.commands, po);
  const std::string& out = l.result.stdout0;
  l.output = parse_trial_output(l.plan.label_filter ? rank0_lines(out) : out, key.epochs == 0, opts.step_clock,
                                key.workers);
  if (l.result.escaped_killed > 0)
    append_note(l.output.note, fmt::format("killed {} process(es) that had left the trial's process group (setsid or "
                                           "setpgid) and outlived it",
                                           l.result.escaped_killed));
  if (l.result.stdout_truncated) append_note(l.output.note, stdout_truncated_text(l.stdout_cap_bytes));
  if (l.result.ended_on_request)
    append_note(l.output.note, fmt::format("rank 0 printed \"done\", but the processes had not exited {:g} s later: "
                                           "they were ended (a hang in teardown?)",
                                           opts.done_grace_s));
  return l;
}

// Reported epochs may add up to the trial's wall time and a little more (clocks read apart, a
// program that times its epochs on a coarse clock), not to this much more.
constexpr double kEpochsPastWallShare = 1.5;
constexpr double kEpochsPastWallSlackS = 1.0;

// The status and reason of a finished (not cancelled) launch.
void judge(const Launched& l, const TrialKey& key, const ProfileOptions& opts, TrialRecord& rec) {
  const ProcessGroupResult& pr = l.result;
  bool reason_has_note = false;
  if (pr.timed_out) {
    rec.status = TrialStatus::kTimeout;
    rec.reason = fmt::format("still running after {:g} s ({}{}); killed its process group", opts.trial_timeout_s,
                             opts.trial_timeout_from, queued_text(pr.restarted_after_s));
    if (l.plan.label_filter)
      if (auto why = slurm_never_started(pr.stderr_tail)) rec.reason += ": " + *why;
  } else if (pr.failed_index >= 0) {
    rec.status = TrialStatus::kFailed;
    std::string who = l.plan.commands.size() > 1 ? fmt::format("rank {}", pr.failed_index) : "the command";
    rec.reason = pr.exit_code > 128 ? fmt::format("{} was killed by signal {}", who, pr.exit_code - 128)
                                    : fmt::format("{} exited with status {}", who, pr.exit_code);
    if (pr.exit_code == 127) rec.reason += " (command not found?)";
    // srun's own exit says little: its messages name the task and why.
    if (l.plan.label_filter)
      if (auto why = slurm_failure(pr.stderr_tail)) rec.reason = *why;
  } else if (!l.output.problem.empty()) {
    rec.status = TrialStatus::kBadOutput;
    rec.reason = l.output.problem;
  } else if (key.epochs > 0 && l.output.epochs_reported != key.epochs) {
    rec.status = TrialStatus::kBadOutput;
    if (l.output.repeated_epochs > 0) {
      rec.reason = fmt::format("reported {} epoch line(s) but {} epochs were asked for, {} of them repeating an "
                               "epoch number: more than one process prints epoch lines (print them from rank 0 only)",
                               l.output.epochs_reported, key.epochs, l.output.repeated_epochs);
    } else if (l.output.note.empty()) {
      rec.reason = fmt::format("reported {} epoch line(s) but {} epochs were asked for (does the command use "
                               "{{epochs}}?)",
                               l.output.epochs_reported, key.epochs);
    } else {
      rec.reason = fmt::format("reported {} usable epoch line(s) but {} epochs were asked for; {}",
                               l.output.epochs_reported, key.epochs, l.output.note);
      reason_has_note = true;
    }
  } else {
    rec.status = TrialStatus::kOk;
    // Epochs run one after another inside the trial: their times cannot add up to much more than
    // it ran, unless the program reports times it did not take (a replay of another run's log),
    // or writes milliseconds, which would plan a job a thousand times too long. Said, and kept.
    if (const double claimed = l.output.epochs_reported * l.output.mean_epoch_time_s.value_or(0);
        key.epochs > 0 && claimed > kEpochsPastWallShare * pr.wall_s + kEpochsPastWallSlackS)
      append_note(rec.note, fmt::format("the epoch lines' epoch_time_s add up to {:.4g} s, but the whole trial ran "
                                        "{:.3g} s: epoch_time_s is seconds (written in milliseconds?); kept as "
                                        "reported",
                                        claimed, pr.wall_s));
    if (l.output.repeated_epochs > 0)
      rec.note += fmt::format("{}{} epoch line(s) repeat an epoch number: more than one process prints epoch lines "
                              "(print them from rank 0 only), so the curve may mix them",
                              rec.note.empty() ? "" : "; ", l.output.repeated_epochs);
  }
  // Bad output may be lines that were never read (epoch lines past the cap):
  // the reason says so, as an ok trial's note does. A timeout or a failure
  // has its own cause, and keeps the note with its epochs.
  if (pr.stdout_truncated && rec.status == TrialStatus::kBadOutput && !reason_has_note)
    rec.reason += "; " + stdout_truncated_text(l.stdout_cap_bytes);
}

double relative_range(const std::vector<StepTiming>& reps) {
  auto [lo, hi] = std::minmax_element(reps.begin(), reps.end(), [](const StepTiming& a, const StepTiming& b) {
    return a.step_time_s < b.step_time_s;
  });
  return hi->step_time_s / lo->step_time_s - 1;
}

void add_note(TrialRecord& rec, const std::string& note) { append_note(rec.note, note); }

// What an ok training trial reported that a later one may contradict.
struct Reported {
  TrialKey key;
  std::string metric_name;
  std::optional<long> dataset_size;
};

// Keeps `reported` as the store's ok training trials in its order after `rec`
// is put (a key put again moves to the end, as its new seq does).
void remember(std::vector<Reported>& reported, const TrialRecord& rec) {
  std::erase_if(reported, [&](const Reported& r) { return r.key == rec.key; });
  if (rec.key.epochs > 0 && rec.status == TrialStatus::kOk)
    reported.push_back({rec.key, rec.metric_name, rec.dataset_size});
}

// What a training trial reports that an earlier one in the store (`reported`)
// contradicts: another metric, or another training set (training_sets_differ),
// which SampleStore::samples refuses at export; said as the trial ends.
// nullopt when nothing does.
std::optional<std::string> disagreement(const std::vector<Reported>& reported, const TrialRecord& rec) {
  if (rec.key.epochs == 0 || rec.status != TrialStatus::kOk) return std::nullopt;
  for (const auto& t : reported) {
    if (t.key == rec.key) continue;
    if (!rec.metric_name.empty() && !t.metric_name.empty() && t.metric_name != rec.metric_name)
      return fmt::format("{} reported metric '{}' where {} reported '{}': the store's samples cannot be exported "
                         "together; make the command report one metric",
                         to_string(rec.key), rec.metric_name, to_string(t.key), t.metric_name);
    if (rec.dataset_size && t.dataset_size && training_sets_differ(*rec.dataset_size, *t.dataset_size))
      return fmt::format("{} reported a training set of {} where {} reported {}: the store's samples cannot be "
                         "exported together; report the whole training set (not one rank's share) in every trial",
                         to_string(rec.key), *rec.dataset_size, to_string(t.key), *t.dataset_size);
  }
  return std::nullopt;
}

// A note when many steps stood far from the rest.
void note_outliers(TrialRecord& rec) {
  const StepTiming& t = *rec.timing;
  if (t.steps_timed > 0 && t.outliers * 20 > t.steps_timed)
    add_note(rec, fmt::format("interference: {} of {} steps took far longer than the rest", t.outliers, t.steps_timed));
}

// A kept repeat whose 90th percentile step is this many times its 10th gets a
// note: for two lenet-mnist workers on two cores it was 2.1-2.5 at batch 32,
// whose medians moved by 14% from run to run, and 1.3-1.6 at batch 128, whose
// medians repeated within 3%.
constexpr double kWideSteps = 1.8;

// Fills rec from a time trial's repeats: the lowest median (interference only
// ever adds time), its interval, and the spread of the repeats.
void combine_repeats(const std::vector<StepTiming>& reps, double tolerance, TrialRecord& rec) {
  StepTiming t = *std::min_element(reps.begin(), reps.end(), [](const StepTiming& a, const StepTiming& b) {
    return a.step_time_s < b.step_time_s;
  });
  t.repeats.clear();
  const double interval_reached = t.spread;  // the kept repeat's own, before the repeats' range widens it
  long outliers = 0, timed = 0;
  for (const auto& r : reps) t.repeats.push_back(r.step_time_s), outliers += r.outliers, timed += r.steps_timed;
  t.outliers = outliers;
  t.steps_timed = timed;
  const double range = relative_range(reps);
  t.spread = std::max(t.spread, range / 2);
  rec.timing = t;
  rec.epoch_time_s = t.epoch_time_s();
  if (range > tolerance)
    add_note(rec, fmt::format("interference: the {} repeats' median step times differ by {:.0f}%; kept the lowest",
                              reps.size(), 100 * range));
  // The repeat kept stopped at its cap with a wider interval than asked: the
  // figure is usable, and known only to its spread.
  if (t.unconverged)
    add_note(rec, fmt::format("the time trial stopped at its step cap or time limit before its median was known to "
                              "+-{}: its interval reached +-{:.1f}%",
                              t.ci_target > 0 ? fmt::format("{:g}%", 100 * t.ci_target) : std::string("its target"),
                              100 * interval_reached));
  // Steps of two speeds: some steps lose a few ms to something else (two CPU
  // workers on two cores did to Gloo's spinning device loop, which the
  // built-in trainer pauses), and where the share of slow steps is set
  // per run the median jumps between runs (docs/lab/PROFILING-NOISE.md).
  if (t.p10_s > 0 && t.p90_s >= kWideSteps * t.p10_s)
    add_note(rec, fmt::format("wide steps: p10 {:.3g} ms, p90 {:.3g} ms (x{:.1f}); the median moves with the share of "
                              "slow steps from run to run",
                              1e3 * t.p10_s, 1e3 * t.p90_s, t.p90_s / t.p10_s));
  note_outliers(rec);
}

// A time trial's run taken ahead of its turn (ProfileOptions::time_rounds,
// time_batches_together), with the machine probe read before it.
struct EarlyRun {
  std::string started_at;
  double probe_s = 0;
  Launched launched;
  bool together = false;  // one of several batches' run (run_together): its stdout is theirs too
  double run_wall_s = 0;  // the whole run's wall time (launched's is this trial's share of it)
};

EarlyRun run_early(const TrialKey& key, const ProfileOptions& opts) {
  EarlyRun e;
  e.started_at = utc_now();
  e.probe_s = machine_probe_s();
  // The live log gets its lines in the trial's turn (replay_early_lines).
  e.launched = launch_once(*opts.time_template, key, opts, {}, /*follow=*/false);
  return e;
}

// What a run of several batches printed, as a run of `batch` alone would
// have: its step_timing line, or the problem that it printed none.
TrialOutput output_for_batch(const TrialOutput& all, int batch) {
  TrialOutput out = all;
  if (!out.problem.empty()) return out;
  if (auto it = all.step_timing_by_batch.find(batch); it != all.step_timing_by_batch.end()) {
    out.step_timing = it->second;
  } else {
    out.step_timing.reset();
    out.problem = fmt::format("no {{\"event\":\"step_timing\",\"batch\":{},...}} line on stdout (a command given "
                              "{{batches}} must print one for each batch)",
                              batch);
  }
  return out;
}

// One run of the time trials of `workers` at `batches` together: a run of
// each, its share of the wall time, in the batches' order; empty when
// cancelled.
std::vector<EarlyRun> run_together(int workers, const std::vector<int>& batches, const ProfileOptions& opts) {
  EarlyRun all;
  all.started_at = utc_now();
  all.probe_s = machine_probe_s();
  all.launched = launch_once(*opts.time_template, {batches.front(), workers, 0}, opts, {}, /*follow=*/false, batches);
  if (all.launched.result.cancelled) return {};
  all.run_wall_s = all.launched.result.wall_s;
  all.launched.result.wall_s /= double(batches.size());
  std::vector<EarlyRun> runs;
  for (int b : batches) {
    EarlyRun e = all;
    e.together = true;
    e.launched.output = output_for_batch(all.launched.output, b);
    runs.push_back(std::move(e));
  }
  return runs;
}

// What the runs taken ahead of a trial's turn printed, written to the live
// log in that turn: rank 0's lines, and of a run of several batches only
// those of `batch` or naming none (a line naming another batch belongs to
// another trial). Read as the protocol is, NaN included.
void replay_early_lines(LiveLog& live, const std::vector<EarlyRun>& taken, int batch) {
  for (const EarlyRun& e : taken) {
    const std::string& out = e.launched.result.stdout0;
    const std::string text = e.launched.plan.label_filter ? rank0_lines(out) : out;
    std::string kept;
    for (size_t at = 0; at < text.size();) {
      size_t end = text.find('\n', at);
      if (end == std::string::npos) end = text.size();
      const std::string_view line(text.data() + at, end - at);
      at = end + 1;
      if (e.together && line.find('{') != std::string_view::npos) {
        const std::string whole(line);
        std::vector<std::string> nonfinite;
        const auto j = parse_protocol_json(whole, protocol_object_start(whole), nonfinite);
        if (j.is_object() && j.contains("batch") && j["batch"].is_number() && j["batch"] != batch) continue;
      }
      kept.append(line).push_back('\n');
    }
    live.output(kept.data(), kept.size(), /*labelled=*/false);
  }
}

// A prepared run that measured its trial's step time.
const StepTiming* usable_timing(const EarlyRun& e) {
  const ProcessGroupResult& r = e.launched.result;
  if (r.timed_out || r.failed_index >= 0 || !e.launched.output.problem.empty()) return nullptr;
  return e.launched.output.step_timing ? &*e.launched.output.step_timing : nullptr;
}

// `prepared`: runs taken ahead of the trial's turn, used first and all of them.
// `seconds_left`: what is left of the profiling budget; a time trial's repeat
// that its last run says would not fit is not started (the repeats it has stand).
std::optional<TrialRecord> run_trial_after(const CommandTemplate& tmpl, const TrialKey& key,
                                           const ProfileOptions& opts, const std::function<void(double)>& on_tick,
                                           std::vector<EarlyRun> prepared,
                                           double seconds_left = std::numeric_limits<double>::infinity()) {
  const bool time_trial = key.epochs == 0;
  if (time_trial && !opts.time_template)
    throw InputError("", 0, "--timing", "a time trial needs a command that prints step_timing lines");
  TrialRecord rec;
  rec.key = key;
  rec.started_at = prepared.empty() ? utc_now() : prepared.front().started_at;
  if (oversubscribes_locally(opts.launch, key.workers, opts.threads_per_worker)) {
    rec.oversubscribed = true;
    add_note(rec, fmt::format("oversubscribed: {} workers x {} threads on {} CPUs", key.workers,
                              opts.threads_per_worker, allowed_cpus().size()));
  }
  std::vector<StepTiming> reps;
  std::vector<double> probes;
  const int most = time_trial ? std::max(std::max(1, opts.time_repeats) + 1, int(prepared.size())) : 1;
  const auto began = std::chrono::steady_clock::now();
  double last_run_s = 0;
  for (int run = 0; run < most; ++run) {
    const bool taken = size_t(run) < prepared.size();
    if (time_trial && !taken && run >= std::max(1, opts.time_repeats) &&
        (reps.size() < 2 || relative_range(reps) <= opts.repeat_tolerance))
      break;  // the repeats agree: no tie-breaker needed
    if (time_trial && !taken && run >= 1 &&
        std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count() + last_run_s > seconds_left) {
      add_note(rec, fmt::format("{} run(s) of {}: the budget left no time for more", run,
                                std::max(1, opts.time_repeats)));
      break;
    }
    Launched l;
    double run_wall_s = 0;  // what a run of this program took, for the budget's next check
    if (taken) {
      probes.push_back(prepared[size_t(run)].probe_s);
      run_wall_s = prepared[size_t(run)].run_wall_s;
      l = std::move(prepared[size_t(run)].launched);
    } else {
      if (time_trial) probes.push_back(machine_probe_s());
      l = launch_once(time_trial ? *opts.time_template : tmpl, key, opts, on_tick);
    }
    rec.command = l.plan.display;
    rec.wall_s += l.result.wall_s;
    last_run_s = std::max(run_wall_s, l.result.wall_s);
    rec.stderr_tail = l.result.stderr_tail;
    if (l.result.cancelled) return std::nullopt;
    judge(l, key, opts, rec);
    const TrialOutput& out = l.output;
    rec.dataset_size = out.dataset_size;
    // The epochs a trial reported before it failed or was killed are kept
    // with it: the store's samples take them as points of the curve.
    const bool cut_short = rec.status == TrialStatus::kTimeout || rec.status == TrialStatus::kFailed;
    if (!time_trial && out.epochs_reported > 0 && (rec.status == TrialStatus::kOk || cut_short)) {
      rec.epoch_time_s = out.mean_epoch_time_s;
      rec.metric = out.last_metric;
      rec.epoch_metrics = out.epoch_metrics;
      rec.metric_name = out.metric_name;
      rec.epochs_reported = out.epochs_reported;
      rec.timing = out.epoch_steps;
      if (rec.timing && rec.status == TrialStatus::kOk) note_outliers(rec);
      if (rec.timing && opts.epoch_times_from_epochs) rec.timing->steps_per_epoch = 0;
      if (!out.note.empty()) add_note(rec, out.note);
      rec.metric_diverged = out.metric_diverged;
    }
    if (rec.status != TrialStatus::kOk) break;
    if (time_trial) reps.push_back(*out.step_timing);
  }
  if (time_trial && rec.status == TrialStatus::kOk) {
    combine_repeats(reps, opts.repeat_tolerance, rec);
    if (!probes.empty()) rec.timing->probe_s = median(probes);
  }
  rec.finished_at = utc_now();
  return rec;
}

}  // namespace

std::optional<TrialRecord> run_trial(const CommandTemplate& tmpl, const TrialKey& key, const ProfileOptions& opts,
                                     const std::function<void(double)>& on_tick) {
  return run_trial_after(tmpl, key, opts, on_tick, {});
}

namespace {

using Clock = std::chrono::steady_clock;

bool is_done(const std::optional<TrialRecord>& r, bool retry_failed) {
  return r && (r->status == TrialStatus::kOk || !retry_failed);
}

}  // namespace

ProfileSummary run_profile(const CommandTemplate& tmpl, const std::vector<TrialKey>& order, SampleStore& store,
                           const ProfileOptions& opts, Progress& progress) {
  ProfileSummary sum;
  sum.planned = int(order.size());
  CostEstimator est;
  // The store read once here (each key once, in its order), then kept up to date as trials end;
  // taken in whole, as a store of 10^5 trials is read in a second where one refit a trial took minutes.
  std::vector<Reported> reported;
  const std::vector<TrialRecord> stored = store.trials();
  est.add_all(stored);
  for (const auto& r : stored)
    if (r.key.epochs > 0 && r.status == TrialStatus::kOk) reported.push_back({r.key, r.metric_name, r.dataset_size});
  std::vector<TrialKey> pending;
  for (const auto& k : order) {
    if (is_done(store.find(k), opts.retry_failed)) ++sum.already_done;
    else pending.push_back(k);
  }
  if (sum.already_done > 0)
    progress.note(fmt::format("resuming: {} of {} planned trials are already in {}", sum.already_done, sum.planned,
                              store.path()));

  auto t0 = Clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - t0).count(); };
  // The trials still to run from index i on, and their estimated total time.
  // In budget mode only those whose estimate still fits are counted.
  auto projection = [&](size_t from) {
    int n = 0;
    double total = 0;
    double left = opts.budget_s ? *opts.budget_s - elapsed() : 1e300;
    for (size_t i = from; i < pending.size(); ++i) {
      auto c = est.estimate(pending[i]);
      if (opts.budget_s && c && total + *c > left) continue;
      ++n;
      total += c.value_or(0);
    }
    return std::pair<int, std::optional<double>>(n, est.count() ? std::optional<double>(total) : std::nullopt);
  };

  // Runs of the time trials from index i on, while they follow one another,
  // taken when the first of them comes up: the first run of each
  // (time_rounds), or all their runs (time_batches_together).
  std::map<size_t, std::vector<EarlyRun>> early;
  const bool rounds = opts.time_rounds && opts.time_repeats >= 2 && opts.time_template;
  const bool together = opts.time_batches_together && opts.time_template && opts.time_template->uses("batches");
  auto run_together_block = [&](size_t i, size_t end) {
    // The trials whose estimates fit the budget, in order, by worker count.
    std::vector<std::vector<size_t>> groups;
    std::map<int, size_t> group_of;
    double planned = 0;
    size_t count = 0;
    for (size_t j = i; j < end; ++j) {
      auto cost = est.estimate(pending[j]);
      if (opts.budget_s && cost && elapsed() + planned + *cost > *opts.budget_s) break;
      planned += cost.value_or(0);
      auto [it, fresh] = group_of.try_emplace(pending[j].workers, groups.size());
      if (fresh) groups.emplace_back();
      groups[it->second].push_back(j);
      ++count;
    }
    if (count == 0) return true;
    const int repeats = std::max(1, opts.time_repeats);
    progress.note(fmt::format("time trials: the batches of each worker count timed together, {} configurations in {} "
                              "run(s) of {} program(s){}",
                              count, repeats, groups.size(), rounds ? ", in rounds" : ""));
    // With a budget, a group's run is not started where its last run's time would pass it (a
    // first run where the budget is already spent): the estimates that bound the block above
    // know nothing on a fresh store, and a block of repeats ran 6 times a 4 s budget.
    std::map<size_t, double> last_wall;  // by the group's first trial
    auto run_group = [&](const std::vector<size_t>& g) {
      if (opts.cancel && opts.cancel->load()) return false;
      if (opts.budget_s) {
        const auto w = last_wall.find(g.front());
        if (elapsed() + (w == last_wall.end() ? 0.0 : w->second) >= *opts.budget_s) return true;
      }
      std::vector<int> batches;
      for (size_t j : g) batches.push_back(pending[j].batch);
      const int workers = pending[g.front()].workers;
      std::vector<EarlyRun> runs = run_together(workers, batches, opts);
      if (runs.empty()) return false;
      // The run's whole time: run_together gave each trial its share of it.
      const double wall_s = runs.front().launched.result.wall_s * double(g.size());
      last_wall[g.front()] = wall_s;
      for (size_t n = 0; n < g.size(); ++n) early[g[n]].push_back(std::move(runs[n]));
      progress.note(fmt::format("  r={} b in {{{}}}: run {} in {:.1f}s (elapsed {:.0f}s)", workers,
                                fmt::join(batches, ","), early.at(g.front()).size(), wall_s, elapsed()));
      return true;
    };
    // A group whose last run failed is not run again: its trials are recorded so.
    auto failed = [&](const std::vector<size_t>& g) {
      if (!early.count(g.front())) return false;
      return std::none_of(g.begin(), g.end(), [&](size_t j) { return usable_timing(early.at(j).back()) != nullptr; });
    };
    // In rounds, one run of each group a round; else each group's runs in a row.
    if (rounds) {
      for (int r = 0; r < repeats; ++r)
        for (const auto& g : groups)
          if (!failed(g) && !run_group(g)) return false;
    } else {
      for (const auto& g : groups)
        for (int r = 0; r < repeats; ++r)
          if (!failed(g) && !run_group(g)) return false;
    }
    // One more run of a group where the repeats of any of its trials disagree.
    for (const auto& g : groups) {
      bool disagree = false;
      for (size_t j : g) {
        const auto ran = early.find(j);
        if (ran == early.end()) continue;  // never run: the budget was spent first
        std::vector<StepTiming> reps;
        for (const auto& e : ran->second)
          if (const StepTiming* t = usable_timing(e)) reps.push_back(*t);
        disagree = disagree || (reps.size() >= 2 && relative_range(reps) > opts.repeat_tolerance);
      }
      if (disagree && !failed(g) && !run_group(g)) return false;
    }
    return true;
  };
  auto run_first_round = [&](size_t i) {
    size_t end = i;
    while (end < pending.size() && pending[end].epochs == 0) ++end;
    if (together) return run_together_block(i, end);
    if (end - i < 2) return true;
    progress.note(fmt::format("time trials: a first run of each of the next {} configurations, then their other "
                              "runs in turn",
                              end - i));
    for (size_t j = i; j < end; ++j) {
      if (opts.cancel && opts.cancel->load()) return false;
      // A whole trial that would not fit the budget is left to the main loop
      // to skip, and so are the ones after it.
      if (auto cost = est.estimate(pending[j]); opts.budget_s && cost && elapsed() + *cost > *opts.budget_s) break;
      if (opts.budget_s && elapsed() >= *opts.budget_s) break;  // no estimate yet, and the budget spent
      EarlyRun e = run_early(pending[j], opts);
      if (e.launched.result.cancelled) return false;
      early[j].push_back(std::move(e));
    }
    return true;
  };

  int k = 0;
  for (size_t i = 0; i < pending.size(); ++i) {
    if (opts.cancel && opts.cancel->load()) {
      sum.interrupted = true;
      break;
    }
    const TrialKey& key = pending[i];
    if ((rounds || together) && key.epochs == 0 && (i == 0 || pending[i - 1].epochs != 0) && !run_first_round(i)) {
      sum.interrupted = true;
      break;
    }
    auto cost = est.estimate(key);
    // A trial whose first run was taken is finished whatever the budget says.
    if (opts.budget_s && cost && elapsed() + *cost > *opts.budget_s && !early.count(i)) {
      ++sum.over_budget;
      continue;
    }
    auto [left_n, eta] = projection(i);
    ++k;
    // The count is of trials still pending, so it only falls; how many of
    // them fit the budget is an estimate that moves, shown apart.
    const int pending_n = k - 1 + int(pending.size() - i);
    std::optional<int> fit_budget;
    if (opts.budget_s && est.count()) fit_budget = k - 1 + left_n;
    progress.start(k, pending_n, key, elapsed(), eta, fit_budget);
    if (opts.live_log) opts.live_log->trial_start(key);
    std::vector<EarlyRun> taken;
    if (auto it = early.find(i); it != early.end()) taken = std::move(it->second), early.erase(it);
    if (opts.live_log) replay_early_lines(*opts.live_log, taken, key.batch);
    auto rec = run_trial_after(tmpl, key, opts, [&](double te) { progress.tick(te, elapsed()); }, std::move(taken),
                               opts.budget_s ? *opts.budget_s - elapsed() : std::numeric_limits<double>::infinity());
    if (!rec) {
      if (opts.live_log) opts.live_log->trial_end("cancelled");
      sum.interrupted = true;
      break;
    }
    const auto contradicted = disagreement(reported, *rec);
    // The live log says how the trial ended once the store holds it: a
    // follower never reads "ok" for a trial a full disk kept out.
    try {
      store.put(*rec);
    } catch (const std::exception& e) {
      if (opts.live_log) opts.live_log->trial_end("not-stored");
      sum.store_error = fmt::format("the trial {} ran but was not stored: {}", to_string(rec->key), e.what());
      break;
    }
    if (opts.live_log) opts.live_log->trial_end(to_string(rec->status));
    remember(reported, *rec);
    est.add(*rec);
    ++sum.ran;
    if (cost) sum.estimated_s += *cost;
    switch (rec->status) {
      case TrialStatus::kOk: ++sum.ok; break;
      case TrialStatus::kFailed: ++sum.failed; break;
      case TrialStatus::kTimeout: ++sum.timeout; break;
      case TrialStatus::kBadOutput: ++sum.bad_output; break;
    }
    progress.finish(*rec, elapsed(), projection(i + 1).second);
    if (contradicted) progress.note("warning: " + *contradicted);
  }
  progress.done();
  if (opts.live_log) opts.live_log->profile_done(sum.interrupted || !sum.store_error.empty());
  sum.wall_s = elapsed();
  return sum;
}

}  // namespace trainplan::profile
