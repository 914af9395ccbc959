// The profiling run: for each planned trial not yet in the store, launch
// it, read rank 0's JSON lines, and commit the result to the store at once.
// A trial that fails, hangs past its timeout or prints no valid JSON is
// recorded with its reason and stderr tail; the run goes on.
#pragma once
#include <atomic>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "profile/command_template.h"
#include "profile/launcher.h"
#include "profile/live_log.h"
#include "profile/progress.h"
#include "profile/sample_store.h"
#include "profile/trial.h"

namespace trainplan::profile {

struct ProfileOptions {
  LaunchSettings launch;
  double trial_timeout_s = 600;
  // The option trial_timeout_s came from, for a timed-out trial's reason (a --budget sets it where
  // no --trial-timeout is given). Default: "--trial-timeout".
  std::string trial_timeout_from = "--trial-timeout";
  // Seconds a trial's processes may run on after rank 0 printed
  // {"event":"done"}: then they are ended and the trial judged on what it
  // printed, with a note (a hang in teardown, common in distributed
  // programs, would otherwise hold the trial to its timeout and lose it).
  double done_grace_s = 10;
  std::optional<double> budget_s;  // set: run trials in order while estimated cost fits
  bool retry_failed = false;       // rerun trials recorded as failed/timeout/bad-output
  const std::atomic<bool>* cancel = nullptr;
  // Time trials (TrialKey::epochs == 0) run this template, which prints one
  // step_timing line; unset: a plan with time trials is an error.
  std::optional<CommandTemplate> time_template;
  int time_repeats = 2;            // runs of each time trial
  // run_profile takes the first run of each of a run of consecutive time
  // trials in one round before their further repeats, so that a slow spell
  // of the host shorter than the round reaches one repeat of a configuration,
  // not all of them. In budget mode a round stops at the first trial whose
  // estimated cost no longer fits.
  bool time_rounds = true;
  // Where time_template takes {batches}: the consecutive time trials of one
  // worker count run together, each run of the program timing all their
  // batches in turn (one step_timing line for each), so that a change of the
  // machine's speed between runs moves all of a worker count's batches alike
  // (docs/lab/PROFILING-NOISE.md). Each such run is one repeat of each of its
  // trials; a further run of the whole group settles repeats that disagree.
  // In budget mode the group holds the trials whose estimates fit, in order.
  bool time_batches_together = true;
  double repeat_tolerance = 0.05;  // repeats' medians further apart (relative): run once more, note interference
  int threads_per_worker = 1;      // CPU threads each rank uses: the oversubscription check and pinning
  bool pin = true;                 // local launcher, a process per rank: pin each to its own CPUs
  StepClock step_clock = StepClock::kAuto;  // which step fields time a step (profile/trial.h)
  // A training trial's epoch time is the mean of its epochs' wall times even
  // where its lines carry step fields (`profile --timing epochs`): the step
  // timing is kept for its notes, with no steps per epoch, so no sample
  // takes its epoch time from it.
  bool epoch_times_from_epochs = false;
  // Where run_profile writes what the running trial prints as it prints it
  // (profile/live_log.h); null: nowhere.
  LiveLog* live_log = nullptr;
};

struct ProfileSummary {
  int planned = 0;
  int already_done = 0;  // skipped: already in the store
  int ran = 0;
  int ok = 0, failed = 0, timeout = 0, bad_output = 0;
  int over_budget = 0;   // planned trials left out to respect the budget
  bool interrupted = false;
  // Why the last trial could not be stored (a full disk, a store made read-
  // only); the run stopped there, the trials stored before it kept.
  std::string store_error;
  double wall_s = 0;
  double estimated_s = 0;  // budget mode: sum of the estimates of the trials run
};

// Records in the store what produced its trials (template, time template,
// workload, launcher, workers a node, hardware: `hardware`, or this host's
// description when empty), or, when the store already holds trials made
// with another of them, throws InputError naming the option: mixing two
// programs' samples, or relabelling trials already measured, would be wrong.
void bind_store(SampleStore& store, const std::string& template_text, const std::string& workload,
                const LaunchSettings& launch, const std::string& hardware = "",
                const std::string& time_template_text = "");

// Runs one trial (no store, no progress); the building block of run_profile.
// A time trial (key.epochs == 0) runs opts.time_template opts.time_repeats
// times (once more when their medians differ by more than
// opts.repeat_tolerance) and keeps the lowest median: interference only ever
// adds time. nullopt when opts.cancel stopped it (nothing is known about that trial).
std::optional<TrialRecord> run_trial(const CommandTemplate& tmpl, const TrialKey& key, const ProfileOptions& opts,
                      const std::function<void(double)>& on_tick = {});

// Runs `order` (grid order, or budget priority order when opts.budget_s is set).
// With opts.time_rounds, consecutive time trials of `order` first run once
// each, in order, and then each takes its further repeats when its turn comes;
// a trial is stored, with all its runs, at its turn. With
// opts.time_batches_together (and a template that takes {batches}), those
// trials' runs are runs of their worker count's group, in rounds of one run
// of each group when opts.time_rounds is set.
ProfileSummary run_profile(const CommandTemplate& tmpl, const std::vector<TrialKey>& order, SampleStore& store,
                           const ProfileOptions& opts, Progress& progress);

}  // namespace trainplan::profile
