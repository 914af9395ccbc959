#include "sim/workload.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <stdexcept>

#include "core/error.h"

namespace trainplan::sim {

AppSet::AppSet(const std::string& dir, const StepTimeSource& src) : loaded_(load_apps(dir, src)) {}

const AppModel* AppSet::find(const std::string& name) const {
  for (const auto& a : loaded_.apps)
    if (a->name() == name) return a.get();
  return nullptr;
}

std::set<std::string> AppSet::names() const {
  std::set<std::string> s;
  for (const auto& a : loaded_.apps) s.insert(a->name());
  for (const auto& [name, why] : loaded_.unavailable) s.insert(name);
  return s;
}

std::vector<const AppModel*> AppSet::all() const {
  std::vector<const AppModel*> v;
  for (const auto& a : loaded_.apps) v.push_back(a.get());
  return v;
}

const InputError* AppSet::unavailable(const std::string& name) const {
  const auto it = loaded_.unavailable.find(name);
  return it == loaded_.unavailable.end() ? nullptr : &it->second;
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
  const size_t largest = size_t(std::max_element(group_gpus.begin(), group_gpus.end()) - group_gpus.begin());
  std::vector<JobSpec> jobs;
  for (const auto& r : rows) {
    JobSpec s;
    s.name = r.name;
    s.arrival = scaled_arrival(path, r.line, "time", r.arrival_s, load_scale);
    s.gpus = r.replicas;
    s.batch = r.batch;
    s.deadline = r.deadline_s;
    // Its application timed on every node group, or the job cannot run (a
    // folder of step times that lacks it says why).
    std::optional<InputError> untimed;
    for (size_t k = 0; k < apps.size() && !untimed; ++k) {
      const AppModel* app = apps[k]->find(r.application);
      if (k == 0) s.app = app;
      if (apps.size() > 1) s.app_by_group.push_back(app);
      if (app) continue;
      const InputError* why = apps[k]->unavailable(r.application);
      untimed = InputError(path, r.line, "application",
                           fmt::format("job '{}': '{}' has no step times{}{}", r.name, r.application,
                                       apps.size() > 1 ? fmt::format(" on node group {}", k + 1) : "",
                                       why ? std::string(": ") + why->what() : ""));
    }
    if (untimed) {
      if (!skipped) throw *untimed;
      skipped->push_back(*untimed);
      continue;
    }
    // Runs where some group can hold it at its request. When none can: the
    // batch's reason on the first group with room for its GPUs, else its
    // GPUs against the largest group.
    std::optional<InputError> cannot;
    bool runs = false;
    for (size_t k = 0; k < apps.size() && !runs; ++k) {
      if (s.gpus > group_gpus[k]) continue;
      const AppModel* app = s.app_on(int(k));
      runs = app->execute(s.gpus, 0, s.batch).has_value();
      if (!runs && !cannot)
        cannot = InputError(path, r.line, "batch_size",
                            fmt::format("job '{}': {} cannot run global batch {} on {} GPUs{}: no timed step covers it "
                                        "({}on one GPU per-GPU batches {}..{} are timed, global batches up to {}; a "
                                        "placement of {} GPUs may time fewer, or none)",
                                        r.name, r.application, s.batch, s.gpus,
                                        apps.size() > 1 ? " of any node group" : "",
                                        apps.size() > 1 ? fmt::format("node group {}: ", k + 1) : "", app->min_local(),
                                        app->max_local(), app->max_batch(), s.gpus));
    }
    if (runs) cannot.reset();
    else if (!cannot)
      cannot = InputError(path, r.line, "num_replicas",
                          fmt::format("job '{}' needs {} GPUs but {} has {} (--skip-unrunnable leaves such jobs out)",
                                      r.name, s.gpus,
                                      apps.size() > 1 ? std::string("the largest node group") : std::string("the cluster"),
                                      group_gpus[largest]));
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
