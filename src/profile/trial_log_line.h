// One line of the trial protocol (docs/PROFILING.md) read on its own, as a
// live log is followed line by line. Text before the line's JSON object is a
// prefix and ignored, as the profiler ignores it (protocol_object_start).
#pragma once
#include <optional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace trainplan::profile {

struct TrialLogLine {
  enum class Kind {
    kEpoch,    // {"event":"epoch",...}
    kDone,     // {"event":"done"}
    kOther,    // a JSON object with another or no event: ignored by the protocol
    kBlank,    // empty or whitespace only
    // A profiling run's live log (profile/live_log.h) around each trial:
    kTrialStart,   // {"event":"trial_start","batch":B,"workers":R,"epochs":E}
    kTrialEnd,     // {"event":"trial_end","status":...}
    kProfileDone,  // {"event":"profile_done"}
  };
  Kind kind = Kind::kOther;
  std::optional<double> epoch;         // "epoch"; absent: one past the previous epoch
  std::optional<double> epoch_time_s;  // finite and > 0 when present
  std::optional<double> metric;        // finite when present
  // A metric written as something other than a number ("high", true): its JSON text, and `metric`
  // absent. The epoch still ran, so the line is kept for its epoch and time.
  std::string unreadable_metric;
  std::string metric_name;
  // kOther: the line's "event" when it has one the protocol does not know.
  std::string event;
  // Fields written as NaN or Infinity (read as absent; null_nonfinite_tokens).
  std::vector<std::string> nonfinite;
  // kTrialStart: the trial's configuration (0 when absent); kTrialEnd: its status.
  long batch = 0, workers = 0, epochs = 0;
  std::string status;
  // kProfileDone: the profiling run was stopped (Ctrl-C, SIGTERM, a hang-up) before its plan's end.
  bool interrupted = false;
};

// JSON has no NaN or Infinity, yet Python's json.dumps writes them for a
// float nan or inf (a diverged loss, most often). Replaces each such bare
// token outside strings in `text` with null, and returns the keys whose
// values they were, in order (empty: none found; "" for one not after a key).
std::vector<std::string> null_nonfinite_tokens(std::string& text);

// Where a line's protocol object starts: the first '{' from which the rest
// of the line reads as a JSON object (as parse_protocol_json reads it), so
// that a logger's prefix may hold braces ("[rank{0}] {...}"). Of the first 16
// '{' none does: the first '{', whose error then names what is wrong; npos
// when the line has none.
size_t protocol_object_start(const std::string& line);

// The JSON value of `text` from byte `start` (a line's first '{'), read as
// the protocol reads it: NaN and Infinity as null, their keys added to
// `nonfinite`. Discarded (is_discarded()) when it is no JSON even so.
nlohmann::json parse_protocol_json(const std::string& text, size_t start, std::vector<std::string>& nonfinite);

// Where the JSON value of `text` from byte `start` names a key twice in one
// object ("metric"; "a.b" when nested), NaN and Infinity read as the
// protocol reads them; empty when it names none, or is no JSON.
std::string repeated_key(const std::string& text, size_t start);

// Parses one line. A field written as NaN or Infinity is read as absent and
// named in `nonfinite`, except `epoch` and `epoch_time_s`: an InputError
// naming it, not a line that is not JSON. Throws InputError(file, line_no, field, message) when the
// line is not a JSON object (field "line") or an epoch line's field is bad
// (epoch not finite and >= 0, epoch_time_s outside kLeastEpochSeconds to
// kMostEpochSeconds, core/sample.h, metric not a finite number).
TrialLogLine parse_trial_log_line(const std::string& line, const std::string& file, long line_no);

}  // namespace trainplan::profile
