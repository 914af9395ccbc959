#include "sim/workload.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <stdexcept>

#include "core/error.h"

namespace trainplan::sim {

AppSet::AppSet(const std::string& dir, const StepTimeSource& src) : apps_(load_apps(dir, src)) {}

const AppModel* AppSet::find(const std::string& name) const {
  for (const auto& a : apps_)
    if (a->name() == name) return a.get();
  return nullptr;
}

std::set<std::string> AppSet::names() const {
  std::set<std::string> s;
  for (const auto& a : apps_) s.insert(a->name());
  return s;
}

std::vector<const AppModel*> AppSet::all() const {
  std::vector<const AppModel*> v;
  for (const auto& a : apps_) v.push_back(a.get());
  return v;
}

namespace {

// An arrival after --load-scale, in seconds, refused past kLatestSeconds.
double scaled_arrival(const std::string& path, long line, const char* field, double arrival_s, double load_scale) {
  const double s = arrival_s / load_scale;
  if (!(s <= kLatestSeconds))
    throw InputError(path, line, field,
                     fmt::format("arrival at {:.15g} s{} is past the simulator's latest, {:g} s: times are "
                                 "seconds from the trace's start",
                                 s, load_scale == 1 ? "" : fmt::format(" (after --load-scale {:g})", load_scale),
                                 kLatestSeconds));
  return s;
}

}  // namespace

std::vector<JobSpec> jobs_from_workload(const std::string& path, const AppSet& apps, double load_scale, int max_gpus,
                                        std::vector<InputError>* skipped) {
  return jobs_from_workload_on_groups(path, {&apps}, load_scale, {max_gpus}, skipped);
}

std::vector<JobSpec> jobs_from_workload_on_groups(const std::string& path, const std::vector<const AppSet*>& apps,
                                                  double load_scale, const std::vector<int>& group_gpus,
                                                  std::vector<InputError>* skipped) {
  if (!(load_scale > 0)) throw InputError("", 0, "--load-scale", "must be > 0");
  if (apps.empty() || apps.size() != group_gpus.size()) throw std::logic_error("one AppSet and size per node group");
  auto rows = io::read_workload_csv(path, apps.front()->names());
  std::vector<JobSpec> jobs;
  for (const auto& r : rows) {
    JobSpec s;
    s.name = r.name;
    s.arrival = scaled_arrival(path, r.line, "time", r.arrival_s, load_scale);
    s.app = apps.front()->find(r.application);
    s.gpus = r.replicas;
    s.batch = r.batch;
    s.deadline = r.deadline_s;
    if (apps.size() > 1)
      for (const AppSet* set : apps) {
        s.app_by_group.push_back(set->find(r.application));
        if (!s.app_by_group.back())
          throw InputError(path, r.line, "application", "'" + r.application + "' is not timed on every node group");
      }
    // Runs where some group can hold it at its request (the first group's reason when none can).
    std::optional<InputError> cannot;
    for (size_t k = 0; k < apps.size(); ++k) {
      const AppModel* app = s.app_on(int(k));
      std::optional<InputError> here;
      if (s.gpus > group_gpus[k])
        here = InputError(path, r.line, "num_replicas",
                          "job '" + r.name + "' needs " + std::to_string(s.gpus) + " GPUs but " +
                              (apps.size() > 1 ? fmt::format("node group {}", k + 1) : std::string("the cluster")) +
                              " has " + std::to_string(group_gpus[k]));
      else if (!app->execute(s.gpus, 0, s.batch))
        here = InputError(path, r.line, "batch_size",
                          fmt::format("job '{}': {} cannot run global batch {} on {} GPUs{}: no timed step covers it "
                                      "(on one GPU per-GPU batches {}..{} are timed, global batches up to {}; a "
                                      "placement of {} GPUs may time fewer, or none)",
                                      r.name, r.application, s.batch, s.gpus,
                                      apps.size() > 1 ? " of any node group" : "", app->min_local(), app->max_local(),
                                      app->max_batch(), s.gpus));
      if (!here) {
        cannot.reset();
        break;
      }
      if (!cannot) cannot = here;
    }
    if (cannot && !skipped) throw *cannot;
    if (cannot) skipped->push_back(*cannot);
    else jobs.push_back(std::move(s));
  }
  return jobs;
}

std::vector<JobSpec> jobs_from_philly(const std::string& path, const std::vector<io::PhillyJob>& rows, double load_scale,
                                      int max_gpus) {
  if (!(load_scale > 0)) throw InputError("", 0, "--load-scale", "must be > 0");
  std::vector<JobSpec> jobs;
  jobs.reserve(rows.size());
  for (const auto& r : rows) {
    if (r.gpus > max_gpus)
      throw InputError(path, r.line, "num_gpus",
                       "job needs " + std::to_string(r.gpus) + " GPUs but the cluster has " + std::to_string(max_gpus));
    JobSpec s;
    s.name = "philly-" + std::to_string(r.line);
    s.arrival = scaled_arrival(path, r.line, "timestamp", r.arrival_s, load_scale);
    s.gpus = r.gpus;
    if (!(r.duration_s <= kLatestSeconds))
      throw InputError(path, r.line, "duration",
                       fmt::format("{:g} s is past the simulator's longest, {:g} s", r.duration_s, kLatestSeconds));
    s.duration = r.duration_s;
    jobs.push_back(std::move(s));
  }
  return jobs;
}

std::vector<double> job_sizes(const std::vector<JobSpec>& jobs) {
  std::vector<double> sizes;
  for (const auto& s : jobs) {
    if (!s.app) {
      sizes.push_back(s.duration * s.gpus);
      continue;
    }
    double t = 0, prev = 0;
    for (int e = 1; e <= s.app->epochs(); ++e) {
      double r = s.app->rate(s.gpus, 0, s.batch, e - 1);
      if (r > 0) t += (s.app->boundary(e) - prev) / r;
      prev = s.app->boundary(e);
    }
    sizes.push_back(t * s.gpus);
  }
  return sizes;
}

}  // namespace trainplan::sim
