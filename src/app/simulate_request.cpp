#include "app/simulate_request.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

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
  sim::check_coconfig_min_gain(q.min_gain);
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
  eo.policy.pollux_types = q.pollux_types;
  if (q.groups.empty()) sim::check_cluster(q.nodes, q.gpus_per_node);
  else sim::check_groups(q.groups);
  eo.sim.groups = q.groups;
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

namespace {

// The items of a comma-separated value, each trimmed; an empty one refused.
std::vector<std::string> split_items(const std::string& text) {
  std::vector<std::string> items;
  size_t start = 0;
  while (true) {
    const size_t comma = text.find(',', start);
    std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    const size_t first = item.find_first_not_of(' '), last = item.find_last_not_of(' ');
    item = first == std::string::npos ? "" : item.substr(first, last - first + 1);
    if (item.empty()) throw InputError("", 0, "--cluster", fmt::format("an empty item in '{}'", text));
    items.push_back(item);
    if (comma == std::string::npos) return items;
    start = comma + 1;
  }
}

}  // namespace

// --cluster GPU=NODESxGPUS[,...]: the node groups of a cluster of several GPU types.
std::vector<sim::NodeGroup> parse_cluster(const std::string& text) {
  std::vector<sim::NodeGroup> groups;
  for (const std::string& item : split_items(text)) {
    const size_t eq = item.rfind('=');
    const size_t x = eq == std::string::npos ? eq : item.find('x', eq);
    sim::NodeGroup g;
    size_t used_nodes = 0, used_gpus = 0;
    try {
      if (x == std::string::npos) throw std::invalid_argument("");
      g.gpu = item.substr(0, eq);
      g.nodes = std::stoi(item.substr(eq + 1, x - eq - 1), &used_nodes);
      g.gpus_per_node = std::stoi(item.substr(x + 1), &used_gpus);
    } catch (const std::exception&) {
      used_nodes = 0;
    }
    if (g.gpu.empty() || used_nodes == 0 || used_nodes != x - eq - 1 || used_gpus != item.size() - x - 1)
      throw InputError("", 0, "--cluster",
                       fmt::format("'{}' is not GPU=NODESxGPUS (e.g. t4=4x4,a100-40gb=2x8: 4 nodes of 4 T4s and 2 of 8 "
                                   "A100s)",
                                   item));
    groups.push_back(g);
  }
  return groups;
}

std::vector<const sim::AppModel*> JobSource::all_apps() const {
  std::vector<const sim::AppModel*> v = apps ? apps->all() : std::vector<const sim::AppModel*>{};
  for (const auto& set : other_groups_apps)
    for (const sim::AppModel* a : set->all()) v.push_back(a);
  return v;
}

namespace {

// The jobs of a workload on a cluster of several node groups, each group's
// step times as SimulateQuery::groups says.
// With --skip-unrunnable every job may be left out: a cluster that ran none
// would report zero times, which would read as the best.
void require_a_job(const JobSource& in) {
  if (!in.jobs.empty() || in.left_out.empty()) return;
  throw InputError(in.source, 0, "--skip-unrunnable",
                   fmt::format("every job of the workload ({}) is left out, none runs on this cluster; the first: {}",
                               in.left_out.size(), in.left_out.front().what()));
}

JobSource load_jobs_on_groups(const SimulateQuery& q) {
  if (q.workload.empty())
    throw InputError("", 0, "--cluster", "the Philly trace's jobs are rigid durations, with no step times on other "
                                         "GPUs: give --workload");
  if (!q.gpu.empty() || !q.step_times.empty() || !q.trials.empty())
    throw InputError("", 0, !q.gpu.empty() ? "--gpu" : !q.step_times.empty() ? "--step-times" : "--trials",
                     "with --cluster each group's GPU says where its step times come from");
  sim::check_groups(q.groups);
  const std::string from = io::resolve_hardware(q.from_gpu, "--from-gpu").name;
  // Every GPU resolved, and the folders matched to them, before any trace is read.
  std::vector<std::string> names;
  for (const sim::NodeGroup& g : q.groups) {
    const std::string name = io::resolve_hardware(g.gpu, "--cluster").name;
    if (std::find(names.begin(), names.end(), name) != names.end())
      throw InputError("", 0, "--cluster", fmt::format("{} is named by two groups: give it one", name));
    names.push_back(name);
  }
  // A folder for some of the groups' GPUs (--step-times, --trials), by group.
  auto by_group = [&](const std::vector<std::pair<std::string, std::string>>& given, const char* option) {
    std::vector<std::string> folders(names.size());
    for (const auto& [gpu, dir] : given) {
      const auto at = std::find(names.begin(), names.end(), io::resolve_hardware(gpu, option).name);
      if (at == names.end()) throw InputError("", 0, option, fmt::format("{} is not a GPU of --cluster", gpu));
      if (!folders[size_t(at - names.begin())].empty())
        throw InputError("", 0, option, fmt::format("{} is given two folders", *at));
      folders[size_t(at - names.begin())] = dir;
    }
    return folders;
  };
  const std::vector<std::string> folders = by_group(q.group_step_times, "--step-times");
  const std::vector<std::string> trials = by_group(q.group_trials, "--trials");
  for (size_t k = 0; k < names.size(); ++k)
    if (!trials[k].empty() && (names[k] == from || !folders[k].empty()))
      throw InputError("", 0, "--trials",
                       fmt::format("{}'s steps are {}: there is no move for --trials to correct", names[k],
                                   names[k] == from ? "the traces' own" : "measured (--step-times)"));
  if (q.target_trials >= 0 && std::all_of(trials.begin(), trials.end(), [](const auto& t) { return t.empty(); }))
    throw InputError("", 0, "--target-trials", "draws from the steps of --trials: give --trials GPU=FOLDER");
  // Each group's step times, all checked before any trace is read.
  std::vector<sim::StepTimeSource> sources;
  for (size_t k = 0; k < q.groups.size(); ++k) {
    const sim::NodeGroup& g = q.groups[k];
    SimulateQuery qg = q;
    qg.nodes = g.nodes, qg.gpus_per_node = g.gpus_per_node;
    qg.step_times = folders[k];
    if (names[k] != from && qg.step_times.empty()) qg.gpu = g.gpu;
    qg.trials = trials[k];
    if (qg.trials.empty()) qg.target_trials = -1;
    // The node's limits of a moved group are the group's, not the options of a one-type cluster.
    try {
      sources.push_back(step_time_source(qg));
    } catch (const InputError& e) {
      if (e.field() != "--gpus-per-node" && e.field() != "--nodes") throw;
      throw InputError("", 0, "--cluster", fmt::format("{}: {}", names[k], e.message()));
    }
  }
  JobSource in;
  std::vector<const sim::AppSet*> sets;
  std::vector<int> sizes;
  for (size_t k = 0; k < q.groups.size(); ++k) {
    const sim::StepTimeSource& st = sources[k];
    auto set = std::make_unique<sim::AppSet>(q.data, st);
    sets.push_back(set.get());
    sizes.push_back(q.groups[k].nodes * q.groups[k].gpus_per_node);
    in.step_times += fmt::format("{}{}: {}", in.step_times.empty() ? "" : "; ", names[k],
                                 st.kind == sim::StepTimeSource::Kind::kTrace ? "the traces' own steps" : st.describe());
    if (st.kind == sim::StepTimeSource::Kind::kTransfer && st.trials.empty()) in.unmeasured.push_back(names[k]);
    if (!in.apps) in.apps = std::move(set);
    else in.other_groups_apps.push_back(std::move(set));
  }
  in.jobs = sim::jobs_from_workload_on_groups(q.workload, sets, q.load_scale, sizes,
                                              q.skip_unrunnable ? &in.left_out : nullptr);
  in.source = q.workload;
  require_a_job(in);
  return in;
}

}  // namespace

JobSource load_jobs(const SimulateQuery& q) {
  if (!q.groups.empty()) return load_jobs_on_groups(q);
  if (q.workload.empty() == q.philly.empty()) throw InputError("", 0, "", "give exactly one of --workload or --philly");
  const int total_gpus = q.nodes * q.gpus_per_node;
  JobSource in;
  if (!q.workload.empty()) {
    const sim::StepTimeSource st = step_time_source(q);
    in.apps = std::make_unique<sim::AppSet>(q.data, st);
    in.step_times = st.describe();
    if (st.kind == sim::StepTimeSource::Kind::kTransfer && st.trials.empty()) in.unmeasured.push_back(st.to.name);
    in.jobs = sim::jobs_from_workload(q.workload, *in.apps, q.load_scale, total_gpus,
                                      q.skip_unrunnable ? &in.left_out : nullptr);
    in.source = q.workload;
    require_a_job(in);
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
  sim::Experiment ex(in.all_apps(), eo);
  SimulateOutcome o{q, in.source, in.step_times, in.left_out.size(), "", {}};
  for (const auto& p : q.policies) o.runs.push_back(ex.run(p, in.jobs));
  o.note = ex.note();
  return o;
}

nlohmann::json to_json(const SimulateOutcome& o) {
  const SimulateQuery& q = o.query;
  nlohmann::json js;
  js["source"] = o.source;
  if (q.groups.empty()) {
    js["cluster"] = {{"nodes", q.nodes}, {"gpus_per_node", q.gpus_per_node}};
  } else {
    for (const auto& g : q.groups)
      js["cluster"]["groups"].push_back({{"gpu", g.gpu}, {"nodes", g.nodes}, {"gpus_per_node", g.gpus_per_node}});
  }
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
    if (r.groups.size() > 1)
      for (size_t k = 0; k < r.groups.size(); ++k)
        p["gpu_hours_by_group"].push_back(
            {{"gpu", r.groups[k].gpu}, {"gpu_hours", k < r.gpu_seconds_by_group.size() ? r.gpu_seconds_by_group[k] / 3600 : 0.0}});
    if (q.detail) {
      nlohmann::json jobs = nlohmann::json::array();
      for (const auto& j : r.jobs) {
        nlohmann::json x = {{"name", j.name},      {"app", j.app},           {"arrival_s", j.arrival},
                            {"start_s", j.start},  {"finish_s", j.finish},   {"jct_s", j.jct},
                            {"gpus", j.gpus},      {"batch", j.batch},       {"gpu_seconds", j.gpu_seconds},
                            {"restarts", j.restarts}};
        if (r.groups.size() > 1) x["gpu"] = r.groups[size_t(j.group)].gpu;
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
