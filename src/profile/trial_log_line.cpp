#include "profile/trial_log_line.h"

#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "core/error.h"

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

}  // namespace

TrialLogLine parse_trial_log_line(const std::string& line, const std::string& file, long line_no) {
  TrialLogLine r;
  if (line.find_first_not_of(" \t\r\n") == std::string::npos) {
    r.kind = TrialLogLine::Kind::kBlank;
    return r;
  }
  const auto start = line.find('{');
  auto shown = [&] { return line.size() > 60 ? line.substr(0, 57) + "..." : line; };
  if (start == std::string::npos)
    throw InputError(file, line_no, "line", fmt::format("not a JSON object: '{}'", shown()));
  auto j = nlohmann::json::parse(line.begin() + long(start), line.end(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object())
    throw InputError(file, line_no, "line", fmt::format("not a JSON object: '{}'", shown()));
  auto ev = j.find("event");
  if (ev == j.end() || !ev->is_string()) return r;
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
    return r;
  }
  if (*ev != "epoch") return r;
  r.kind = TrialLogLine::Kind::kEpoch;
  r.epoch = number(j, "epoch", true, file, line_no);
  r.epoch_time_s = number(j, "epoch_time_s", true, file, line_no);
  r.metric = number(j, "metric", false, file, line_no);
  if (auto n = j.find("metric_name"); n != j.end() && n->is_string()) r.metric_name = *n;
  return r;
}

}  // namespace trainplan::profile
