#include "profile/progress.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <sstream>

#include "core/valid_utf8.h"

namespace trainplan::profile {

std::string format_duration(double s) {
  s = std::max(0.0, s);
  if (s < 10) return fmt::format("{:.1f}s", s);
  long t = std::lround(s);
  if (t < 60) return fmt::format("{}s", t);
  if (t < 3600) return fmt::format("{}m{:02}s", t / 60, t % 60);
  return fmt::format("{}h{:02}m", t / 3600, (t % 3600) / 60);
}

std::string stderr_last_line(const std::string& stderr_tail) {
  std::string last, last_error;
  std::istringstream lines(stderr_tail);
  for (std::string l; std::getline(lines, l);) {
    const size_t b = l.find_first_not_of(" \r\t"), e = l.find_last_not_of(" \r\t");
    if (b == std::string::npos) continue;
    l = l.substr(b, e - b + 1);
    last = l;
    std::string lower = l;
    std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
    // Whole words ("val_error=0.12" is a metric, not an error), and not "failed", which logs use
    // of counts ("0 failed").
    auto word_char = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
    auto has_word = [&](const std::string& w) {
      for (size_t at = lower.find(w); at != std::string::npos; at = lower.find(w, at + 1))
        if ((at == 0 || !word_char(lower[at - 1])) && (at + w.size() >= lower.size() || !word_char(lower[at + w.size()])))
          return true;
      return false;
    };
    for (const char* word : {"error", "exception", "traceback", "out of memory", "killed", "fatal", "abort", "aborted",
                             "not found", "permission denied", "segmentation fault"})
      if (has_word(word) || (std::string(word) == "error" && lower.find("error:") != std::string::npos)) {
        last_error = l;
        break;
      }
  }
  const std::string& l = last_error.empty() ? last : last_error;
  return l.size() > 200 ? std::string(utf8_prefix(l, 200)) + "..." : l;
}

std::string describe_result(const TrialRecord& r) {
  if (r.status != TrialStatus::kOk) {
    std::string s = fmt::format("{}: {}", to_string(r.status), r.reason);
    if (r.key.epochs > 0 && r.epochs_reported > 0)
      s += fmt::format(" (its {} reported epoch(s) of {} kept, as points of the curve where they have a metric)",
                       r.epochs_reported, r.key.epochs);
    return s;
  }
  std::string s = fmt::format("ok {:.3g} s/epoch", r.epoch_time_s.value_or(0));
  if (r.metric) s += fmt::format(", {} {:.4g}", r.metric_name.empty() ? "metric" : r.metric_name, *r.metric);
  return s;
}

void Progress::put(const std::string& text) {
  // Progress is for the reader, not the run: a stream that cannot take it (a
  // full disk, a closed descriptor) loses it, and the run goes on. A closed
  // pipe stops the run through its signal (profile/interrupt.h), not here.
  std::fwrite(text.data(), 1, text.size(), out_);
  std::fflush(out_);
  std::clearerr(out_);
}

void Progress::draw(const std::string& status, double elapsed_s, std::optional<double> eta_s) {
  if (quiet_ || !tty_) return;
  const int width = 20;
  int filled = n_ > 0 ? std::min(width, int(std::lround(width * double(done_) / n_))) : 0;
  std::string bar = std::string(size_t(filled), '#') + std::string(size_t(width - filled), '.');
  std::string line = fmt::format("[{}] {}/{} {} | {} elapsed, ETA {}{} | {}", bar, k_, n_, to_string(key_),
                                 format_duration(elapsed_s), eta_s ? format_duration(*eta_s) : "?", budget_text(),
                                 status);
  if (!last_.empty()) line += " | last: " + last_;
  if (line.size() > 150) line.resize(150);
  put("\r\033[K" + line);
  bar_shown_ = true;
}

std::string Progress::budget_text() const {
  return fit_budget_ ? fmt::format(", about {} of {} fit the budget", *fit_budget_, n_) : "";
}

void Progress::start(int k, int n, const TrialKey& key, double elapsed_s, std::optional<double> eta_s,
                     std::optional<int> fit_budget) {
  k_ = k;
  n_ = n;
  fit_budget_ = fit_budget;
  done_ = k - 1;
  key_ = key;
  eta_ = eta_s;
  if (quiet_) return;
  if (tty_) {
    draw("starting", elapsed_s, eta_s);
  } else {
    put(fmt::format("[{}/{}] {} starting (elapsed {}, ETA {}{})\n", k, n, to_string(key), format_duration(elapsed_s),
                    eta_s ? format_duration(*eta_s) : "?", budget_text()));
  }
}

void Progress::tick(double trial_elapsed_s, double elapsed_s) {
  std::optional<double> eta = eta_ ? std::optional<double>(std::max(0.0, *eta_ - trial_elapsed_s)) : std::nullopt;
  draw(fmt::format("running {}", format_duration(trial_elapsed_s)), elapsed_s, eta);
}

void Progress::finish(const TrialRecord& r, double elapsed_s, std::optional<double> eta_s) {
  last_ = describe_result(r);
  done_ = k_;
  if (quiet_) return;
  if (tty_) {
    eta_ = eta_s;
    draw(fmt::format("done in {}", format_duration(r.wall_s)), elapsed_s, eta_s);
  } else {
    put(fmt::format("[{}/{}] {} {} in {} (elapsed {}, ETA {})\n", k_, n_, to_string(r.key), last_,
                    format_duration(r.wall_s), format_duration(elapsed_s), eta_s ? format_duration(*eta_s) : "?"));
  }
}

void Progress::note(const std::string& msg) {
  if (quiet_) return;
  put((tty_ && bar_shown_ ? "\r\033[K" : "") + msg + "\n");
}

void Progress::done() {
  if (tty_ && bar_shown_ && !quiet_) put("\n");
  bar_shown_ = false;
}

}  // namespace trainplan::profile
