// Progress of a profiling run on stderr: a redrawn bar on a terminal,
// plain lines otherwise (logs, CI). Each shows trial k of n, elapsed time,
// an ETA from the cost estimates, and the last trial's result.
#pragma once
#include <cstdio>
#include <optional>
#include <string>

#include "profile/trial.h"

namespace trainplan::profile {

class Progress {
 public:
  // `tty`: redraw one line with '\r'; otherwise print a line per event.
  Progress(std::FILE* out, bool tty, bool quiet = false) : out_(out), tty_(tty), quiet_(quiet) {}

  // A trial is starting: it is number k (1-based) of at most n, the trials
  // started so far and those still pending; n only falls, by the trials a
  // budget leaves out. `fit_budget`: how many of the n are estimated to fit
  // the budget (budget runs, once costs can be estimated); it moves with the
  // estimates, so it is shown apart from the count.
  void start(int k, int n, const TrialKey& key, double elapsed_s, std::optional<double> eta_s,
             std::optional<int> fit_budget = std::nullopt);
  // While the trial runs (called about once a second): redraws on a TTY.
  void tick(double trial_elapsed_s, double elapsed_s);
  // The trial ended with `r`.
  void finish(const TrialRecord& r, double elapsed_s, std::optional<double> eta_s);
  // A plain message on its own line (clears the bar first).
  void note(const std::string& msg);
  // Leaves the bar's line.
  void done();

 private:
  void put(const std::string& text);
  void draw(const std::string& status, double elapsed_s, std::optional<double> eta_s);
  std::string budget_text() const;
  std::FILE* out_;
  bool tty_;
  bool quiet_;
  int k_ = 0, n_ = 0, done_ = 0;
  TrialKey key_{};
  std::optional<double> eta_;
  std::optional<int> fit_budget_;
  std::string last_;
  bool bar_shown_ = false;
};

std::string format_duration(double s);  // "4.2s", "42s", "3m05s", "1h02m"
std::string describe_result(const TrialRecord& r);  // "ok 1.23 s/epoch, accuracy 0.9712"
// The line of a failed trial's stderr tail that says why, for one-line
// failure messages: the last that reads as an error (the whole word error,
// exception, traceback, out of memory, killed, fatal, abort(ed), not found,
// permission denied or segmentation fault, in any case, or "Error:" as in
// RuntimeError:), else the last non-empty one, since several
// ranks' lines interleave and a peer's ordinary log may come last. Cut at 200
// characters; "" when it wrote nothing.
std::string stderr_last_line(const std::string& stderr_tail);

}  // namespace trainplan::profile
