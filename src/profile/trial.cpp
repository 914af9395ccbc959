#include "profile/trial.h"

#include <fmt/format.h>

#include <cmath>
#include <ctime>
#include <nlohmann/json.hpp>
#include <sstream>

namespace trainplan::profile {

std::string to_string(const TrialKey& k) { return fmt::format("b={} r={} e={}", k.batch, k.workers, k.epochs); }

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

}  // namespace

TrialOutput parse_trial_output(const std::string& text) {
  TrialOutput out;
  std::istringstream in(text);
  std::string line;
  double time_sum = 0;
  int bad_epoch_lines = 0, json_lines = 0;
  while (std::getline(in, line)) {
    auto start = line.find('{');
    if (start == std::string::npos) continue;
    auto j = nlohmann::json::parse(line.begin() + long(start), line.end(), nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.is_object()) continue;
    ++json_lines;
    auto ev = j.find("event");
    if (ev == j.end() || !ev->is_string()) continue;
    for (const char* k : {"dataset_size", "train_size", "train_samples"})
      if (auto n = finite_number(j, k); n && *n > 0) out.dataset_size = long(*n);
    if (*ev == "done") {
      out.saw_done = true;
      continue;
    }
    if (*ev != "epoch") continue;
    auto t = finite_number(j, "epoch_time_s");
    if (!t || *t <= 0) {
      ++bad_epoch_lines;
      continue;
    }
    time_sum += *t;
    ++out.epochs_reported;
    auto m = finite_number(j, "metric");
    out.last_metric = m;  // the metric after the last epoch, or none
    out.epoch_metrics.push_back(m);
    if (auto name = j.find("metric_name"); name != j.end() && name->is_string()) out.metric_name = *name;
  }
  if (out.epochs_reported > 0) {
    out.mean_epoch_time_s = time_sum / out.epochs_reported;
  } else if (bad_epoch_lines > 0) {
    out.problem = fmt::format("{} epoch line(s) without a finite positive epoch_time_s", bad_epoch_lines);
  } else if (json_lines > 0) {
    out.problem = "JSON lines seen on stdout, but no {\"event\":\"epoch\",...} line";
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
