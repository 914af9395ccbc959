#include "app/simulate_request.h"

#include "core/error.h"
#include "models/registry.h"
#include "io/hardware_file.h"
#include "io/philly.h"
#include "sim/metrics.h"
#include "sim/policy.h"
#include "sim/simulator.h"
#include "sim/workload.h"

namespace trainplan::app {

sim::ExperimentOptions experiment_options(const SimulateQuery& q) {
  sim::ExperimentOptions eo;
  eo.sim.nodes = q.nodes;
  eo.sim.gpus_per_node = q.gpus_per_node;
  eo.sim.restart_delay = q.restart_delay;
  eo.sim.interval = q.interval;
  eo.sim.record_use = q.detail;
  if (q.placement == "pack") eo.sim.placement = sim::PlacementMode::kPack;
  else if (q.placement == "spread") eo.sim.placement = sim::PlacementMode::kSpread;
  else throw InputError("", 0, "--placement", "must be pack or spread, got '" + q.placement + "'");
  eo.policy.tiresias_thresholds = q.thresholds;
  if (!(q.min_gain >= 0)) throw InputError("", 0, "--min-gain", "must be >= 0");
  eo.policy.coconfig_min_gain = q.min_gain;
  sim::check_pollux_p(q.pollux_p);
  eo.policy.pollux_p = q.pollux_p;
  eo.gittins = q.gittins;
  eo.oracle = q.oracle;
  // Checked whatever the policies: a name only coconfig reads would otherwise pass unseen with the others.
  if (!q.time_model.empty()) {
    try {
      models::ModelRegistry::instance().with_time(q.time_model);
    } catch (const InputError& e) {
      throw InputError("", 0, "--time-model", e.message());
    }
  }
  eo.time_model = q.time_model;
  sim::check_cluster(q.nodes, q.gpus_per_node);
  return eo;
}

sim::StepTimeSource step_time_source(const SimulateQuery& q) {
  sim::StepTimeSource st;
  st.gpus_per_node = q.gpus_per_node, st.nodes = q.nodes, st.max_gpus = q.nodes * q.gpus_per_node;
  if (!q.step_times.empty() && !q.gpu.empty())
    throw InputError("", 0, "--step-times", "give --step-times (measured traces) or --gpu (moved by a model), not both");
  if (!q.step_times.empty()) {
    st.kind = sim::StepTimeSource::Kind::kOtherTraces;
    st.other_traces = q.step_times;
  } else if (!q.gpu.empty()) {
    st.kind = sim::StepTimeSource::Kind::kTransfer;
    st.from = io::resolve_hardware(q.from_gpu, "--from-gpu");
    st.to = io::resolve_hardware(q.gpu, "--gpu");
  }
  st.trials = q.trials, st.target_trials = q.target_trials, st.seed = q.seed;
  sim::check_step_time_source(st);
  return st;
}

JobSource load_jobs(const SimulateQuery& q) {
  if (q.workload.empty() == q.philly.empty()) throw InputError("", 0, "", "give exactly one of --workload or --philly");
  const int total_gpus = q.nodes * q.gpus_per_node;
  JobSource in;
  if (!q.workload.empty()) {
    const sim::StepTimeSource st = step_time_source(q);
    in.apps = std::make_unique<sim::AppSet>(q.data, st);
    in.step_times = st.describe();
    in.jobs = sim::jobs_from_workload(q.workload, *in.apps, q.load_scale, total_gpus,
                                      q.skip_unrunnable ? &in.left_out : nullptr);
    in.source = q.workload;
  } else {
    if (!q.step_times.empty() || !q.gpu.empty() || !q.trials.empty() || q.skip_unrunnable)
      throw InputError("", 0,
                       !q.gpu.empty()          ? "--gpu"
                       : !q.step_times.empty() ? "--step-times"
                       : !q.trials.empty()     ? "--trials"
                                               : "--skip-unrunnable",
                       "the Philly trace's jobs are rigid durations, with no step times to take from elsewhere: "
                       "give --workload");
    auto rows = io::read_philly_csv(q.philly, q.philly_limit);
    in.jobs = sim::jobs_from_philly(q.philly, rows, q.load_scale, total_gpus);
    in.source = q.philly;
  }
  return in;
}

SimulateOutcome simulate(const SimulateQuery& q) {
  sim::ExperimentOptions eo = experiment_options(q);
  if (q.policies.empty()) throw InputError("", 0, "--policy", "no policy given");
  for (const auto& p : q.policies) sim::PolicyRegistry::instance().make(p, eo.policy);  // validate names first
  const JobSource in = load_jobs(q);
  sim::Experiment ex(in.apps ? in.apps->all() : std::vector<const sim::AppModel*>{}, eo);
  SimulateOutcome o{q, in.source, in.step_times, in.left_out.size(), "", {}};
  for (const auto& p : q.policies) o.runs.push_back(ex.run(p, in.jobs));
  o.note = ex.note();
  return o;
}

nlohmann::json to_json(const SimulateOutcome& o) {
  const SimulateQuery& q = o.query;
  nlohmann::json js;
  js["source"] = o.source;
  js["cluster"] = {{"nodes", q.nodes}, {"gpus_per_node", q.gpus_per_node}};
  js["load_scale"] = q.load_scale;
  js["restart_delay_s"] = q.restart_delay;
  js["interval_s"] = q.interval;
  js["placement"] = q.placement;
  if (!o.step_times.empty()) js["step_times"] = o.step_times;
  if (q.skip_unrunnable) js["jobs_left_out"] = o.jobs_left_out;
  if (!o.note.empty()) js["note"] = o.note;
  for (const auto& r : o.runs) {
    auto s = sim::summarize(r);
    nlohmann::json p = {{"policy", r.policy},          {"jobs", s.jobs},
                        {"avg_jct_s", s.avg_jct},      {"median_jct_s", s.median_jct},
                        {"p99_jct_s", s.p99_jct},      {"makespan_s", s.makespan},
                        {"gpu_hours", s.gpu_hours},    {"utilisation", s.utilisation},
                        {"restarts", s.restarts},      {"events", r.events}};
    if (s.deadlines) p["deadline_met_share"] = s.deadline_met;
    if (q.detail) {
      nlohmann::json jobs = nlohmann::json::array();
      for (const auto& j : r.jobs) {
        nlohmann::json x = {{"name", j.name},      {"app", j.app},           {"arrival_s", j.arrival},
                            {"start_s", j.start},  {"finish_s", j.finish},   {"jct_s", j.jct},
                            {"gpus", j.gpus},      {"batch", j.batch},       {"gpu_seconds", j.gpu_seconds},
                            {"restarts", j.restarts}};
        if (j.met_deadline) x["met_deadline"] = *j.met_deadline;
        jobs.push_back(std::move(x));
      }
      p["job_results"] = std::move(jobs);
      nlohmann::json t = nlohmann::json::array(), g = nlohmann::json::array();
      for (const auto& [when, used] : r.gpus_in_use) t.push_back(when), g.push_back(used);
      p["gpus_in_use"] = {{"t_s", t}, {"gpus", g}};
    }
    js["policies"].push_back(p);
  }
  return js;
}

}  // namespace trainplan::app
