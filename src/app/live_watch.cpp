#include "app/live_watch.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <regex>
#include <utility>

#include "core/edit_distance.h"
#include "core/error.h"
#include "io/csv.h"
#include "models/registry.h"
#include "profile/log_follower.h"
#include "profile/sample_store.h"
#include "profile/trial_log_line.h"

namespace trainplan::app {

using nlohmann::json;

namespace {

json opt(const std::optional<double>& v) { return v && std::isfinite(*v) ? json(*v) : json(nullptr); }

// "accuracy", "val_acc", "top1_acc", "f1", "auc", "precision", "recall".
bool names_a_share(const std::string& metric_name) {
  const std::string n = io::lowercase(metric_name);
  for (const char* w : {"acc", "f1", "auc", "precision", "recall"})
    if (n.find(w) != std::string::npos) return true;
  return false;
}

std::string duration(double s) {
  if (!std::isfinite(s)) return "never";
  if (s >= 100 * 86400.0) return fmt::format("{:.4g} days", s / 86400);  // and no overflow of a long
  const long t = std::lround(s);
  if (t >= 3600) return fmt::format("{}h{:02}m", t / 3600, (t % 3600) / 60);
  if (t >= 60) return fmt::format("{}m{:02}s", t / 60, t % 60);
  return fmt::format("{}s", t);
}

std::string num(const json& v) { return v.is_number() ? fmt::format("{:.4g}", v.get<double>()) : "inf"; }

}  // namespace

LiveWatch::LiveWatch(WatchOptions o) : o_(std::move(o)) {
  if (!std::isfinite(o_.target)) throw InputError("", 0, "--target", "must be a finite number");
  if (o_.deadline_s && !(*o_.deadline_s > 0)) throw InputError("", 0, "--deadline", "must be > 0 seconds");
  if (o_.samples) {
    const auto& ws = *o_.samples;
    if (ws.batch <= 0 || ws.workers <= 0)
      throw InputError("", 0, "--batch", "the run's batch and workers (--batch, --workers) must be > 0 with --samples");
    // Fails early, naming the model, when the name is unknown.
    models::ModelRegistry::instance().make_metric(ws.metric_model);
    auto time = models::ModelRegistry::instance().make_time(ws.time_model);
    time->fit(ws.samples);
    samples_epoch_time_ = time->predict(ws.batch, ws.workers, std::max(1, ws.nodes));
  }
}

json LiveWatch::samples_forecast() const {
  const auto& ws = *o_.samples;
  SampleSet set = ws.samples;
  for (const auto& s : own_) set.samples.push_back(s);
  auto metric = models::ModelRegistry::instance().make_metric(ws.metric_model);
  json out = {{"metric_model", ws.metric_model}, {"time_model", ws.time_model},
              {"epoch_time_s", opt(samples_epoch_time_)}, {"predicted_epoch", nullptr}, {"finish_s", nullptr}};
  // The run's direction when known (from its metric name or --direction), else
  // the samples': set before the fit, which fits a curve that rises or falls
  // by it (a samples file without a metric header says "max").
  if (fc_) set.direction = fc_->params().direction;
  try {
    metric->fit(set);
  } catch (const std::exception& e) {
    out["error"] = e.what();
    return out;
  }
  // Met already: the run's own epoch is the answer. Else the first epoch
  // after the latest (which did not meet it) whose predicted metric does.
  if (!own_.empty()) {
    for (const auto& s : own_)
      if (s.metric && meets(*s.metric, o_.target, set.direction)) {
        out["predicted_epoch"] = s.epochs;
        if (std::isfinite(samples_epoch_time_) && samples_epoch_time_ > 0) out["finish_s"] = s.epochs * samples_epoch_time_;
        return out;
      }
  }
  const double from = own_.empty() ? 1 : std::floor(own_.back().epochs) + 1;
  for (double e = from; e <= ws.max_epochs; e += 1) {
    const double m = metric->predict(ws.batch, ws.workers, e);
    if (std::isfinite(m) && meets(m, o_.target, set.direction)) {
      out["predicted_epoch"] = e;
      if (std::isfinite(samples_epoch_time_) && samples_epoch_time_ > 0) out["finish_s"] = e * samples_epoch_time_;
      break;
    }
  }
  return out;
}

std::optional<json> LiveWatch::feed(const std::string& line, long line_no) {
  // The follower's stand-in for a line too long to keep: said as what it is,
  // not as a line that failed to parse (which would use up the one warning
  // about lines without JSON).
  if (line == profile::LogFollower::kLongLineText)
    return json{{"event", "warning"}, {"line", line_no}, {"field", "line"},
                {"message", fmt::format("{}:{}: a line of more than 1 MiB without a newline (a progress bar's "
                                        "updates?): not read",
                                        o_.source, line_no)}};
  profile::TrialLogLine l;
  try {
    l = profile::parse_trial_log_line(line, o_.source, line_no);
  } catch (const InputError& e) {
    // A program logs freely (as the profiler reads it): of the lines with
    // no JSON object in them (no `{"`: a Python dict printed is not one)
    // only the first is reported.
    const bool text = line.find("{\"") == std::string::npos;
    if (text && ++text_lines_ > 1) return std::nullopt;
    std::string message = e.what();
    if (text) message += " (further lines without JSON are not reported)";
    // A garbled epoch line stands for an epoch that ran: counted, so that the
    // next epoch (numbered or not) stands for two, and the elapsed time (each
    // epoch's time times the epochs since the last) keeps it.
    static const std::regex epoch_event(R"re("event"\s*:\s*"epoch")re");
    if (!text && std::regex_search(line, epoch_event) && last_epoch_ + 1 <= kMostEpochs) {
      last_epoch_ += 1;
      ++garbled_epochs_;
      message += fmt::format(" (counted as epoch {}, its time as the next epoch's)", last_epoch_);
    }
    return json{{"event", "warning"}, {"line", line_no}, {"field", e.field()}, {"message", message}};
  }
  using Kind = profile::TrialLogLine::Kind;
  if (l.kind == Kind::kOther && !l.event.empty()) {
    // A program may log events of its own; one a slip from the protocol's
    // ("epoc", "eopch", "Epoch") is a typo whose epochs would go unseen.
    // "epoch" one edit away, or either event but for case: "done" is one
    // edit from a program's own "none", "node" or "note".
    const std::string lower = io::lowercase(l.event);
    std::string nearest;
    if (lower == "done" || lower == "epoch" || (edit_distance(lower, "epoch") <= 1 && !lower.starts_with("epoch")))
      nearest = lower == "done" ? "done" : "epoch";
    if (!nearest.empty() && misspelt_events_.insert(l.event).second)
      return json{{"event", "warning"}, {"line", line_no}, {"field", "event"},
                  {"message", fmt::format("{}:{}: column 'event': '{}' is not one of the protocol's events (did you "
                                          "mean '{}'?): its lines are skipped",
                                          o_.source, line_no, l.event.substr(0, 40), nearest)}};
  }
  if (l.kind == Kind::kBlank || l.kind == Kind::kOther) return std::nullopt;
  if (l.kind == Kind::kTrialStart) {
    // A profiling run's next trial: a new run, forecast from scratch.
    forget_run();
    in_profile_ = true;
    time_trial_ = l.epochs == 0;
    trial_ = fmt::format("batch {} on {} worker{}", l.batch, l.workers, l.workers == 1 ? "" : "s");
    return json{{"event", "trial"}, {"line", line_no}, {"batch", l.batch}, {"workers", l.workers},
                {"epochs", l.epochs}};
  }
  if (l.kind == Kind::kTrialEnd) {
    json u = last_ ? *last_ : json::object();
    u["event"] = "trial_end";
    u["status"] = l.status;
    u["line"] = line_no;
    return u;
  }
  if (l.kind == Kind::kProfileDone) {
    done_ = true;
    return json{{"event", "profile_done"}, {"line", line_no}, {"interrupted", l.interrupted}};
  }
  if (l.kind == Kind::kDone) {
    // In a profiling run's live log a trial's done line ends that trial only; a time trial's
    // runs (steps, no epoch) end one after another with nothing to forecast, and are not news.
    if (in_profile_ && time_trial_) return std::nullopt;
    if (!in_profile_) done_ = true;
    json u = finished(last_);
    u["event"] = "done";
    u["line"] = line_no;
    return u;
  }
  // A run whose first epoch is 0 counts from 0 (Keras): each epoch is taken
  // as one more, so that epoch 0 is the first that ran.
  bool counted_from_zero = false;
  // The first epoch again after several (a job restarted, appending to its
  // log as Python's logging does): a new run, forecast afresh.
  std::string new_run;
  if (l.epoch && !in_profile_ && last_epoch_ > 1 && *l.epoch + epoch_shift_ <= 1) {
    new_run = fmt::format("epoch {:g} after epoch {:g}: a new run in the same log (a restart?), forecast afresh",
                          *l.epoch, last_epoch_ - epoch_shift_);
    forget_run();
  }
  if (l.epoch && *l.epoch == 0 && last_epoch_ == 0 && !fc_ && epoch_shift_ == 0) epoch_shift_ = 1, counted_from_zero = true;
  const double epoch = l.epoch ? *l.epoch + epoch_shift_ : last_epoch_ + 1;
  // A count no run reaches is a garbled line: taken, it would make every
  // real epoch after it "not follow" it and end the forecast.
  if (!(epoch <= kMostEpochs))
    return json{{"event", "warning"}, {"line", line_no}, {"field", "epoch"},
                {"message", fmt::format("{}:{}: column 'epoch': {} is past 10^6 epochs, which no training runs: "
                                        "skipped",
                                        o_.source, line_no, epoch)}};
  // Two metrics in one log (a loss and an accuracy, a line each): the run's
  // curve is of its first, and a value of the other would bend it.
  const bool other_metric = !metric_name_.empty() && !l.metric_name.empty() && l.metric_name != metric_name_;
  if (other_metric && epoch <= last_epoch_) {  // the other metric's line of an epoch already taken
    if (!other_metrics_.insert(l.metric_name).second) return std::nullopt;
    return json{{"event", "warning"}, {"line", line_no}, {"field", "metric"},
                {"message", fmt::format("{}:{}: column 'metric': metric_name '{}' where the run's is '{}': its lines are "
                                        "not taken (said once)",
                                        o_.source, line_no, l.metric_name.substr(0, 40), metric_name_)}};
  }
  if (epoch <= last_epoch_)
    return json{{"event", "warning"}, {"line", line_no}, {"field", "epoch"},
                {"message", fmt::format("{}:{}: column 'epoch': {} does not follow epoch {}", o_.source, line_no,
                                        epoch, last_epoch_)}};
  // This epoch's time, and the garbled epochs' before it at this one's (the
  // forecaster takes a line's time as one epoch's, however many it follows).
  std::optional<double> time = l.epoch_time_s;
  if (time) *time *= double(1 + std::exchange(garbled_epochs_, 0));
  // An epoch with nothing to forecast from: no metric, or a share (an
  // accuracy, by its name) leaving the [0, 1] its earlier epochs kept to, a
  // garbled value that, taken, would bend the curve. It ran: its time counts
  // toward the elapsed time and the next forecast.
  std::string unusable;
  if (!l.metric) {
    const bool nan = std::find(l.nonfinite.begin(), l.nonfinite.end(), "metric") != l.nonfinite.end();
    unusable = fmt::format("{}; nothing to forecast from this epoch",
                           nan                            ? "NaN or Infinity (did the run diverge?)"
                           : !l.unreadable_metric.empty() ? "not a number: " + l.unreadable_metric
                                                          : std::string("missing"));
  } else if (other_metric) {
    unusable = fmt::format("metric_name '{}' where its earlier epochs named '{}': not taken (two metrics in one log? "
                           "said once)",
                           l.metric_name.substr(0, 40), metric_name_);
    if (!other_metrics_.insert(l.metric_name).second) {  // said already: taken out quietly
      last_epoch_ = epoch;
      if (time) unmetered_s_ += *time;
      return std::nullopt;
    }
  } else if (last_ && known_share() && (*l.metric < 0 || *l.metric > 1)) {
    unusable = fmt::format("{} {:g} is outside [0, 1], where its earlier epochs were: not taken", metric_name_,
                           *l.metric);
  }
  if (!unusable.empty()) {
    last_epoch_ = epoch;
    if (time) unmetered_s_ += *time;
    return json{{"event", "warning"},
                {"line", line_no},
                {"field", "metric"},
                {"skipped", false},
                {"message", fmt::format("{}:{}: column 'metric': {} (its time counts)", o_.source, line_no, unusable)}};
  }
  if (!fc_) {
    models::EpochForecasterParams p = o_.forecaster;
    p.direction = o_.direction.value_or(profile::metric_is_lower_better(l.metric_name) ? MetricDirection::kMin
                                                                                         : MetricDirection::kMax);
    fc_ = std::make_unique<models::EpochForecaster>(p, o_.prior);
  }
  if (time) *time += unmetered_s_;
  try {
    fc_->add(epoch, *l.metric, time);
    unmetered_s_ = 0;
  } catch (const std::invalid_argument& e) {
    return json{{"event", "warning"}, {"line", line_no}, {"field", "epoch"},
                {"message", fmt::format("{}:{}: {}", o_.source, line_no, e.what())}};
  }
  last_epoch_ = epoch;
  if (metric_name_.empty()) metric_name_ = l.metric_name;
  share_metric_ = share_metric_ && *l.metric >= 0 && *l.metric <= 1 && names_a_share(l.metric_name);
  if (o_.samples) {
    Sample s;
    s.batch = o_.samples->batch;
    s.workers = o_.samples->workers;
    s.epochs = epoch;
    s.epoch_time_s = l.epoch_time_s.value_or(samples_epoch_time_);
    s.metric = l.metric;
    own_.push_back(s);
  }
  json u = forecast_update(epoch);
  u["line"] = line_no;
  last_ = u;
  if (counted_from_zero) u["note"] = "this run counts its epochs from 0; each is taken as one more";
  if (!l.epoch_time_s && fc_->epoch_times().size() == fc_->epochs_seen())
    u["note"] = "this epoch's line has no epoch_time_s: taken at the recent epochs' median";
  if (!new_run.empty()) u["note"] = new_run;
  return u;
}

json LiveWatch::forecast_update(double epoch) const {
  auto f = fc_->forecast(o_.target);
  const auto& p = fc_->params();
  // A share that grows (an accuracy, by its name and its values) never
  // passes 1, whatever a fitted curve does far out. Not inferred from the
  // values alone: a metric out of 100 may start below 1.
  if (p.direction == MetricDirection::kMax && known_share() && o_.target > 1 && !f.reached_at) {
    f.never = true;
    f.epoch.reset(), f.epoch_lo.reset(), f.epoch_hi.reset();
    f.finish_s.reset(), f.finish_lo_s.reset(), f.finish_hi_s.reset();
  }
  json u = {{"event", "forecast"},
            {"epoch", epoch},
            {"epochs_seen", f.epochs_seen},
            {"metric", f.metric},
            {"best", f.best},
            {"target", o_.target},
            {"direction", to_string(p.direction)},
            {"method", to_string(p.method)},
            {"reached_at", opt(f.reached_at)},
            {"predicted_epoch", opt(f.epoch)},
            {"never", f.never},
            {"coverage", p.coverage},
            {"interval", f.epoch_lo ? json::array({opt(f.epoch_lo), opt(f.epoch_hi)}) : json(nullptr)},
            {"elapsed_s", opt(f.elapsed_s)},
            {"finish_s", opt(f.finish_s)},
            {"finish_interval_s", f.finish_lo_s ? json::array({opt(f.finish_lo_s), opt(f.finish_hi_s)}) : json(nullptr)}};
  if (o_.samples) u["samples"] = samples_forecast();
  if (o_.deadline_s) {
    u["deadline_s"] = *o_.deadline_s;
    u["deadline"] = to_string(models::deadline_verdict(f, *o_.deadline_s));
  }
  return u;
}

void LiveWatch::forget_run() {
  fc_.reset();
  metric_name_.clear();
  share_metric_ = true;  // the next run's metric is judged afresh
  epoch_shift_ = 0;
  other_metrics_.clear();
  own_.clear();
  last_epoch_ = 0;
  unmetered_s_ = 0;
  garbled_epochs_ = 0;
  last_.reset();
}

json LiveWatch::restarted() {
  forget_run();
  done_ = in_profile_ = time_trial_ = false;
  trial_.clear();
  return json{{"event", "restarted"},
              {"message", fmt::format("{} was rewritten or replaced (a new run in the same file?): read again from its "
                                      "start, as a new run",
                                      o_.source)}};
}

json LiveWatch::stalled(double quiet_s, long line_no) const {
  json u = last_ ? *last_ : json::object();
  u["event"] = "stalled";
  u["quiet_s"] = quiet_s;
  u["line"] = line_no;
  return u;
}

json LiveWatch::finished(const std::optional<json>& last) const {
  json u = last ? *last : json::object();
  if (!last) return u;
  // Epochs after the last one with a metric ran too.
  if (unmetered_s_ > 0 && u["elapsed_s"].is_number()) u["elapsed_s"] = u["elapsed_s"].get<double>() + unmetered_s_;
  // A run that ended short of the target has no forecast left: it did not get there.
  const bool reached = u["reached_at"].is_number();
  u["reached"] = reached;
  if (!reached) {
    u["predicted_epoch"] = nullptr, u["interval"] = nullptr, u["finish_s"] = nullptr;
    u["finish_interval_s"] = nullptr, u["never"] = false;
    if (o_.deadline_s) u["deadline"] = to_string(models::DeadlineVerdict::kMissed);
    if (o_.samples) u.erase("samples");
  }
  return u;
}

json LiveWatch::ended(int exit_code) const {
  json u = finished(last_);
  u["event"] = "ended";
  u["exit_code"] = exit_code;
  return u;
}

std::string LiveWatch::text(const json& u, int bar_width) {
  const std::string ev = u.value("event", "");
  if (ev == "warning") return "warning: " + u.value("message", "") + (u.value("skipped", true) ? "; line skipped" : "");
  if (ev == "restarted") return "warning: " + u.value("message", "");
  if (ev == "trial")
    return u.value("epochs", 0L) > 0
               ? fmt::format("trial b={} r={} e={} started", u.value("batch", 0L), u.value("workers", 0L),
                             u.value("epochs", 0L))
               : fmt::format("time trial b={} r={} started (steps only: nothing to forecast)", u.value("batch", 0L),
                             u.value("workers", 0L));
  if (ev == "profile_done")
    return u.value("interrupted", false) ? "the profiling run was interrupted before its last trial (resume it to "
                                           "measure the rest)"
                                         : "the profiling run ended";
  // The done line before it already showed the trial's last forecast.
  if (ev == "trial_end") return fmt::format("trial ended ({})", u.value("status", ""));
  std::string head;
  if (ev == "stalled") head = fmt::format("stalled: no new line for {}; ", duration(u.value("quiet_s", 0.0)));
  if (ev == "ended")
    head = u.contains("exit_code") && u["exit_code"].is_null()
               ? "the profiling run ended without its profile_done line (killed?); "
               : fmt::format("the job's output closed without a done line (exit {}); ", u.value("exit_code", -1));
  if (ev == "done") head = "done; ";
  if ((ev == "ended" || ev == "done") && u.contains("reached") && !u["reached"].get<bool>() && u.contains("epoch"))
    return head + fmt::format("epoch {:g}: metric {:.4g} (best {:.4g}); target {:.4g} not reached{}",
                              u["epoch"].get<double>(), u["metric"].get<double>(), u["best"].get<double>(),
                              u["target"].get<double>(),
                              u.contains("deadline") ? fmt::format("; deadline {}: missed",
                                                                   duration(u["deadline_s"].get<double>()))
                                                     : "");

  if (!u.contains("epoch")) return head + "no epoch with a metric seen";
  std::string bar;
  const double epoch = u["epoch"].get<double>();
  if (bar_width > 0) {
    double share = 0;
    if (u["reached_at"].is_number()) share = 1;
    else if (u["predicted_epoch"].is_number()) share = epoch / u["predicted_epoch"].get<double>();
    const int fill = int(std::lround(std::clamp(share, 0.0, 1.0) * bar_width));
    bar = fmt::format("[{}{}] {:3.0f}% ", std::string(size_t(fill), '#'), std::string(size_t(bar_width - fill), '.'),
                      100 * std::clamp(share, 0.0, 1.0));
  }
  std::string s = bar + head +
                  fmt::format("epoch {:g}: metric {} (best {}), target {} ", epoch, num(u["metric"]), num(u["best"]),
                              num(u["target"]));
  if (u["reached_at"].is_number()) {
    s += fmt::format("reached at epoch {:g}", u["reached_at"].get<double>());
  } else if (u["predicted_epoch"].is_number()) {
    s += fmt::format("predicted at epoch {}", num(u["predicted_epoch"]));
    if (u["interval"].is_array())
      s += fmt::format(" [{}, {}] ({:.0f}%)", num(u["interval"][0]), num(u["interval"][1]),
                       100 * u["coverage"].get<double>());
    if (u["finish_s"].is_number()) {
      s += fmt::format(", at {} of training", duration(u["finish_s"].get<double>()));
      if (u["finish_interval_s"].is_array())
        s += fmt::format(" [{}, {}]", duration(u["finish_interval_s"][0].is_number() ? u["finish_interval_s"][0].get<double>() : INFINITY),
                         duration(u["finish_interval_s"][1].is_number() ? u["finish_interval_s"][1].get<double>() : INFINITY));
    }
  } else if (u.value("never", false)) {
    s += "never reached by the fitted curve";
  } else {
    s += "not forecast yet (too few epochs with a metric)";
  }
  if (u.contains("deadline")) s += fmt::format("; deadline {}: {}", duration(u["deadline_s"].get<double>()), u["deadline"].get<std::string>());
  if (u.contains("samples")) {
    const auto& f = u["samples"];
    s += f["predicted_epoch"].is_number()
             ? fmt::format("; from the samples: epoch {:g}", f["predicted_epoch"].get<double>()) +
                   (f["finish_s"].is_number() ? ", at " + duration(f["finish_s"].get<double>()) + " of training" : "")
             : "; from the samples: not within the epochs searched";
  }
  if (u.contains("note")) s += " (note: " + u["note"].get<std::string>() + ")";
  return s;
}

}  // namespace trainplan::app
