#include "profile/profiler.h"

#include <fmt/format.h>

#include <chrono>

#include "core/error.h"
#include "profile/host_info.h"
#include "profile/process_group.h"
#include "profile/profile_plan.h"

namespace trainplan::profile {

void bind_store(SampleStore& store, const std::string& template_text, const std::string& workload,
                const LaunchSettings& launch) {
  auto old = store.meta("command_template");
  if (old && *old != template_text && !store.trials().empty())
    throw InputError(store.path(), 0, "",
                     fmt::format("this store holds trials of another command:\n  {}\nnot of:\n  {}\n"
                                 "use another --store (mixing two programs' samples would be wrong)",
                                 *old, template_text));
  store.set_meta("command_template", template_text);
  store.set_meta("workload", workload);
  store.set_meta("launcher", to_string(launch.kind));
  store.set_meta("workers_per_node", std::to_string(launch.workers_per_node));
  store.set_meta("hardware", host_description());
}

std::optional<TrialRecord> run_trial(const CommandTemplate& tmpl, const TrialKey& key, const ProfileOptions& opts,
                                     const std::function<void(double)>& on_tick) {
  TrialRecord rec;
  rec.key = key;
  LaunchPlan lp = plan_launch(tmpl, key, opts.launch, free_loopback_port());
  rec.command = lp.display;
  rec.started_at = utc_now();
  ProcessGroupOptions po;
  po.timeout_s = opts.trial_timeout_s;
  po.cancel = opts.cancel;
  po.on_tick = on_tick;
  ProcessGroupResult pr = run_process_group(lp.commands, po);
  rec.finished_at = utc_now();
  rec.wall_s = pr.wall_s;
  rec.stderr_tail = pr.stderr_tail;
  if (pr.cancelled) return std::nullopt;

  TrialOutput out = parse_trial_output(lp.label_filter ? rank0_lines(pr.stdout0) : pr.stdout0);
  rec.epoch_time_s = out.mean_epoch_time_s;
  rec.metric = out.last_metric;
  rec.epoch_metrics = out.epoch_metrics;
  rec.metric_name = out.metric_name;
  rec.epochs_reported = out.epochs_reported;
  rec.dataset_size = out.dataset_size;
  if (pr.timed_out) {
    rec.status = TrialStatus::kTimeout;
    rec.reason = fmt::format("still running after {:g} s (--trial-timeout); killed its process group",
                             opts.trial_timeout_s);
  } else if (pr.failed_index >= 0) {
    rec.status = TrialStatus::kFailed;
    std::string who = lp.commands.size() > 1 ? fmt::format("rank {}", pr.failed_index) : "the command";
    rec.reason = pr.exit_code > 128 ? fmt::format("{} was killed by signal {}", who, pr.exit_code - 128)
                                    : fmt::format("{} exited with status {}", who, pr.exit_code);
    if (pr.exit_code == 127) rec.reason += " (command not found?)";
  } else if (!out.problem.empty()) {
    rec.status = TrialStatus::kBadOutput;
    rec.reason = out.problem;
  } else if (out.epochs_reported != key.epochs) {
    rec.status = TrialStatus::kBadOutput;
    rec.reason = fmt::format("reported {} epoch line(s) but {} epochs were asked for (does the command use {{epochs}}?)",
                             out.epochs_reported, key.epochs);
  } else {
    rec.status = TrialStatus::kOk;
  }
  return rec;
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
  for (const auto& r : store.trials()) est.add(r);
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

  int k = 0;
  for (size_t i = 0; i < pending.size(); ++i) {
    if (opts.cancel && opts.cancel->load()) {
      sum.interrupted = true;
      break;
    }
    const TrialKey& key = pending[i];
    auto cost = est.estimate(key);
    if (opts.budget_s && cost && elapsed() + *cost > *opts.budget_s) {
      ++sum.over_budget;
      continue;
    }
    auto [left_n, eta] = projection(i);
    ++k;
    progress.start(k, k - 1 + left_n, key, elapsed(), eta);
    auto rec = run_trial(tmpl, key, opts, [&](double te) { progress.tick(te, elapsed()); });
    if (!rec) {
      sum.interrupted = true;
      break;
    }
    store.put(*rec);
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
  }
  progress.done();
  sum.wall_s = elapsed();
  return sum;
}

}  // namespace trainplan::profile
