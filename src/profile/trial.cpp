#include "profile/trial.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "core/sample.h"
#include "core/valid_utf8.h"
#include "profile/trial_log_line.h"

namespace trainplan::profile {

std::string to_string(const TrialKey& k) {
  if (k.epochs == 0) return fmt::format("b={} r={} time", k.batch, k.workers);
  return fmt::format("b={} r={} e={}", k.batch, k.workers, k.epochs);
}

std::string clipped_line(const std::string& line) {
  const std::string text = valid_utf8(line);
  return text.size() > 80 ? std::string(utf8_prefix(text, 77)) + "..." : text;
}

const char* to_string(TrialStatus s) {
  switch (s) {
    case TrialStatus::kOk: return "ok";
    case TrialStatus::kFailed: return "failed";
    case TrialStatus::kTimeout: return "timeout";
    case TrialStatus::kBadOutput: return "bad-output";
  }
  return "?";
}

std::optional<TrialStatus> parse_status(const std::string& s) {
  for (auto st : {TrialStatus::kOk, TrialStatus::kFailed, TrialStatus::kTimeout, TrialStatus::kBadOutput})
    if (s == to_string(st)) return st;
  return std::nullopt;
}

namespace {

std::optional<double> finite_number(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number()) return std::nullopt;
  double v = it->get<double>();
  return std::isfinite(v) ? std::optional<double>(v) : std::nullopt;
}

// Past 2^53 a count is no count (and past a long's range the cast is undefined).
constexpr double kMostCount = 9007199254740992.0;

// A count field: a finite number from 0 to kMostCount, as a long.
std::optional<long> count(const nlohmann::json& j, const char* key) {
  const auto n = finite_number(j, key);
  if (!n || *n < 0 || *n > kMostCount) return std::nullopt;
  return long(*n);
}

// The 95% interval field: a [low, high] array of two finite numbers.
std::optional<std::pair<double, double>> interval(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_array() || it->size() != 2 || !(*it)[0].is_number() || !(*it)[1].is_number())
    return std::nullopt;
  double lo = (*it)[0].get<double>(), hi = (*it)[1].get<double>();
  if (!std::isfinite(lo) || !std::isfinite(hi) || lo > hi) return std::nullopt;
  return std::pair(lo, hi);
}

// The step fields of an epoch or step_timing line; nullopt without a finite
// positive median, or with an interval or a step count no timer gives (and
// then `why` says which).
std::optional<StepTiming> step_fields(const nlohmann::json& j, const char* steps_key, StepClock clock, int workers,
                                      std::string* why = nullptr) {
  auto refuse = [&](std::string text) -> std::optional<StepTiming> {
    if (why) *why = std::move(text);
    return std::nullopt;
  };
  auto median = finite_number(j, "step_time_median_s");
  if (!median || *median <= 0) return refuse("its step_time_median_s is not a finite number > 0");
  StepTiming t;
  t.step_time_s = *median;
  t.wall_step_time_s = *median;
  auto ci = interval(j, "step_time_ci95_s");
  const auto cpu = finite_number(j, "step_cpu_median_s");
  if (clock == StepClock::kAuto) {
    const auto device = j.find("device");
    const auto threads = finite_number(j, "threads");
    const bool on_cpu = device != j.end() && device->is_string() && device->get<std::string>().rfind("cpu", 0) == 0;
    // With peers, a step waits for them in the all-reduce, which CPU time
    // leaves out: two CPU workers' steps were 15-31% longer by the wall than
    // by the CPU clock on an idle machine, and their epochs took the wall's.
    const auto line_workers = finite_number(j, "workers");
    const bool alone = workers <= 1 && (!line_workers || *line_workers <= 1);
    clock = on_cpu && alone && (!threads || *threads == 1) ? StepClock::kCpu : StepClock::kWall;
  }
  if (clock == StepClock::kCpu && cpu && *cpu > 0) {
    t.step_time_s = *cpu;
    t.clock = "cpu";
    ci = interval(j, "step_cpu_ci95_s");
    median = cpu;
  }
  // An interval around a median holds it; one that does not is not an interval of this median.
  if (ci && (ci->first > *median * (1 + 1e-9) || ci->second < *median * (1 - 1e-9)))
    return refuse(fmt::format("its 95% interval [{:g}, {:g}] does not hold its median {:g}", ci->first, ci->second,
                              *median));
  t.ci_low_s = ci ? ci->first : *median;
  t.ci_high_s = ci ? ci->second : *median;
  if (auto n = finite_number(j, steps_key); n && *n > kMostCount)
    return refuse(fmt::format("its {} {:g} is past any count", steps_key, *n));
  if (auto n = count(j, steps_key)) t.steps_per_epoch = *n;
  if (auto o = finite_number(j, "epoch_overhead_s"); o && *o >= 0) t.epoch_overhead_s = *o;
  if (auto n = count(j, "steps_timed")) t.steps_timed = *n;
  if (t.clock == "wall") {
    const auto p10 = finite_number(j, "step_time_p10_s"), p90 = finite_number(j, "step_time_p90_s");
    if (p10 && p90 && *p10 > 0 && *p90 >= *p10) t.p10_s = *p10, t.p90_s = *p90;
  }
  if (auto c = j.find("converged"); c != j.end() && c->is_boolean() && !c->get<bool>()) t.unconverged = true;
  if (auto target = finite_number(j, "step_ci_target"); target && *target > 0) t.ci_target = *target;
  const char* outliers_key = t.clock == "cpu" ? "step_cpu_outliers" : "step_outliers";
  if (auto n = count(j, outliers_key)) t.outliers = *n;
  t.spread = (t.ci_high_s - t.ci_low_s) / 2 / t.step_time_s;
  // As an epoch line's time is held to them: past them the sums overflow or
  // the figures underflow, and the store would keep a time no reader takes back.
  if (const double epoch = t.epoch_time_s(); !(epoch >= kLeastEpochSeconds && epoch <= kMostEpochSeconds))
    return refuse(fmt::format("its epoch time ({} x {:g} s + {:g} s overhead = {:g} s) is outside [{:g}, {:g}] s",
                              t.steps_per_epoch, t.step_time_s, t.epoch_overhead_s, epoch, kLeastEpochSeconds,
                              kMostEpochSeconds));
  return t;
}

// The epochs' step timings as one: the epoch whose median is the median of
// the epochs' medians (its interval with it), outliers summed.
StepTiming combine_epochs(std::vector<StepTiming> epochs) {
  long outliers = 0, timed = 0;
  for (const auto& e : epochs) outliers += e.outliers, timed += e.steps_timed;
  std::nth_element(epochs.begin(), epochs.begin() + long(epochs.size() / 2), epochs.end(),
                   [](const StepTiming& a, const StepTiming& b) { return a.step_time_s < b.step_time_s; });
  StepTiming t = epochs[epochs.size() / 2];
  t.outliers = outliers;
  t.steps_timed = timed;
  return t;
}

}  // namespace

const char* to_string(StepClock c) {
  switch (c) {
    case StepClock::kAuto: return "auto";
    case StepClock::kWall: return "wall";
    case StepClock::kCpu: return "cpu";
  }
  return "?";
}

std::optional<StepClock> parse_step_clock(const std::string& s) {
  for (StepClock c : {StepClock::kAuto, StepClock::kWall, StepClock::kCpu})
    if (s == to_string(c)) return c;
  return std::nullopt;
}

TrialOutput parse_trial_output(const std::string& text, bool time_trial, StepClock clock, int workers) {
  TrialOutput out;
  std::istringstream in(text);
  std::string line;
  double time_sum = 0;
  int bad_epoch_lines = 0, json_lines = 0;
  std::vector<int> nan_metric_epochs;
  int nan_time_lines = 0, non_numeric_metrics = 0, huge_metrics = 0, repeated_key_lines = 0;
  std::string first_repeated_key;
  std::set<double> epoch_numbers;
  bool last_metric_nonfinite = false;  // the run ended diverged, not merely passed through an overflow
  std::vector<StepTiming> epoch_steps;
  std::string step_timing_problem;  // what was wrong with the last unusable step_timing line
  // Where the first unreadable protocol line, and the first epoch line without a usable time, stood
  // (stdout's line number and what was wrong), so that the reason points at them.
  int line_no = 0, broken_lines = 0;
  std::vector<std::string> other_events;  // events not the protocol's, the first few, for a run with no epoch line
  std::string first_broken, first_bad_epoch;
  // Fields that would have been used, written so that they cannot be: said, not silently dropped.
  int bad_step_lines = 0, bad_size_lines = 0;
  std::string first_bad_steps, first_bad_size;
  long control_metric_names = 0;
  std::string first_control_metric_name;
  while (std::getline(in, line)) {
    ++line_no;
    const auto start = protocol_object_start(line);
    if (start == std::string::npos) continue;
    std::vector<std::string> nonfinite;
    const auto j = parse_protocol_json(line, start, nonfinite);
    if (j.is_discarded() || !j.is_object()) {
      // A line that means to be a protocol line (it names an event) but is no JSON object.
      if (line.find("\"event\"") != std::string::npos && ++broken_lines == 1)
        first_broken = fmt::format("stdout line {}: {}", line_no, clipped_line(line.substr(start)));
      continue;
    }
    ++json_lines;
    auto written_nonfinite = [&](const char* key) {
      return std::find(nonfinite.begin(), nonfinite.end(), key) != nonfinite.end();
    };
    auto ev = j.find("event");
    if (ev == j.end() || !ev->is_string()) continue;
    for (const char* k : {"dataset_size", "train_size", "train_samples"}) {
      if (auto n = count(j, k); n && *n > 0) out.dataset_size = *n;
      else if (j.contains(k) && ++bad_size_lines == 1)
        first_bad_size = fmt::format("stdout line {}: {} is {}", line_no, k, clipped_line(j[k].dump()));
    }
    if (*ev == "done") {
      out.saw_done = true;
      continue;
    }
    if (*ev == "step_timing") {
      std::string why;
      auto t = step_fields(j, "steps_per_epoch", clock, workers, &why);
      if (t && t->steps_per_epoch > 0) {
        out.step_timing = t;
        if (auto b = count(j, "batch"); b && *b > 0) out.step_timing_by_batch[*b] = *t;
      } else step_timing_problem = why.empty() ? "its steps_per_epoch is not a number > 0" : why;
      continue;
    }
    if (*ev != "epoch") {
      if (const std::string name = ev->get<std::string>(); other_events.size() < 3 && name != "done" &&
          std::find(other_events.begin(), other_events.end(), name) == other_events.end())
        other_events.push_back(name);
      continue;
    }
    // As `watch` reads the same line: a key written twice leaves which value
    // the run meant untold.
    if (const std::string k = repeated_key(line, start); !k.empty()) {
      if (++repeated_key_lines == 1) first_repeated_key = fmt::format("stdout line {}: '{}'", line_no, k);
      continue;
    }
    auto t = finite_number(j, "epoch_time_s");
    if (!t || *t < kLeastEpochSeconds || *t > kMostEpochSeconds) {
      if (++bad_epoch_lines == 1) {
        auto v = j.find("epoch_time_s");
        first_bad_epoch = fmt::format("stdout line {}: epoch_time_s {}", line_no,
                                      v == j.end() ? std::string("missing") : "is " + clipped_line(v->dump()));
      }
      if (written_nonfinite("epoch_time_s")) ++nan_time_lines;
      continue;
    }
    time_sum += *t;
    ++out.epochs_reported;
    if (auto e = finite_number(j, "epoch"); e && !epoch_numbers.insert(*e).second) ++out.repeated_epochs;
    auto m = finite_number(j, "metric");
    if (m && std::abs(*m) > kMostMetricMagnitude) {
      ++huge_metrics;
      m.reset();
    }
    last_metric_nonfinite = written_nonfinite("metric");
    if (last_metric_nonfinite)
      nan_metric_epochs.push_back(int(std::clamp(finite_number(j, "epoch").value_or(out.epochs_reported), 0.0,
                                                 double(std::numeric_limits<int>::max()))));
    else if (auto mv = j.find("metric"); mv != j.end() && !mv->is_number() && !mv->is_null())
      ++non_numeric_metrics;
    out.last_metric = m;  // the metric after the last epoch, or none
    // By epoch: a line that names its epoch past the ones read (one before it garbled and
    // skipped) leaves the epochs between without a metric, rather than taking their place.
    if (auto e = finite_number(j, "epoch"); e && *e == std::floor(*e) && *e > double(out.epoch_metrics.size() + 1) &&
                                            *e <= double(kMostEpochs))
      out.epoch_metrics.resize(size_t(*e) - 1);
    out.epoch_metrics.push_back(m);
    // A name is text of one line: one with control characters (a NUL cuts every message that quotes it) is not taken.
    if (auto name = j.find("metric_name"); name != j.end() && name->is_string()) {
      const std::string& text = name->get_ref<const std::string&>();
      if (std::none_of(text.begin(), text.end(), [](unsigned char c) { return c < 0x20 || c == 0x7f; }))
        out.metric_name = text;
      else if (++control_metric_names == 1)
        first_control_metric_name = fmt::format("stdout line {}", line_no);
    }
    if (j.contains("step_time_median_s")) {
      std::string why;
      auto st = step_fields(j, "steps", clock, workers, &why);
      if (st && st->steps_per_epoch > 0) epoch_steps.push_back(*st);
      else if (++bad_step_lines == 1)
        first_bad_steps = fmt::format("stdout line {}: {}", line_no, why.empty() ? "its steps is not a number > 0" : why);
    }
  }
  if (!epoch_steps.empty() && epoch_steps.size() == size_t(out.epochs_reported))
    out.epoch_steps = combine_epochs(epoch_steps);
  // JSON has no NaN or Infinity; Python's json.dumps writes them for a float nan or inf.
  std::vector<std::string> notes;
  if (nan_time_lines > 0)
    notes.push_back(fmt::format("{} epoch line(s) had epoch_time_s NaN or Infinity and were skipped (did the run "
                                "diverge?)",
                                nan_time_lines));
  out.metric_diverged = last_metric_nonfinite;
  if (!nan_metric_epochs.empty())
    notes.push_back(fmt::format("the metric of {} epoch(s) was NaN or Infinity (first: epoch {}), taken as no metric{}",
                                nan_metric_epochs.size(), nan_metric_epochs.front(),
                                out.metric_diverged ? "; the run ended so (diverged?), and plans leave this batch and "
                                                      "worker count out"
                                                    : ""));
  if (broken_lines > 0)
    notes.push_back(fmt::format("{} line(s) naming an \"event\" were not JSON and were skipped (first, {})",
                                broken_lines, first_broken));
  // Some epoch lines without a usable time beside usable ones (all of them is the problem below).
  if (out.epochs_reported > 0 && bad_epoch_lines > nan_time_lines)
    notes.push_back(fmt::format("{} epoch line(s) without a finite positive epoch_time_s of at most 1e9 s were skipped "
                                "(first, {})",
                                bad_epoch_lines - nan_time_lines, first_bad_epoch));
  if (bad_step_lines > 0)
    notes.push_back(fmt::format("the step fields of {} epoch line(s) could not be used, so the epochs' times are "
                                "their epoch_time_s (first, {})",
                                bad_step_lines, first_bad_steps));
  if (bad_size_lines > 0)
    notes.push_back(fmt::format("{} line(s) gave a training-set size that is not a count > 0, ignored (first, {})",
                                bad_size_lines, first_bad_size));
  out.note = fmt::format("{}", fmt::join(notes, "; "));
  if (repeated_key_lines > 0)
    out.note += fmt::format("{}{} epoch line(s) named a key twice and were skipped: which value was meant cannot be "
                            "told (first, {})",
                            out.note.empty() ? "" : "; ", repeated_key_lines, first_repeated_key);
  if (huge_metrics > 0)
    out.note += fmt::format("{}the metric of {} epoch(s) was beyond +-{:g}, taken as no metric",
                            out.note.empty() ? "" : "; ", huge_metrics, kMostMetricMagnitude);
  if (control_metric_names > 0)
    out.note += fmt::format("{}{} epoch line(s) gave a metric_name holding control characters, not taken (first, {})",
                            out.note.empty() ? "" : "; ", control_metric_names, first_control_metric_name);
  if (non_numeric_metrics > 0)
    out.note += fmt::format("{}the metric of {} epoch(s) was not a number (a string such as \"0.9\"?), taken as no "
                            "metric",
                            out.note.empty() ? "" : "; ", non_numeric_metrics);
  if (time_trial) {
    if (!out.step_timing && !step_timing_problem.empty())
      out.problem = "its {\"event\":\"step_timing\",...} line cannot be used: " + step_timing_problem;
    else if (!out.step_timing)
      out.problem = "no {\"event\":\"step_timing\",\"step_time_median_s\":...,\"steps_per_epoch\":...} line on "
                    "stdout (a time trial's command must print one)";
  } else if (out.epochs_reported > 0) {
    out.mean_epoch_time_s = time_sum / out.epochs_reported;
  } else if (bad_epoch_lines > 0) {
    out.problem = fmt::format("{} epoch line(s) without a finite positive epoch_time_s of at most 1e9 s (first, {})",
                              bad_epoch_lines, first_bad_epoch);
    if (nan_time_lines > 0)
      out.problem += fmt::format(" ({} written as NaN or Infinity, which JSON cannot carry: Python's json.dumps "
                                 "writes them for a float nan or inf)",
                                 nan_time_lines);
  } else if (repeated_key_lines > 0) {
    out.problem = fmt::format("{} epoch line(s) named a key twice, and no other epoch line was read: which value was "
                              "meant cannot be told (first, {})",
                              repeated_key_lines, first_repeated_key);
  } else if (json_lines > 0) {
    out.problem = "JSON lines seen on stdout, but no {\"event\":\"epoch\",...} line";
    // The events the program did print: a slip ("epoc", "Epoch", "epoch_end") is then plain.
    if (!other_events.empty()) {
      std::vector<std::string> quoted;
      for (const auto& e : other_events) quoted.push_back("'" + clipped_line(e) + "'");
      out.problem += fmt::format(" (events seen: {}; the protocol's is 'epoch', lowercase)", fmt::join(quoted, ", "));
    }
    if (broken_lines > 0)
      out.problem += fmt::format(" ({} line(s) naming an \"event\" were not JSON; first, {})", broken_lines,
                                 first_broken);
  } else if (broken_lines > 0) {
    out.problem = fmt::format("no line on stdout could be read as JSON: {} naming an \"event\" were not (first, {}; "
                              "a number past 1e308, a cut-off line or text after the object is not JSON)",
                              broken_lines, first_broken);
  } else {
    out.problem = "no JSON lines on stdout (expected {\"event\":\"epoch\",\"epoch_time_s\":...} per epoch)";
  }
  return out;
}

std::string utc_now() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace trainplan::profile
