#include "profile/layout_trial.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <cmath>
#include <sstream>

#include "profile/process_group.h"
#include "profile/trial.h"
#include "profile/trial_log_line.h"

namespace trainplan::profile {

std::optional<LayoutTiming> parse_layout_timing(const std::string& stdout_text, const std::string& field,
                                                std::string* why) {
  std::optional<LayoutTiming> last;
  std::string wrong;
  std::istringstream in(stdout_text);
  for (std::string line; std::getline(in, line);) {
    const auto start = protocol_object_start(line);
    if (start == std::string::npos) continue;
    nlohmann::json j = nlohmann::json::parse(line.substr(start), nullptr, /*allow_exceptions=*/false);
    if (!j.is_object()) {
      if (line.find("iteration_timing") != std::string::npos)
        wrong = "a line naming iteration_timing is not JSON (NaN, Infinity and numbers past 1e308 are no JSON "
                "numbers; or the line was cut off): " + clipped_line(line);
      continue;
    }
    if (j.value("event", "") != "iteration_timing") continue;
    auto t = j.find(field);
    if (t == j.end()) {
      wrong = "an iteration_timing line has no " + field + ": " + clipped_line(line);
      continue;
    }
    if (!t->is_number() || !(t->get<double>() > 0) || !std::isfinite(t->get<double>())) {
      wrong = fmt::format("an iteration_timing line's {} is {}, not a number of seconds > 0", field, clipped_line(t->dump()));
      continue;
    }
    LayoutTiming lt;
    lt.iteration_time_s = t->get<double>();
    if (auto m = j.find("peak_memory_bytes"); m != j.end()) {
      constexpr double kMostBytes = 1e15;
      if (m->is_number() && m->get<double>() > 0 && m->get<double>() <= kMostBytes)
        lt.peak_memory_bytes = m->get<double>();
      else if (!m->is_null())
        lt.memory_ignored = fmt::format("peak_memory_bytes {} ignored: not a number of bytes in (0, 1e15]",
                                        clipped_line(m->dump()));
    }
    auto mean_over_ranks = [&](const char* name) -> std::optional<double> {
      auto v = j.find(name);
      if (v == j.end() || !v->is_array() || v->empty()) return std::nullopt;
      double sum = 0;
      for (const auto& x : *v) {
        if (!x.is_number() || !(x.get<double>() >= 0)) return std::nullopt;
        sum += x.get<double>();
      }
      return sum / double(v->size());
    };
    lt.tp_comm_s = mean_over_ranks("tp_comm_s_per_rank");
    lt.pp_comm_s = mean_over_ranks("pp_comm_s_per_rank");
    lt.dp_comm_s = mean_over_ranks("dp_comm_s_per_rank");
    last = lt;
  }
  if (why) *why = last ? "" : wrong;
  return last;
}

LayoutTrialResult run_layout_trial(const CommandTemplate& tmpl, const LayoutKey& key, const LaunchSettings& s,
                                   double timeout_s, const std::string& field, const std::atomic<bool>* cancel) {
  LaunchPlan plan = plan_layout_launch(tmpl, key, s, free_loopback_port());
  ProcessGroupOptions po;
  po.timeout_s = timeout_s;
  po.timeout_restarts_at = plan.timeout_restarts_at;
  po.cancel = cancel;
  if (s.kind == LauncherKind::kLocal && tmpl.per_rank()) po.cpus = pin_plan(key.workers(), 1);
  po.stdout_json_lines_only = true;
  po.stdout_rank0_labelled_only = plan.label_filter;
  ProcessGroupResult r = run_process_group(plan.commands, po);
  LayoutTrialResult out;
  out.oversubscribed = oversubscribes_locally(s, key.workers(), 1);
  out.command = plan.display;
  out.wall_s = r.wall_s;
  const std::string text = plan.label_filter ? rank0_lines(r.stdout0) : r.stdout0;
  if (r.timed_out) {
    out.error = fmt::format("timed out after {:.0f} s{}", timeout_s, queued_text(r.restarted_after_s));
    if (plan.label_filter)
      if (auto why = slurm_never_started(r.stderr_tail)) out.error += ": " + *why;
  } else if (r.cancelled) {
    out.error = "cancelled";
  } else if (!r.ok()) {
    const auto slurm = plan.label_filter ? slurm_failure(r.stderr_tail) : std::nullopt;
    out.error = slurm ? *slurm : fmt::format("process {} exited with status {}", r.failed_index, r.exit_code);
  } else if (std::string why; !(out.timing = parse_layout_timing(text, field, &why))) {
    out.error = why.empty() ? "no {\"event\":\"iteration_timing\",\"" + field + "\":...} line on stdout" : why;
    if (r.stdout_truncated)
      out.error += "; " + stdout_truncated_text(po.stdout_max_bytes);
  }
  std::string tail = r.stderr_tail;
  while (!tail.empty() && (tail.back() == '\n' || tail.back() == ' ')) tail.pop_back();
  if (!out.error.empty() && !tail.empty()) out.error += "; stderr: " + tail;
  return out;
}

}  // namespace trainplan::profile
