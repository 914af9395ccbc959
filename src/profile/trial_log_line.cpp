#include "profile/trial_log_line.h"

#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/sample.h"
#include "core/json_parse.h"

namespace trainplan::profile {

namespace {

// A number field: absent -> nullopt; present but not a finite number (or not > 0 when `positive`) -> InputError.
std::optional<double> number(const nlohmann::json& j, const char* key, bool positive, const std::string& file,
                             long line_no) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return std::nullopt;
  if (!it->is_number() || !std::isfinite(it->get<double>()))
    throw InputError(file, line_no, key, fmt::format("not a finite number: {}", it->dump()));
  const double v = it->get<double>();
  if (positive && !(v > 0)) throw InputError(file, line_no, key, fmt::format("must be > 0, got {}", v));
  return v;
}

bool starts_at(const std::string& text, size_t i, const char* token) { return text.compare(i, std::strlen(token), token) == 0; }

// The key whose value starts at `i`: the string before the ':' before it.
std::string key_before(const std::string& text, size_t i) {
  size_t k = text.find_last_not_of(" \t\r\n", i == 0 ? std::string::npos : i - 1);
  if (k == std::string::npos || text[k] != ':') return "";
  k = text.find_last_not_of(" \t\r\n", k == 0 ? std::string::npos : k - 1);
  if (k == std::string::npos || text[k] != '"' || k == 0) return "";
  const size_t open = text.rfind('"', k - 1);
  return open == std::string::npos ? "" : text.substr(open + 1, k - open - 1);
}

}  // namespace

std::vector<std::string> null_nonfinite_tokens(std::string& text) {
  std::vector<std::string> keys;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
      continue;
    }
    size_t len = 0;
    if (starts_at(text, i, "NaN")) len = 3;
    else if (starts_at(text, i, "Infinity")) len = 8;
    else if (starts_at(text, i, "-Infinity")) len = 9;
    if (len == 0) continue;
    keys.push_back(key_before(text, i));
    text.replace(i, len, "null");
    i += 3;
  }
  return keys;
}

std::string repeated_key(const std::string& text, size_t start) {
  std::string s = text.substr(start);
  for (int pass = 0; pass < 2; ++pass) {
    try {
      (void)parse_json_unique_keys(s);
      return "";
    } catch (const JsonDuplicateKey& e) {
      return e.path();
    } catch (const nlohmann::json::exception&) {
      // NaN or Infinity, as the protocol reads them: once more with them nulled.
      if (pass == 0 && !null_nonfinite_tokens(s).empty()) continue;
      return "";
    }
  }
  return "";
}

nlohmann::json parse_protocol_json(const std::string& text, size_t start, std::vector<std::string>& nonfinite) {
  auto j = nlohmann::json::parse(text.begin() + long(start), text.end(), nullptr, /*allow_exceptions=*/false);
  if (!j.is_discarded()) return j;
  std::string nulled = text.substr(start);
  const auto keys = null_nonfinite_tokens(nulled);
  if (keys.empty()) return j;
  nonfinite.insert(nonfinite.end(), keys.begin(), keys.end());
  return nlohmann::json::parse(nulled, nullptr, /*allow_exceptions=*/false);
}

size_t protocol_object_start(const std::string& line) {
  const size_t first = line.find('{');
  // A bound on the tries: each is a parse of the rest of the line.
  constexpr int kMostTries = 16;
  int tries = 0;
  for (size_t at = first; at != std::string::npos && tries < kMostTries; at = line.find('{', at + 1), ++tries) {
    std::vector<std::string> nonfinite;
    if (parse_protocol_json(line, at, nonfinite).is_object()) return at;
  }
  return first;
}

TrialLogLine parse_trial_log_line(const std::string& line, const std::string& file, long line_no) {
  TrialLogLine r;
  if (line.find_first_not_of(" \t\r\n") == std::string::npos) {
    r.kind = TrialLogLine::Kind::kBlank;
    return r;
  }
  const auto start = protocol_object_start(line);
  auto shown = [&] { return line.size() > 60 ? line.substr(0, 57) + "..." : line; };
  if (start == std::string::npos)
    throw InputError(file, line_no, "line", fmt::format("not a JSON object: '{}'", shown()));
  const auto j = parse_protocol_json(line, start, r.nonfinite);
  // The epoch and its time cannot be absent once written; any other field
  // so written (a loss beside the metric) is read as absent.
  for (const auto& k : r.nonfinite)
    if ((k == "epoch" || k == "epoch_time_s") && !j.is_discarded())
      throw InputError(file, line_no, k,
                       "is NaN or Infinity, which JSON cannot carry (Python's json.dumps writes them for a float "
                       "nan or inf): did the run diverge?");
  if (j.is_discarded()) {
    // The parser's own words say what is wrong (a number past a double's
    // range reads as "number overflow"), where "not JSON" would not.
    std::string why;
    try {
      const auto strict = nlohmann::json::parse(line.begin() + long(start), line.end());
      (void)strict;
    } catch (const nlohmann::json::exception& e) {
      why = " (" + json_error_text(e) + ")";
    }
    throw InputError(file, line_no, "line", fmt::format("not valid JSON{}: '{}'", why, shown()));
  }
  if (!j.is_object()) throw InputError(file, line_no, "line", fmt::format("not a JSON object: '{}'", shown()));
  auto ev = j.find("event");
  if (ev == j.end() || !ev->is_string()) return r;
  // A protocol line with a key written twice: the parser keeps the last
  // value, and which one the run meant cannot be told. (A program's own
  // lines may repeat keys as their logger allows.)
  if (*ev == "epoch" || *ev == "done" || *ev == "trial_start" || *ev == "trial_end" || *ev == "profile_done")
    if (const std::string k = repeated_key(line, start); !k.empty())
      throw InputError(file, line_no, k, "is named twice in one line: which value is meant cannot be told");
  if (*ev == "done") {
    r.kind = TrialLogLine::Kind::kDone;
    return r;
  }
  if (*ev == "trial_start") {
    r.kind = TrialLogLine::Kind::kTrialStart;
    auto count = [&](const char* key) {
      auto v = number(j, key, false, file, line_no);
      return v && *v >= 0 && *v < 1e12 ? long(*v) : 0L;
    };
    r.batch = count("batch");
    r.workers = count("workers");
    r.epochs = count("epochs");
    return r;
  }
  if (*ev == "trial_end") {
    r.kind = TrialLogLine::Kind::kTrialEnd;
    if (auto st = j.find("status"); st != j.end() && st->is_string()) r.status = *st;
    return r;
  }
  if (*ev == "profile_done") {
    r.kind = TrialLogLine::Kind::kProfileDone;
    if (auto i = j.find("interrupted"); i != j.end() && i->is_boolean()) r.interrupted = i->get<bool>();
    return r;
  }
  if (*ev != "epoch") {
    r.event = ev->get<std::string>();
    return r;
  }
  r.kind = TrialLogLine::Kind::kEpoch;
  // >= 0: a log that counts epochs from 0 (Keras) is the reader's to shift.
  r.epoch = number(j, "epoch", false, file, line_no);
  if (r.epoch && *r.epoch < 0) throw InputError(file, line_no, "epoch", fmt::format("must be >= 0, got {}", *r.epoch));
  r.epoch_time_s = number(j, "epoch_time_s", true, file, line_no);
  // The bounds `profile` reads a trial's epochs within: past them a sum of
  // epochs overflows to infinity, or the unit was not seconds.
  if (r.epoch_time_s && (*r.epoch_time_s < kLeastEpochSeconds || *r.epoch_time_s > kMostEpochSeconds))
    throw InputError(file, line_no, "epoch_time_s",
                     fmt::format("{:g} s is outside {:g} to {:g} s (a time in another unit?)", *r.epoch_time_s,
                                 kLeastEpochSeconds, kMostEpochSeconds));
  if (auto m = j.find("metric"); m != j.end() && !m->is_null() && !m->is_number()) {
    r.unreadable_metric = m->dump();
    if (r.unreadable_metric.size() > 40) r.unreadable_metric = r.unreadable_metric.substr(0, 37) + "...";
  } else {
    r.metric = number(j, "metric", false, file, line_no);
  }
  if (auto n = j.find("metric_name"); n != j.end() && n->is_string()) r.metric_name = *n;
  return r;
}

}  // namespace trainplan::profile
