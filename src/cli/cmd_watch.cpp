// trainplan watch: a live forecast for a job already running. Follows its
// log of the trial protocol's JSON lines (--log FILE, polled as it grows) or
// runs it and reads its stdout (--cmd), or follows a profiling run's trials
// (--store, profile/live_log.h), and after each epoch prints when it
// will meet --target, with an interval, when that will be, and whether
// --deadline holds (app/live_watch.h). --replay DIR judges the forecast on
// the Pollux traces' validation curves instead (experiments/watch_replay.h).
#include <fmt/format.h>
#include <termios.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <optional>
#include <thread>
#include <nlohmann/json.hpp>

#include "app/live_watch.h"
#include "app/watch_chart.h"
#include "cli/command.h"
#include "cli/shared_options.h"
#include "core/error.h"
#include "experiments/watch_replay.h"
#include "io/gnuplot.h"
#include "io/json_text.h"
#include "io/pollux_trace.h"
#include "profile/command_template.h"
#include "profile/launcher.h"
#include "profile/live_log.h"
#include "profile/interrupt.h"
#include "profile/log_follower.h"
#include "profile/sample_store.h"
#include "profile/samples_file.h"
#include "scoring/model_choice.h"

namespace trainplan::cli {
namespace {

// Ctrl-C (or SIGTERM) while watching: a job the watch ran was ended; the exit says by which signal.
[[noreturn]] void interrupted(bool job = true) {
  std::cerr << (job ? "interrupted: the job's process group was sent SIGTERM (SIGKILL after 2 s), and its processes "
                       "that left the group were killed\n"
                    : "interrupted: the chart holds the last forecast\n");
  std::exit(128 + profile::interrupt_signal());
}


// The job ignores SIGTTOU (LogFollower::command), so from its background group it may also
// change the terminal's modes: a prompt that turns echo off and is then stopped by its read.
// The watch puts back the modes it started with when it exits, if it is in the foreground.
int terminal_fd = -1;
termios terminal_at_start{};

void restore_terminal() {
  termios now{};
  if (tcgetpgrp(terminal_fd) != getpgrp() || tcgetattr(terminal_fd, &now) != 0) return;
  const termios& t = terminal_at_start;
  if (now.c_iflag != t.c_iflag || now.c_oflag != t.c_oflag || now.c_cflag != t.c_cflag || now.c_lflag != t.c_lflag)
    tcsetattr(terminal_fd, TCSANOW, &terminal_at_start);
}

void keep_terminal_modes() {
  for (int fd : {STDIN_FILENO, STDERR_FILENO, STDOUT_FILENO})
    if (isatty(fd) && tcgetattr(fd, &terminal_at_start) == 0) {
      terminal_fd = fd;
      std::atexit(restore_terminal);
      return;
    }
}

using nlohmann::json;

struct WatchArgs {
  std::string log, cmd, store, replay, prior, plot;
  std::string samples, metric_model = "global-batch", time_model = "auto";
  int batch = 0, workers = 0;
  std::optional<double> target;
  double deadline_s = 0;
  double stall_s = 300;
  double poll_s = 0.2;
  std::string method = "ensemble", direction;
  double coverage = 0.8;
  bool json_out = false;
};

models::EpochForecasterParams forecaster_params(const WatchArgs& a) {
  models::EpochForecasterParams p;
  auto m = models::parse_forecast_method(a.method);
  if (!m) throw InputError("", 0, "--method", fmt::format("'{}' is not naive, optimus or ensemble", a.method));
  p.method = *m;
  p.coverage = a.coverage;
  return p;
}

void print(const json& u, bool json_out, bool tty) {
  // replace: a warning quotes the log's line, which may not be UTF-8.
  if (json_out) std::cout << io::json_text(u, -1) << std::endl;
  // In text, a warning goes to stderr beside the forecasts on stdout.
  else if (const std::string ev = u.value("event", ""); ev == "warning" || ev == "restarted")
    std::cerr << app::LiveWatch::text(u, 0) << std::endl;
  else std::cout << app::LiveWatch::text(u, tty ? 20 : 0) << std::endl;
}

// --plot: the chart redrawn as forecasts come, at most once a second (a log
// read from its start, or a burst of epochs, would otherwise draw each
// forecast in turn while the job's output waits), and once more for a
// forecast left undrawn when the log goes quiet or the watch ends; the
// update that ends the run (done, ended) is drawn as the run's result. A
// chart that cannot be drawn is said once, and the watch goes on without it.
class ChartWriter {
 public:
  ChartWriter(std::string path, const app::LiveWatch& live) : path_(std::move(path)), live_(live) {}
  void updated() {
    final_.reset();
    pending_ = true;
    draw(false);
  }
  void finished(const json& update) {
    final_ = update;
    pending_ = true;
    draw(true);
  }
  void draw(bool now) {
    if (path_.empty() || !pending_ || failed_) return;
    const auto t = std::chrono::steady_clock::now();
    if (!now && t - last_ < std::chrono::seconds(1)) return;
    pending_ = false;
    last_ = t;
    const auto panels = app::watch_chart(live_, final_ ? &*final_ : nullptr);
    if (panels.empty()) return;
    try {
      io::render_plot(path_, panels, 760, 480);
      if (!said_) std::cerr << fmt::format("chart of the forecast -> {} (redrawn as the run goes on)\n", path_);
      said_ = true;
    } catch (const std::exception& e) {
      std::cerr << "warning: --plot: " << e.what() << "; the watch goes on without its chart\n";
      failed_ = true;
    }
  }

 private:
  std::string path_;
  const app::LiveWatch& live_;
  std::optional<json> final_;
  bool pending_ = false, said_ = false, failed_ = false;
  std::chrono::steady_clock::time_point last_{};
};

// Whether a profile holds the store, or takes it within a second: a profile
// started together with the watch (`profile ... & watch --store ...`) opens
// and locks its store a moment after the watch looks.
bool profile_running_or_starting(const std::string& store) {
  constexpr int kLooks = 20;  // 50 ms apart
  for (int look = 0; look < kLooks; ++look) {
    if (profile::store_being_profiled(store)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

void run_follow(const WatchArgs& a) {
  if (!a.target) throw InputError("", 0, "--target", "required with --log, --cmd or --store");
  std::string log = a.log;
  // watch runs one job as given: a profile template's {batch} would reach the program as text.
  // Not the shell's own ${batch}, nor a literal {{batch}}.
  for (const std::string& name : profile::CommandTemplate::placeholder_names())
    for (size_t at = a.cmd.find("{" + name + "}"); at != std::string::npos; at = a.cmd.find("{" + name + "}", at + 1))
      if (at == 0 || (a.cmd[at - 1] != '{' && a.cmd[at - 1] != '$'))
        throw InputError("", 0, "--cmd",
                         fmt::format("'{{{}}}' is a placeholder of profile's --cmd templates, but watch runs its "
                                     "command as given: write the value in its place",
                                     name));
  if (!log.empty() && std::filesystem::is_directory(log))
    throw InputError(log, 0, "--log", "is a directory: give the job's log file");
  if (!a.store.empty()) {
    if (std::filesystem::is_directory(a.store))
      throw InputError(a.store, 0, "--store", "is a directory: give the profile's store (the file of --store)");
    log = profile::live_log_path(a.store);
    if (std::filesystem::is_directory(log))
      throw InputError(log, 0, "--store", "the store's live log is a directory: it should be the file profile writes");
    // A profile that holds the store makes its live log within moments of locking it.
    if (!std::filesystem::exists(log) &&
        !(profile::store_lock_seen_here(a.store) && profile_running_or_starting(a.store)) &&
        !std::filesystem::exists(log))
      throw InputError(log, 0, "--store",
                       fmt::format("no live log beside the store: is `trainplan profile --store {}` running, or has "
                                   "it run since it started writing one?",
                                   profile::shell_word(a.store)));
  }
  app::WatchOptions o;
  o.target = *a.target;
  if (a.deadline_s > 0) o.deadline_s = a.deadline_s;
  if (!a.direction.empty()) o.direction = parse_direction(a.direction);
  o.forecaster = forecaster_params(a);
  o.source = log.empty() ? "stdout" : log;
  if (!a.prior.empty()) {
    const auto dirs = io::find_pollux_traces(a.prior);
    if (dirs.empty()) throw InputError(a.prior, 0, "--prior", "no Pollux trace directory (with placements.csv) under it");
    o.prior = experiments::replay_calibration_errors(dirs, o.forecaster);
  }
  if (!a.samples.empty()) {
    app::WatchSamples ws;
    ws.samples = profile::read_samples(a.samples);
    ws.metric_model = a.metric_model;
    if (a.time_model == "auto") {
      try {
        ws.time_model = scoring::choose_models("auto", "none", ws.samples).time_model;
      } catch (const InputError& e) {
        throw InputError(a.samples, 0, "--time-model",
                         e.message() + "; name one (e.g. --time-model allreduce-local; `trainplan fit --help` lists them)");
      }
    } else {
      ws.time_model = a.time_model;
    }
    ws.batch = a.batch;
    ws.workers = a.workers;
    // The nodes earlier trials with as many workers spanned; else one.
    for (const auto& s : ws.samples.samples)
      if (s.workers == a.workers && s.nodes > 0) ws.nodes = s.nodes;
    o.samples = std::move(ws);
  } else if (a.batch || a.workers) {
    throw InputError("", 0, "--batch", "--batch and --workers describe the run for --samples; give --samples too");
  }
  if (!a.plot.empty()) {
    io::check_plot_path(a.plot, {{log, a.store.empty() ? "--log" : "--store"}, {a.samples, "--samples"},
                                 {a.store, "--store"}});
    io::require_gnuplot();
  }
  app::LiveWatch live(o);
  ChartWriter chart(a.plot, live);
  profile::LogFollowerOptions fo;
  fo.stall_s = a.stall_s;
  fo.poll_s = a.poll_s;
  if (!a.plot.empty()) fo.on_wait = [&chart] { chart.draw(false); };
  // Following a store, its live log is read out and no profile holds the
  // store: nothing more will come (a profile killed outright wrote no
  // profile_done line, and would otherwise be waited on until --stall).
  // On a network file system a profile on another host may hold the store
  // unseen: the watch then goes by the log alone, to profile_done or --stall.
  const bool lock_seen = !a.store.empty() && profile::store_lock_seen_here(a.store);
  if (lock_seen) fo.call_off = [&a] { return !profile_running_or_starting(a.store); };
  // Ctrl-C reaches the watch, not the job in its own process group: the job
  // is ended with it. Following a log, it is caught only to draw the chart's
  // last forecast first.
  if (log.empty() || !a.plot.empty()) fo.interrupted = &profile::install_interrupt_handler();
  if (log.empty()) keep_terminal_modes();
  auto follower = log.empty() ? profile::LogFollower::command(a.cmd, fo) : profile::LogFollower::file(log, fo);
  const bool tty = !a.json_out && isatty(STDOUT_FILENO);
  if (follower.waiting_for_file())
    std::cerr << fmt::format("waiting for {} to be created (stalled after {:g} s without it: --stall)\n", log, a.stall_s);
  std::string line;
  for (;;) {
    const auto st = follower.next(line);
    if (st == profile::LogFollower::Status::kLine) {
      if (auto u = live.feed(line, follower.line_number())) {
        print(*u, a.json_out, tty);
        const std::string event = u->value("event", "");
        if (event == "forecast") chart.updated();
        if (event == "done") chart.finished(*u);
      }
      if (!live.done()) continue;
      chart.draw(true);
      // A profile holding the store after a profile_done line either is about
      // to let go (its own run's end) or has just started and will rewrite the
      // log (the line was the last run's): followed until one of the two
      // happens (kCalledOff, kRestarted).
      if (lock_seen && profile_running_or_starting(a.store)) continue;
      if (!log.empty()) return;
      // A job we run goes on after its done line (a checkpoint, a last
      // evaluation): it is waited for, and its status is ours.
      const int status = follower.wait_for_exit();
      if (profile::interrupt_signal() != 0) interrupted();
      std::exit(status);
    }
    if (st == profile::LogFollower::Status::kInterrupted) {
      chart.draw(true);
      follower.terminate();
      interrupted(log.empty());
    }
    if (st == profile::LogFollower::Status::kCalledOff) {
      chart.draw(true);
      if (live.done()) return;
      // A profile that let go of the store without ever making its live log
      // stopped before its first trial (a refused resume, a bad option): it said why.
      if (follower.waiting_for_file())
        throw InputError(log, 0, "--store",
                         "the profile that held the store ended without making its live log (it stopped before "
                         "its first trial: its own output says why)");
      // No profile_done line, and no profile holds the store any more.
      json ended = live.ended(-1);
      ended["exit_code"] = nullptr;  // the job's, unknown; the watch's own is 1
      ended["error"] = log + ": the profiling run ended without its profile_done line";
      chart.finished(ended);
      print(ended, a.json_out, tty);
      std::cerr << fmt::format("`trainplan samples list --store {}` shows the trials it stored\n",
                               profile::shell_word(a.store));
      std::exit(kExitFailure);
    }
    if (st == profile::LogFollower::Status::kRestarted) {
      print(live.restarted(), a.json_out, tty);
      continue;
    }
    if (st == profile::LogFollower::Status::kStalled) {
      chart.draw(true);
      json stalled = live.stalled(follower.quiet_s(), follower.line_number());
      // Ending the watch, the update is also its failure, as every failing --json answer says it.
      if (!log.empty())
        stalled.update({{"error", fmt::format("{}: no new line for {:g} s (--stall)", log, a.stall_s)},
                        {"exit_code", kExitFailure}});
      print(stalled, a.json_out, tty);
      if (follower.waiting_for_file())
        std::cerr << fmt::format("{} was never created: is the job writing its log elsewhere?\n", log);
      // A log we only read cannot be waited on forever; a job we run ends when it ends.
      if (!log.empty()) std::exit(kExitFailure);
      continue;
    }
    const json ended = live.ended(follower.exit_code());
    chart.finished(ended);
    print(ended, a.json_out, tty);
    std::exit(follower.exit_code());
  }
}

std::string cell_num(double v) { return std::isfinite(v) ? fmt::format("{:.3f}", v) : "inf"; }
// A median interval width: "-" where no forecast had an interval (NaN).
std::string width_text(double v) {
  return std::isnan(v) ? "-" : std::isfinite(v) ? fmt::format("{:.2f}", v) : "inf";
}

void run_replay(const WatchArgs& a) {
  const auto dirs = io::find_pollux_traces(a.replay);
  if (dirs.empty()) throw InputError(a.replay, 0, "--replay", "no Pollux trace directory (with placements.csv) under it");
  experiments::WatchReplayParams p;
  p.forecaster = forecaster_params(a);
  const auto rep = experiments::run_watch_replay(dirs, p);
  json doc = {{"curves", rep.curves}, {"networks", rep.networks}, {"skipped", rep.skipped},
              {"coverage", p.forecaster.coverage}, {"checkpoints", p.checkpoints},
              {"target_shares", p.target_shares}, {"cells", json::array()}};
  std::string text = fmt::format(
      "{} validation curves of {} replayed row by row; targets {} of the way from the first evaluation to the best;\n"
      "error |predicted - true| / true epoch (a forecast of never counts as infinite); intervals at {:.0f}%\n"
      "calibrated on the run's own past (own) or also on the other networks' runs (lono)\n\n"
      "method    seen  forecasts never  median    p90  coverage own  lono   width own  lono\n",
      rep.curves, fmt::join(rep.networks, ", "), fmt::join(p.target_shares, "/"), 100 * p.forecaster.coverage);
  for (const auto& c : rep.cells) {
    // A checkpoint with no forecast (no run had the rows by then, or each had
    // met every target): its figures are none, not infinite.
    if (c.forecasts == 0) {
      doc["cells"].push_back({{"method", to_string(c.method)}, {"checkpoint", c.checkpoint}, {"forecasts", 0},
                              {"never", 0}, {"median_error", nullptr}, {"p90_error", nullptr},
                              {"coverage_own", nullptr}, {"coverage_lono", nullptr}, {"median_width_own", nullptr},
                              {"median_width_lono", nullptr}});
      text += fmt::format("{:<9} {:>3.0f}%  {:>9} {:>5}  (no forecast: no run had {} rows by then, or had met every "
                          "target)\n",
                          to_string(c.method), 100 * c.checkpoint, 0, 0, p.min_rows_seen);
      continue;
    }
    // JSON has no infinity: an infinite error (a forecast of never) is null
    // in a cell with forecasts, and so is a width where no forecast had an
    // interval (docs/WATCH.md).
    const auto finite = [](double v) { return std::isfinite(v) ? json(v) : json(nullptr); };
    doc["cells"].push_back({{"method", to_string(c.method)}, {"checkpoint", c.checkpoint}, {"forecasts", c.forecasts},
                            {"never", c.never}, {"median_error", finite(c.median_error)},
                            {"p90_error", finite(c.p90_error)}, {"coverage_own", c.coverage_own},
                            {"coverage_lono", c.coverage_lono}, {"median_width_own", finite(c.median_width_own)},
                            {"median_width_lono", finite(c.median_width_lono)}});
    text += fmt::format("{:<9} {:>3.0f}%  {:>9} {:>5}  {:>6} {:>6}  {:>12.2f} {:>5.2f}  {:>9} {:>5}\n",
                        to_string(c.method), 100 * c.checkpoint, c.forecasts, c.never, cell_num(c.median_error),
                        cell_num(c.p90_error), c.coverage_own, c.coverage_lono, width_text(c.median_width_own),
                        width_text(c.median_width_lono));
  }
  if (!rep.skipped.empty()) text += fmt::format("\nskipped (too few rows): {}\n", fmt::join(rep.skipped, "; "));
  std::cout << (a.json_out ? io::json_text(doc) + "\n" : text);
}

void setup(CLI::App& root) {
  auto a = std::make_shared<WatchArgs>();
  auto* cmd = root.add_subcommand(
      "watch",
      "A live forecast for a running job: follow its log of trial-protocol JSON lines (docs/PROFILING.md) and,\n"
      "after each epoch, predict the epoch at which it meets --target, with an interval, when that will be, and\n"
      "whether --deadline holds (docs/WATCH.md). --store follows the trials of a running `trainplan profile`;\n"
      "--replay DIR judges the forecast on the Pollux traces instead.");
  auto* log = cmd->add_option("--log", a->log, "Follow this file as it grows (read from its start)");
  auto* run = cmd->add_option("--cmd", a->cmd, "Run this shell command and follow its stdout");
  auto* store = cmd->add_option("--store", a->store,
                                "Follow the trials of `trainplan profile --store FILE` as they run (its live log "
                                "FILE.live): a forecast per trial, until the profiling run ends");
  auto* rep = cmd->add_option("--replay", a->replay,
                              "Judge the methods on every validation curve under DIR (../shared/data or Pollux traces)");
  log->excludes(run)->excludes(rep)->excludes(store);
  run->excludes(rep)->excludes(store);
  store->excludes(rep);
  // The replay judges every method on its own traces: what describes one
  // followed run is refused beside it rather than ignored.
  cmd->add_option("--prior", a->prior,
                  "Calibrate the interval also on the runs of these Pollux traces (e.g. ../shared/data), replayed")
      ->excludes(rep);
  cmd->add_option("--samples", a->samples,
                  "Also forecast from earlier trials of the same workload (samples CSV or profile store): the metric "
                  "model refitted on them and the run's epochs after each epoch, the time model's epoch time")
      ->excludes(rep);
  cmd->add_option("--batch", a->batch, "With --samples: the run's per-worker batch")->check(positive_number())->excludes(rep);
  cmd->add_option("--workers", a->workers, "With --samples: the run's workers")->check(positive_number())->excludes(rep);
  cmd->add_option("--metric-model", a->metric_model, "With --samples: the metric model")->capture_default_str()->excludes(rep);
  cmd->add_option("--time-model", a->time_model, "With --samples: the time model (auto: cross-validated)")
      ->capture_default_str()
      ->excludes(rep);
  // The replay sets its own targets and judges every method.
  cmd->add_option("--target", a->target, "The metric the job should reach")->excludes(rep);
  add_duration_option(cmd, "--deadline", a->deadline_s, "Time from the start of the first epoch to meet the target by")
      ->excludes(rep);
  add_duration_option(cmd, "--stall", a->stall_s,
                      "Report the log as stalled after this long without a new line; --log and --store then exit 1 (default 300)")
      ->excludes(rep);
  // Below 10 ms a quiet log would be read hundreds of times a second for nothing.
  cmd->add_option("--poll", a->poll_s, "Seconds between reads of a log at its end, 0.01 to 60")->capture_default_str()
      ->check(number_within(0.01, 60))
      ->excludes(rep);
  cmd->add_option("--method", a->method, "naive (last-epoch slope), optimus (Optimus's curve), ensemble")
      ->capture_default_str()
      ->excludes(rep);
  cmd->add_option("--coverage,--confidence", a->coverage, "Nominal coverage of the interval, 0.01 to 0.99")->capture_default_str()
      ->check(coverage_within(0.01, 0.99));
  cmd->add_option("--direction", a->direction, "max or min (default: from metric_name: names holding loss or perplexity, "
                  "or a word beginning with err, wer, cer, ppl, nll, mse or mae, are minimised)")
      ->excludes(rep);
  cmd->add_flag("--json", a->json_out, "One JSON object per update (--replay: one report)");
  cmd->add_option("--plot", a->plot,
                  "Keep a chart of the forecast (.png or .svg) up to date as the run goes on: the metric by epoch with "
                  "the fit carried to the target and the interval, and the time by epoch with the deadline; each "
                  "drawing replaces the file whole")
      ->excludes(rep);
  cmd->callback([a] {
    if (!a->replay.empty()) return run_replay(*a);
    if (a->log.empty() && a->cmd.empty() && a->store.empty())
      throw InputError("", 0, "--log", "give --log FILE, --cmd 'COMMAND', --store FILE or --replay DIR");
    run_follow(*a);
  });
}

CommandRegistrar reg(45, setup);

}  // namespace
}  // namespace trainplan::cli
